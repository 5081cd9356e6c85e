//! Node selector terms as `component-helpers/nodeaffinity` parses and matches them: label
//! expressions (with `Gt`/`Lt`) ANDed with `metadata.name` field requirements; a term that failed
//! to parse never matches.

use crate::api::{NodeSelectorRequirement, NodeSelectorTerm, StringMap};
use crate::selector::{Selector, join_errors};

/// One `matchFields` requirement: `In` or `NotIn` with exactly one value.
#[derive(Debug, Clone, PartialEq)]
struct FieldRequirement {
    key: String,
    value: String,
    equal: bool,
}

impl FieldRequirement {
    /// The only node field is `metadata.name`; any other key reads as "".
    fn matches(&self, node_name: &str) -> bool {
        let field = if self.key == "metadata.name" {
            node_name
        } else {
            ""
        };
        (field == self.value) == self.equal
    }
}

/// A parsed `NodeSelectorTerm`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedTerm {
    labels: Option<Selector>,
    fields: Option<Vec<FieldRequirement>>,
    error: Option<String>,
}

fn parse_fields(reqs: &[NodeSelectorRequirement]) -> Result<Vec<FieldRequirement>, String> {
    let mut out = Vec::new();
    let mut errs = Vec::new();
    for (i, r) in reqs.iter().enumerate() {
        let equal = match r.operator.as_str() {
            "In" => true,
            "NotIn" => false,
            other => {
                errs.push(format!("[{i}].operator: Unsupported value: {other:?}: supported values: \"In\", \"NotIn\""));
                continue;
            }
        };
        match r.values.as_slice() {
            [v] => out.push(FieldRequirement {
                key: r.key.clone(),
                value: v.clone(),
                equal,
            }),
            vs => errs.push(format!(
                "[{i}].values: Invalid value: {vs:?}: must have one element"
            )),
        }
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        Err(join_errors(errs))
    }
}

impl ParsedTerm {
    /// `newNodeSelectorTerm`: parse errors are kept and make the term non-matching.
    pub fn parse(term: &NodeSelectorTerm) -> ParsedTerm {
        let mut errs = Vec::new();
        let mut labels = None;
        let mut fields = None;
        if !term.match_expressions.is_empty() {
            match Selector::from_node_requirements(&term.match_expressions) {
                Ok(s) => labels = Some(s),
                Err(e) => errs.push(format!("matchExpressions{e}")),
            }
        }
        if !term.match_fields.is_empty() {
            match parse_fields(&term.match_fields) {
                Ok(f) => fields = Some(f),
                Err(e) => errs.push(format!("matchFields{e}")),
            }
        }
        let error = if errs.is_empty() {
            None
        } else {
            Some(join_errors(errs))
        };
        ParsedTerm {
            labels,
            fields,
            error,
        }
    }

    /// The parse error, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// `nodeSelectorTerm.match`: false on a parse error; fields are only checked for a named node.
    pub fn matches(&self, node_name: &str, labels: &StringMap) -> bool {
        if self.error.is_some() {
            return false;
        }
        if self.labels.as_ref().is_some_and(|s| !s.matches(labels)) {
            return false;
        }
        let fields_fail = self
            .fields
            .as_ref()
            .is_some_and(|f| !f.iter().all(|r| r.matches(node_name)));
        !fields_fail || node_name.is_empty()
    }
}

/// True for a term with neither expressions nor fields (such terms are dropped).
pub fn is_empty_term(term: &NodeSelectorTerm) -> bool {
    term.match_expressions.is_empty() && term.match_fields.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    fn labels(p: &[(&str, &str)]) -> StringMap {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn expressions_and_fields_are_anded() {
        let t = ParsedTerm::parse(&NodeSelectorTerm {
            match_expressions: vec![req("zone", "In", &["a"])],
            match_fields: vec![req("metadata.name", "In", &["n1"])],
        });
        assert!(t.matches("n1", &labels(&[("zone", "a")])));
        assert!(!t.matches("n2", &labels(&[("zone", "a")])));
        assert!(!t.matches("n1", &labels(&[("zone", "b")])));
    }

    #[test]
    fn field_requirements_on_other_keys_read_an_empty_field() {
        let not_in = ParsedTerm::parse(&NodeSelectorTerm {
            match_fields: vec![req("metadata.uid", "NotIn", &["x"])],
            ..Default::default()
        });
        assert!(not_in.matches("n1", &labels(&[])));
        let is_in = ParsedTerm::parse(&NodeSelectorTerm {
            match_fields: vec![req("spec.x", "In", &["x"])],
            ..Default::default()
        });
        assert!(!is_in.matches("n1", &labels(&[])));
    }

    #[test]
    fn a_term_with_a_parse_error_never_matches() {
        let t = ParsedTerm::parse(&NodeSelectorTerm {
            match_expressions: vec![req("zone", "Exists", &["a"])],
            ..Default::default()
        });
        assert!(t.error().is_some());
        assert!(!t.matches("n1", &labels(&[("zone", "a")])));
        let f = ParsedTerm::parse(&NodeSelectorTerm {
            match_fields: vec![req("metadata.name", "In", &["a", "b"])],
            ..Default::default()
        });
        assert!(f.error().unwrap().contains("must have one element"));
    }
}
