//! Label selectors and node selector terms, as Kubernetes evaluates them.

use std::collections::BTreeMap;

use crate::api::{LabelSelector, NodeSelectorRequirement, NodeSelectorTerm};

/// `metav1.LabelSelector` semantics: every `matchLabels` pair and every expression must hold.
/// An empty selector matches everything.
pub fn matches_label_selector(sel: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    sel.match_labels
        .iter()
        .all(|(k, v)| labels.get(k) == Some(v))
        && sel.match_expressions.iter().all(|e| {
            let val = labels.get(&e.key);
            match e.operator.as_str() {
                "In" => val.is_some_and(|v| e.values.contains(v)),
                "NotIn" => val.is_none_or(|v| !e.values.contains(v)),
                "Exists" => val.is_some(),
                "DoesNotExist" => val.is_none(),
                _ => false,
            }
        })
}

fn requirement_matches(r: &NodeSelectorRequirement, value: Option<&String>) -> bool {
    match r.operator.as_str() {
        "In" => value.is_some_and(|v| r.values.contains(v)),
        "NotIn" => value.is_none_or(|v| !r.values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), [bound]) = (value, r.values.as_slice()) else {
                return false;
            };
            let (Ok(v), Ok(b)) = (v.parse::<i64>(), bound.parse::<i64>()) else {
                return false;
            };
            if r.operator == "Gt" { v > b } else { v < b }
        }
        _ => false,
    }
}

/// A `NodeSelectorTerm`: expressions and fields are ANDed; a term with neither matches nothing.
pub fn node_selector_term_matches(
    term: &NodeSelectorTerm,
    node_name: &str,
    labels: &BTreeMap<String, String>,
) -> bool {
    if term.match_expressions.is_empty() && term.match_fields.is_empty() {
        return false;
    }
    let name = node_name.to_string();
    term.match_expressions
        .iter()
        .all(|r| requirement_matches(r, labels.get(&r.key)))
        && term
            .match_fields
            .iter()
            .all(|r| r.key == "metadata.name" && requirement_matches(r, Some(&name)))
}

/// Terms are ORed.
pub fn node_selector_terms_match(
    terms: &[NodeSelectorTerm],
    node_name: &str,
    labels: &BTreeMap<String, String>,
) -> bool {
    terms
        .iter()
        .any(|t| node_selector_term_matches(t, node_name, labels))
}

/// Full-string regular-expression match (an invalid pattern matches nothing).
pub fn regex_match(pattern: &str, text: &str) -> bool {
    regex::Regex::new(pattern).is_ok_and(|re| re.is_match(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::LabelSelectorRequirement;

    fn labels(p: &[(&str, &str)]) -> BTreeMap<String, String> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn label_selector_operators() {
        let sel = LabelSelector {
            match_labels: labels(&[("app", "a")]),
            match_expressions: vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "NotIn".into(),
                values: vec!["db".into()],
            }],
        };
        assert!(matches_label_selector(&sel, &labels(&[("app", "a")])));
        assert!(!matches_label_selector(
            &sel,
            &labels(&[("app", "a"), ("tier", "db")])
        ));
        assert!(matches_label_selector(
            &LabelSelector::default(),
            &labels(&[])
        ));
    }

    #[test]
    fn node_term_gt_lt_and_fields() {
        let term = NodeSelectorTerm {
            match_expressions: vec![NodeSelectorRequirement {
                key: "n".into(),
                operator: "Gt".into(),
                values: vec!["3".into()],
            }],
            match_fields: vec![NodeSelectorRequirement {
                key: "metadata.name".into(),
                operator: "In".into(),
                values: vec!["node-1".into()],
            }],
        };
        assert!(node_selector_term_matches(
            &term,
            "node-1",
            &labels(&[("n", "4")])
        ));
        assert!(!node_selector_term_matches(
            &term,
            "node-1",
            &labels(&[("n", "3")])
        ));
        assert!(!node_selector_term_matches(
            &term,
            "node-2",
            &labels(&[("n", "4")])
        ));
        assert!(!node_selector_term_matches(
            &NodeSelectorTerm::default(),
            "x",
            &labels(&[])
        ));
    }
}
