//! Kubernetes manifests: multi-document YAML, a JSON stream, or a `List` (`kind: List` with
//! `items`, as `kubectl get -o yaml|json` writes it), read into cluster objects by `kind`.

mod admission;
mod compressed;
mod documents;
mod field_path;
pub mod limits;
mod objects;
mod unique_names;

use std::io::{BufRead, Read};
use std::path::Path;

use serde_json::Value;
use tephra_engine::api::ClusterObject;

use crate::InputError;
pub use compressed::{ManifestWriter, open_reader};
pub use documents::parse_documents;
pub use field_path::failing_field;
pub use objects::{Decoded, decode, describe_object};
pub use unique_names::UniqueNames;

/// The objects of one or more manifests, and notes about what was left out.
#[derive(Debug, Default)]
pub struct Manifest {
    pub objects: Vec<ClusterObject>,
    /// One line per skipped document (`f.yaml: document 3: skipped Deployment ns/web`).
    pub skipped: Vec<String>,
    /// Where each object so far came from, so a second object of the same name is refused.
    names: UniqueNames,
}

/// Why a file without a single document is refused: most likely it is the wrong file.
pub const EMPTY_FILE: &str = "holds no objects: the file is empty or only comments";

/// Reads a file's text (decompressed when its name ends in `.gz`); the error names the file.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    let cannot_read = |e: std::io::Error| {
        InputError::new(path.display().to_string(), format!("cannot read: {e}"))
    };
    let mut text = String::new();
    open_reader(path)
        .and_then(|mut r| r.read_to_string(&mut text))
        .map_err(cannot_read)?;
    Ok(text)
}

/// Loads the manifest file at `path` (plain or `.gz`). A JSON stream is decoded object by
/// object as it is read, so only the decoded objects are held in memory. A file without a
/// document is refused.
pub fn load_file(path: &Path) -> Result<Manifest, InputError> {
    let origin = path.display().to_string();
    let reader =
        open_reader(path).map_err(|e| InputError::new(&origin, format!("cannot read: {e}")))?;
    load_reader(reader, &origin)
}

/// Loads a manifest from `reader`, as `load_file` does a file's bytes; `origin` names it in
/// errors and notes.
pub fn load_reader(mut reader: impl BufRead, origin: &str) -> Result<Manifest, InputError> {
    let cannot_read = |e: std::io::Error| InputError::new(origin, format!("cannot read: {e}"));
    let first = loop {
        let buf = reader.fill_buf().map_err(cannot_read)?;
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => break Some(buf[i]),
            None if buf.is_empty() => break None,
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    };
    if first.is_none() {
        return Err(InputError::new(origin, EMPTY_FILE));
    }
    if first != Some(b'{') {
        let mut text = String::new();
        reader.read_to_string(&mut text).map_err(cannot_read)?;
        let documents = parse_documents(&text, origin)?;
        if documents.is_empty() {
            return Err(InputError::new(origin, EMPTY_FILE));
        }
        return decode_documents(documents, origin);
    }
    let mut manifest = Manifest::default();
    for (i, doc) in serde_json::Deserializer::from_reader(reader)
        .into_iter::<Value>()
        .enumerate()
    {
        let doc = doc.map_err(|e| InputError::new(origin, format!("invalid JSON: {e}")))?;
        manifest.decode_document(i, doc, origin)?;
    }
    Ok(manifest)
}

/// Parses manifest text; `origin` names it in errors and notes.
pub fn parse_manifest(text: &str, origin: &str) -> Result<Manifest, InputError> {
    decode_documents(parse_documents(text, origin)?, origin)
}

/// Decodes already-split documents, expanding lists.
pub fn decode_documents(documents: Vec<Value>, origin: &str) -> Result<Manifest, InputError> {
    let mut manifest = Manifest::default();
    for (i, doc) in documents.into_iter().enumerate() {
        manifest.decode_document(i, doc, origin)?;
    }
    Ok(manifest)
}

/// A document is one object or a list of them.
enum Shape {
    Single(Value),
    /// `kind: List`, or a typed list such as `PodList` whose items may omit their `kind`.
    List {
        items: Vec<Value>,
        item_kind: Option<String>,
    },
}

impl Shape {
    fn of(mut doc: Value, origin: &str, location: &str) -> Result<Shape, InputError> {
        let is_list =
            |k: &&str| *k == "List" || (k.ends_with("List") && doc.get("items").is_some());
        let Some(kind) = doc
            .get("kind")
            .and_then(Value::as_str)
            .filter(is_list)
            .map(str::to_string)
        else {
            return Ok(Shape::Single(doc));
        };
        let item_kind = kind
            .strip_suffix("List")
            .filter(|k| !k.is_empty())
            .map(str::to_string);
        let items = match doc.get_mut("items").map(Value::take) {
            Some(Value::Array(items)) => items,
            None | Some(Value::Null) => Vec::new(),
            Some(_) => {
                return Err(InputError::new(origin, "must be a sequence")
                    .at(location)
                    .object(&kind)
                    .field("items"));
            }
        };
        Ok(Shape::List { items, item_kind })
    }
}

impl Manifest {
    /// Decodes document `i` of `origin`, expanding a list.
    fn decode_document(&mut self, i: usize, doc: Value, origin: &str) -> Result<(), InputError> {
        let location = format!("document {i}");
        match Shape::of(doc, origin, &location)? {
            Shape::Single(doc) => {
                self.add(decode(&doc, None, origin, &location)?, origin, &location)?;
            }
            Shape::List { items, item_kind } => {
                for (j, item) in items.into_iter().enumerate() {
                    let location = format!("{location} items[{j}]");
                    self.add(
                        decode(&item, item_kind.as_deref(), origin, &location)?,
                        origin,
                        &location,
                    )?;
                }
            }
        }
        Ok(())
    }

    fn add(&mut self, decoded: Decoded, origin: &str, location: &str) -> Result<(), InputError> {
        match decoded {
            Decoded::Object(o) => {
                self.names
                    .admit(&o, &format!("{origin}: {location}"))
                    .map_err(|message| {
                        InputError::new(origin, message)
                            .at(location)
                            .object(describe_object(&o))
                    })?;
                self.objects.push(o);
            }
            Decoded::Skipped(what) => self
                .skipped
                .push(format!("{origin}: {location}: skipped {what}")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_cache::{ObjectKind, meta_of};

    fn kinds_and_names(m: &Manifest) -> Vec<String> {
        m.objects
            .iter()
            .map(|o| format!("{} {}", ObjectKind::of(o), meta_of(o).name))
            .collect()
    }

    #[test]
    fn multi_document_yaml_keeps_document_order_and_notes_skips() {
        let text = "kind: Node\nmetadata: {name: n1}\n---\nkind: ConfigMap\nmetadata: {name: cm, namespace: ns}\n---\nkind: Pod\nmetadata: {name: p}\n";
        let m = parse_manifest(text, "f.yaml").unwrap();
        assert_eq!(kinds_and_names(&m), ["Node n1", "Pod p"]);
        assert_eq!(m.skipped, ["f.yaml: document 1: skipped ConfigMap ns/cm"]);
    }

    #[test]
    fn kubectl_yaml_list_is_expanded() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n- kind: Pod\n  metadata: {name: p, namespace: ns}\n";
        assert_eq!(
            kinds_and_names(&parse_manifest(text, "f.yaml").unwrap()),
            ["Node n1", "Pod p"]
        );
    }

    #[test]
    fn kubectl_json_list_is_expanded() {
        let text = r#"{"apiVersion": "v1", "kind": "List", "items": [{"kind": "Queue", "metadata": {"name": "q"}}]}"#;
        assert_eq!(
            kinds_and_names(&parse_manifest(text, "f.json").unwrap()),
            ["Queue q"]
        );
    }

    #[test]
    fn typed_list_items_take_the_list_kind() {
        let text = r#"{"kind": "NodeList", "items": [{"metadata": {"name": "n1"}}, {"metadata": {"name": "n2"}}]}"#;
        assert_eq!(
            kinds_and_names(&parse_manifest(text, "f.json").unwrap()),
            ["Node n1", "Node n2"]
        );
    }

    #[test]
    fn error_in_a_list_item_names_the_item() {
        let text = "kind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n- kind: Pod\n  metadata: {name: p, namespace: ns}\n  spec: {priority: high}\n";
        let e = parse_manifest(text, "f.yaml").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "f.yaml: document 0 items[1]: Pod ns/p: field spec.priority: invalid type"
            ),
            "{e}"
        );
    }

    #[test]
    fn list_items_of_the_wrong_shape_are_refused() {
        let e = parse_manifest("kind: List\nitems: 3\n", "f.yaml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "f.yaml: document 0: List: field items: must be a sequence"
        );
    }

    #[test]
    fn a_second_pod_of_the_same_name_is_refused_naming_both_places() {
        let text = "kind: Pod\nmetadata: {name: p, namespace: ns}\n---\nkind: Pod\nmetadata: {name: p, namespace: ns}\n";
        assert_eq!(
            parse_manifest(text, "f.yaml").unwrap_err().to_string(),
            "f.yaml: document 1: Pod ns/p: duplicate name: f.yaml: document 0 already has this Pod (names are unique per kind and namespace, as in a cluster)"
        );
    }

    #[test]
    fn empty_file_has_no_objects() {
        let m = parse_manifest("", "f.yaml").unwrap();
        assert!(m.objects.is_empty() && m.skipped.is_empty());
    }

    #[test]
    fn a_file_without_documents_is_refused_by_name() {
        let dir = crate::test_dir::TestDir::new(&[("e.yaml", "# nothing\n"), ("w.json", " \n")]);
        for name in ["e.yaml", "w.json"] {
            let e = load_file(&dir.join(name)).unwrap_err().to_string();
            assert!(e.ends_with(&format!("{name}: {EMPTY_FILE}")), "{e}");
        }
    }

    #[test]
    fn unreadable_file_is_named() {
        let e = load_file(Path::new("/nonexistent/x.yaml"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/nonexistent/x.yaml: cannot read:"), "{e}");
    }
}
