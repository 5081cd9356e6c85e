//! Splitting a file into documents: a JSON stream (what `kubectl get -o json` writes) or
//! multi-document YAML, each document as a JSON value.

use serde_json::Value;

use super::limits::{describe_breach, yaml_budget};
use crate::InputError;

/// The documents of `text`; empty YAML documents are skipped. YAML booleans are YAML 1.2's
/// `true`/`false` only, so a node named `n` or a label `on` stays a string. YAML is parsed
/// under the limits of `limits`, and a breach names the limit.
pub fn parse_documents(text: &str, origin: &str) -> Result<Vec<Value>, InputError> {
    if text.trim_start().starts_with('{') {
        serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .collect::<Result<_, _>>()
            .map_err(|e| InputError::new(origin, format!("invalid JSON: {e}")))
    } else {
        let mut options = serde_saphyr::Options::default();
        options.strict_booleans = true;
        options.budget = Some(yaml_budget());
        serde_saphyr::from_multiple_with_options::<Value>(text, options)
            .map_err(|e| yaml_error(&e, origin))
    }
}

/// A parser error on one line; a budget breach says which limit, and where it was reached.
fn yaml_error(e: &serde_saphyr::Error, origin: &str) -> InputError {
    match e.without_snippet() {
        serde_saphyr::Error::Budget { breach, location } => {
            let err = InputError::new(origin, describe_breach(breach));
            match location.line() {
                0 => err,
                line => err.at(format!("line {line}")),
            }
        }
        _ => InputError::new(origin, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_documents_are_split_and_empty_ones_skipped() {
        let docs = parse_documents("---\nkind: Node\n---\n---\nkind: Pod\n", "f.yaml").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["kind"], "Pod");
    }

    #[test]
    fn yaml_1_1_boolean_spellings_stay_strings() {
        let docs = parse_documents("name: n\nlabel: on\nflag: true\n", "f.yaml").unwrap();
        assert_eq!(
            docs[0],
            serde_json::json!({"name": "n", "label": "on", "flag": true})
        );
    }

    #[test]
    fn more_yaml_nodes_and_documents_than_the_parsers_defaults_are_read() {
        let items = "- {kind: Pod, metadata: {name: p}}\n".repeat(40_000);
        let docs = parse_documents(&format!("kind: List\nitems:\n{items}"), "f.yaml").unwrap();
        assert_eq!(docs[0]["items"].as_array().map(Vec::len), Some(40_000));
        let many = "---\nkind: Node\n".repeat(2_000);
        assert_eq!(parse_documents(&many, "f.yaml").unwrap().len(), 2_000);
    }

    #[test]
    fn a_breached_yaml_limit_is_named_with_its_value_on_one_line() {
        let deep = format!("kind: Pod\nspec: {}{}\n", "[".repeat(70), "]".repeat(70));
        let e = parse_documents(&deep, "f.yaml").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "f.yaml: line 2: mappings and sequences nested more than 64 deep (the limit"
            ),
            "{e}"
        );
        assert!(!e.contains("Depth {"), "{e}");
    }

    #[test]
    fn json_stream_is_read_as_json() {
        let docs = parse_documents("{\"kind\": \"Node\"}\n{\"kind\": \"Pod\"}", "f.json").unwrap();
        assert_eq!(docs.len(), 2);
    }

    #[test]
    fn yaml_syntax_error_names_file_and_line() {
        let e = parse_documents("kind: Pod\nmetadata: [\n", "f.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f.yaml: line 2"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn json_syntax_error_names_file_and_line() {
        let e = parse_documents("{\"kind\": \"Pod\",\n}", "f.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f.json: invalid JSON:"), "{e}");
        assert!(e.contains("line 2"), "{e}");
    }
}
