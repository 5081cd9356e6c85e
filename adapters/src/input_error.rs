//! A refused input file, object or flag, reported on one line that names the culprit.

use std::fmt;

/// Where bad input is and what is wrong with it, from the outermost place inwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file (or flag) the input came from.
    pub origin: String,
    /// The place inside it: `document 2`, `document 0 items[3]`, `objects[4]`, `schedulerConf`.
    pub location: Option<String>,
    /// The object: `Pod ns/name`.
    pub object: Option<String>,
    /// The field inside the object: `spec.containers[0].resources.requests.cpu`.
    pub field: Option<String>,
    pub message: String,
}

impl InputError {
    /// An error about `origin` as a whole; multi-line messages are folded onto one line.
    pub fn new(origin: impl Into<String>, message: impl fmt::Display) -> Self {
        InputError {
            origin: origin.into(),
            location: None,
            object: None,
            field: None,
            message: one_line(&message),
        }
    }

    /// Narrows the error to a place inside the origin.
    pub fn at(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// Names the object the error is about.
    pub fn object(mut self, object: impl Into<String>) -> Self {
        self.object = Some(object.into());
        self
    }

    /// Names the field the error is about.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

/// Folds a message onto one line: parser messages carry a source snippet after the first line,
/// and the location is reported separately.
fn one_line(message: &dyn fmt::Display) -> String {
    let text = message.to_string();
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        for part in [&self.location, &self.object].into_iter().flatten() {
            write!(f, ": {part}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_every_known_part_in_order() {
        let e = InputError::new("c.yaml", "bad quantity")
            .at("document 2")
            .object("Pod ns/p")
            .field("spec.containers[0].resources.requests.cpu");
        assert_eq!(
            e.to_string(),
            "c.yaml: document 2: Pod ns/p: field spec.containers[0].resources.requests.cpu: bad quantity"
        );
    }

    #[test]
    fn parser_snippets_are_folded_away() {
        let e = InputError::new(
            "c.yaml",
            "error: line 2 column 11: unclosed bracket\n --> <input>:2:11\n  |\n",
        );
        assert_eq!(e.to_string(), "c.yaml: line 2 column 11: unclosed bracket");
    }
}
