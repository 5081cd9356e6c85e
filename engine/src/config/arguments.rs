//! Plugin and action arguments: Volcano's string-keyed map with typed getters.
//!
//! A getter answers a wrongly typed value with an error naming the key; the configuration check
//! (`framework::check_config`) then drops that key and names it, so the plugin keeps its default
//! as in Volcano and the operator is told. A number written as a string (`"2"`) is accepted
//! where a number is expected.

use std::collections::BTreeMap;

use serde_json::Value;

/// A refused argument value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("argument {key}: {reason} (got {value})")]
pub struct ArgumentError {
    pub key: String,
    pub value: String,
    pub reason: String,
}

/// Arguments of one plugin or action.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Arguments(pub BTreeMap<String, Value>);

impl Arguments {
    /// Wraps a map.
    pub fn new(map: BTreeMap<String, Value>) -> Self {
        Arguments(map)
    }

    fn err(&self, key: &str, v: &Value, reason: &str) -> ArgumentError {
        ArgumentError {
            key: key.to_string(),
            value: v.to_string(),
            reason: reason.to_string(),
        }
    }

    /// The raw value.
    pub fn raw(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// An integer (`GetInt`): integer literals only (`1.0` is refused).
    pub fn int(&self, key: &str) -> Result<Option<i64>, ArgumentError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        match v {
            Value::Number(n) if n.is_i64() => Ok(n.as_i64()),
            Value::String(s) => s
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| self.err(key, v, "expected an integer")),
            _ => Err(self.err(key, v, "expected an integer")),
        }
    }

    /// A float (`GetFloat64`): floats or integers.
    pub fn float(&self, key: &str) -> Result<Option<f64>, ArgumentError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        match v {
            Value::Number(n) => Ok(n.as_f64()),
            Value::String(s) => s
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| self.err(key, v, "expected a number")),
            _ => Err(self.err(key, v, "expected a number")),
        }
    }

    /// A boolean (`GetBool`): a bool or a string Go's `ParseBool` accepts.
    pub fn bool(&self, key: &str) -> Result<Option<bool>, ArgumentError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        match v {
            Value::Bool(b) => Ok(Some(*b)),
            Value::String(s) => crate::snapshot::parse_go_bool(s)
                .map(Some)
                .ok_or_else(|| self.err(key, v, "expected a boolean")),
            _ => Err(self.err(key, v, "expected a boolean")),
        }
    }

    /// A string (`GetString`).
    pub fn string(&self, key: &str) -> Result<Option<String>, ArgumentError> {
        let Some(v) = self.raw(key) else {
            return Ok(None);
        };
        match v {
            Value::String(s) => Ok(Some(s.clone())),
            _ => Err(self.err(key, v, "expected a string")),
        }
    }

    /// Takes a key out, so its reader falls back to the default; the value it had, if any.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.0.remove(key)
    }

    /// Every key, for plugins that take families of keys (`binpack.resources.<name>`).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(|k| k.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(yaml: &str) -> Arguments {
        Arguments(serde_saphyr::from_str(yaml).unwrap())
    }

    #[test]
    fn typed_getters_accept_their_types() {
        let a = args("i: 3\nf: 1.5\nb: true\ns: hello\nbs: 'F'\nis: '7'\n");
        assert_eq!(a.int("i").unwrap(), Some(3));
        assert_eq!(a.float("f").unwrap(), Some(1.5));
        assert_eq!(a.float("i").unwrap(), Some(3.0));
        assert_eq!(a.bool("b").unwrap(), Some(true));
        assert_eq!(a.bool("bs").unwrap(), Some(false));
        assert_eq!(a.string("s").unwrap(), Some("hello".into()));
        assert_eq!(a.int("is").unwrap(), Some(7));
        assert_eq!(a.int("missing").unwrap(), None);
    }

    #[test]
    fn wrong_types_are_errors_naming_the_key() {
        let a = args("w: abc\nf: 1.5\n");
        let e = a.int("w").unwrap_err();
        assert!(e.to_string().contains("argument w"), "{e}");
        assert!(a.int("f").is_err(), "1.5 is not an integer");
        assert!(a.bool("w").is_err());
    }
}
