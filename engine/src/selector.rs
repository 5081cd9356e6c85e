//! Label selectors as Kubernetes parses them (`metav1.LabelSelectorAsSelector`,
//! `labels.NewRequirement`): invalid keys, values or operators are parse errors, a nil selector
//! selects nothing and an empty one selects everything. The kube plugins need the strict parse
//! because a parse error changes the outcome (a refused pod, a failed score, a dropped term);
//! elsewhere (PDBs, sub-group policies, hyper-node members) a selector that does not parse
//! selects nothing, as in Volcano.

use std::collections::BTreeMap;

use crate::api::{LabelSelector, NodeSelectorRequirement, StringMap};

/// A requirement operator (`selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
}

/// One parsed `key op values` requirement.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    pub key: String,
    pub op: Operator,
    pub values: Vec<String>,
}

impl Requirement {
    /// `labels.NewRequirement`: validates the key, the value count for the operator and every value.
    pub fn new(key: &str, op: Operator, values: &[String]) -> Result<Requirement, String> {
        let mut errs = Vec::new();
        if let Err(e) = validate_label_key(key) {
            errs.push(format!("key: Invalid value: {key:?}: {e}"));
        }
        match op {
            Operator::In | Operator::NotIn if values.is_empty() => {
                errs.push("values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty".into());
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                errs.push(format!(
                    "values: Invalid value: {values:?}: values set must be empty for exists and does not exist"
                ));
            }
            Operator::Gt | Operator::Lt => {
                if values.len() != 1 {
                    errs.push(format!(
                        "values: Invalid value: {values:?}: for 'Gt', 'Lt' operators, exactly one value is required"
                    ));
                }
                for v in values.iter().filter(|v| v.parse::<i64>().is_err()) {
                    errs.push(format!(
                        "values: Invalid value: {v:?}: for 'Gt', 'Lt' operators, the value must be an integer"
                    ));
                }
            }
            _ => {}
        }
        for v in values {
            if let Err(e) = validate_label_value(v) {
                errs.push(format!("values[{key}]: Invalid value: {v:?}: {e}"));
            }
        }
        if errs.is_empty() {
            Ok(Requirement {
                key: key.to_string(),
                op,
                values: values.to_vec(),
            })
        } else {
            Err(join_errors(errs))
        }
    }

    /// `Requirement.Matches`.
    pub fn matches(&self, labels: &StringMap) -> bool {
        let value = labels.get(&self.key);
        match self.op {
            Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::Gt | Operator::Lt => {
                let (Some(v), [bound]) = (value, self.values.as_slice()) else {
                    return false;
                };
                let (Ok(v), Ok(bound)) = (v.parse::<i64>(), bound.parse::<i64>()) else {
                    return false;
                };
                if self.op == Operator::Gt {
                    v > bound
                } else {
                    v < bound
                }
            }
        }
    }
}

/// A parsed selector: `Nothing` (from a nil selector) or requirements that must all hold (none:
/// everything).
#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    Nothing,
    All(Vec<Requirement>),
}

impl Selector {
    /// `metav1.LabelSelectorAsSelector`.
    pub fn from_label_selector(sel: Option<&LabelSelector>) -> Result<Selector, String> {
        let Some(sel) = sel else {
            return Ok(Selector::Nothing);
        };
        let mut reqs = Vec::new();
        for (k, v) in &sel.match_labels {
            reqs.push(Requirement::new(k, Operator::In, std::slice::from_ref(v))?);
        }
        for e in &sel.match_expressions {
            let op = match e.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => return Err(format!("{other:?} is not a valid label selector operator")),
            };
            reqs.push(Requirement::new(&e.key, op, &e.values)?);
        }
        Ok(Selector::All(reqs))
    }

    /// `labels.SelectorFromSet`: equality requirements, not validated.
    pub fn from_set(set: &BTreeMap<String, String>) -> Selector {
        Selector::All(
            set.iter()
                .map(|(k, v)| Requirement {
                    key: k.clone(),
                    op: Operator::In,
                    values: vec![v.clone()],
                })
                .collect(),
        )
    }

    /// `nodeSelectorRequirementsAsSelector`: a node selector term's `matchExpressions`; all errors
    /// are collected.
    pub fn from_node_requirements(reqs: &[NodeSelectorRequirement]) -> Result<Selector, String> {
        if reqs.is_empty() {
            return Ok(Selector::Nothing);
        }
        let mut out = Vec::new();
        let mut errs = Vec::new();
        for (i, r) in reqs.iter().enumerate() {
            let op = match r.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                "Gt" => Operator::Gt,
                "Lt" => Operator::Lt,
                other => {
                    errs.push(format!(
                        "[{i}].operator: Unsupported value: {other:?}: supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\""
                    ));
                    continue;
                }
            };
            match Requirement::new(&r.key, op, &r.values) {
                Ok(req) => out.push(req),
                Err(e) => errs.push(format!("[{i}].{e}")),
            }
        }
        if errs.is_empty() {
            Ok(Selector::All(out))
        } else {
            Err(join_errors(errs))
        }
    }

    /// `Selector.Matches`.
    pub fn matches(&self, labels: &StringMap) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::All(reqs) => reqs.iter().all(|r| r.matches(labels)),
        }
    }

    /// `Selector.Empty()`: true only for a selector without requirements (`{}`).
    pub fn is_empty(&self) -> bool {
        matches!(self, Selector::All(reqs) if reqs.is_empty())
    }

    /// `mergeLabelSetWithSelector`: the pod's `matchLabelKeys` values become extra equality
    /// requirements; `Nothing` stays `Nothing`.
    pub fn with_labels(self, set: &BTreeMap<String, String>) -> Selector {
        match self {
            Selector::Nothing => Selector::Nothing,
            Selector::All(reqs) => {
                let Selector::All(mut merged) = Selector::from_set(set) else {
                    return Selector::Nothing;
                };
                merged.extend(reqs);
                Selector::All(merged)
            }
        }
    }
}

/// Joins several errors the way an aggregate error prints them.
pub fn join_errors(errs: Vec<String>) -> String {
    if errs.len() == 1 {
        errs.into_iter().collect()
    } else {
        format!("[{}]", errs.join(", "))
    }
}

const NAME_MAX: usize = 63;
const SUBDOMAIN_MAX: usize = 253;

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_alphanumeric();
    !b.is_empty()
        && alnum(&b[0])
        && alnum(&b[b.len() - 1])
        && b.iter()
            .all(|c| alnum(c) || matches!(c, b'-' | b'_' | b'.'))
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`, at most 253 bytes.
fn is_dns1123_subdomain(s: &str) -> bool {
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        let lower_alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty()
            && lower_alnum(&b[0])
            && lower_alnum(&b[b.len() - 1])
            && b.iter().all(|c| lower_alnum(c) || *c == b'-')
    };
    s.len() <= SUBDOMAIN_MAX && s.split('.').all(label_ok)
}

/// `content.IsLabelKey`: an optional DNS-subdomain prefix and `/`, then a name of at most 63.
pub fn validate_label_key(key: &str) -> Result<(), String> {
    let parts: Vec<&str> = key.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                return Err("prefix part must be non-empty".into());
            }
            if !is_dns1123_subdomain(prefix) {
                return Err("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character".into());
            }
            *name
        }
        _ => {
            return Err("a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into());
        }
    };
    if name.is_empty() {
        return Err("name part must be non-empty".into());
    }
    if name.len() > NAME_MAX {
        return Err(format!(
            "name part must be no more than {NAME_MAX} characters"
        ));
    }
    if !is_qualified_name_part(name) {
        return Err("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character".into());
    }
    Ok(())
}

/// `content.IsLabelValue`: empty, or a name of at most 63.
pub fn validate_label_value(value: &str) -> Result<(), String> {
    if value.len() > NAME_MAX {
        return Err(format!("must be no more than {NAME_MAX} characters"));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        return Err("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::LabelSelectorRequirement;

    fn labels<M: FromIterator<(String, String)>>(p: &[(&str, &str)]) -> M {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn nil_selector_matches_nothing_and_empty_selector_matches_everything() {
        let none = Selector::from_label_selector(None).unwrap();
        assert!(!none.matches(&labels(&[])));
        assert!(!none.is_empty());
        let all = Selector::from_label_selector(Some(&LabelSelector::default())).unwrap();
        assert!(all.matches(&labels(&[("a", "b")])));
        assert!(all.is_empty());
    }

    #[test]
    fn match_labels_and_expressions_are_anded() {
        let sel = LabelSelector {
            match_labels: labels(&[("app", "web")]),
            match_expressions: vec![expr("tier", "NotIn", &["db"]), expr("env", "Exists", &[])],
        };
        let s = Selector::from_label_selector(Some(&sel)).unwrap();
        assert!(s.matches(&labels(&[("app", "web"), ("env", "x")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("env", "x"), ("tier", "db")])));
        assert!(!s.matches(&labels(&[("app", "web")])));
    }

    #[test]
    fn invalid_operator_key_or_value_count_is_a_parse_error() {
        let bad_op = LabelSelector {
            match_expressions: vec![expr("a", "Gt", &["1"])],
            ..Default::default()
        };
        assert!(
            Selector::from_label_selector(Some(&bad_op))
                .unwrap_err()
                .contains("not a valid label selector operator")
        );
        let empty_in = LabelSelector {
            match_expressions: vec![expr("a", "In", &[])],
            ..Default::default()
        };
        assert!(Selector::from_label_selector(Some(&empty_in)).is_err());
        let bad_key = LabelSelector {
            match_labels: labels(&[("-bad", "x")]),
            ..Default::default()
        };
        assert!(Selector::from_label_selector(Some(&bad_key)).is_err());
        let bad_value = LabelSelector {
            match_labels: labels(&[("k", "a b")]),
            ..Default::default()
        };
        assert!(Selector::from_label_selector(Some(&bad_value)).is_err());
    }

    #[test]
    fn label_keys_accept_a_dns_prefix() {
        assert!(validate_label_key("kubernetes.io/hostname").is_ok());
        assert!(validate_label_key("zone").is_ok());
        assert!(
            validate_label_key("Example.com/x").is_err(),
            "prefix must be lower case"
        );
        assert!(validate_label_key("a/b/c").is_err());
        assert!(validate_label_key("/x").is_err());
        assert!(validate_label_key(&"x".repeat(64)).is_err());
    }

    #[test]
    fn gt_and_lt_compare_integers_strictly() {
        let r = Requirement::new("n", Operator::Gt, &["3".to_string()]).unwrap();
        assert!(r.matches(&labels(&[("n", "4")])));
        assert!(!r.matches(&labels(&[("n", "3")])));
        assert!(!r.matches(&labels(&[("n", "x")])));
        assert!(Requirement::new("n", Operator::Lt, &["x".to_string()]).is_err());
    }

    #[test]
    fn match_label_keys_extend_a_selector_but_not_nothing() {
        let set = labels(&[("rev", "1")]);
        let s = Selector::All(Vec::new()).with_labels(&set);
        assert!(!s.is_empty());
        assert!(s.matches(&labels(&[("rev", "1")])));
        assert!(!s.matches(&labels(&[("rev", "2")])));
        assert_eq!(Selector::Nothing.with_labels(&set), Selector::Nothing);
    }
}
