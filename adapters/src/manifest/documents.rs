//! Splitting a file into documents: a JSON stream (what `kubectl get -o json` writes) or
//! multi-document YAML, each document as a JSON value.

use serde_json::Value;

use crate::InputError;

/// The documents of `text`; empty YAML documents are skipped. YAML booleans are YAML 1.2's
/// `true`/`false` only, so a node named `n` or a label `on` stays a string.
pub fn parse_documents(text: &str, origin: &str) -> Result<Vec<Value>, InputError> {
    if text.trim_start().starts_with('{') {
        serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .collect::<Result<_, _>>()
            .map_err(|e| InputError::new(origin, format!("invalid JSON: {e}")))
    } else {
        let options = serde_saphyr::options! { strict_booleans: true };
        serde_saphyr::from_multiple_with_options::<Value>(text, options)
            .map_err(|e| InputError::new(origin, e))
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
