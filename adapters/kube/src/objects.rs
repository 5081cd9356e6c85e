//! API objects into cache objects: the JSON the API server sends, decoded into the engine's
//! stripped types by the same code that reads manifests, and the responsibility filters of
//! Volcano's cache (Volcano: pkg/scheduler/cache/cache.go and util.go, responsibleForPod).

use serde_json::Value;
use tephra_adapters::manifest::{Decoded, decode};
use tephra_cache::ObjectKind;
use tephra_engine::api::{ClusterObject, Node, Pod};

/// An object as the API server holds it, kept for writes that send the whole object back
/// (PodGroup update, pod and queue status updates). `managedFields` are dropped.
pub type Raw = Value;

/// What a watched object turned into.
#[derive(Debug)]
pub struct Converted {
    pub object: ClusterObject,
    pub raw: Raw,
}

/// Decodes one watched object of `kind`; the error names the object and the field.
pub fn convert(kind: ObjectKind, mut value: Value) -> Result<Converted, String> {
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    match decode(value.clone(), Some(kind.name()), "watch", kind.name()) {
        Ok(Decoded::Object(object)) => Ok(Converted { object, raw: value }),
        Ok(Decoded::Skipped(what)) => Err(format!("unexpected object {what}")),
        Err(e) => Err(e.to_string()),
    }
}

/// Which objects this scheduler keeps, from its flags.
#[derive(Debug, Clone, Default)]
pub struct Responsibility {
    pub scheduler_names: Vec<String>,
    /// `--node-selector` pairs; empty keeps every node.
    pub node_selector: Vec<(String, String)>,
}

impl Responsibility {
    /// A pod is cached when one of our scheduler names schedules it, or when it is bound
    /// (other schedulers' pods still use node resources).
    pub fn keeps_pod(&self, pod: &Pod) -> bool {
        !pod.spec.node_name.is_empty() || self.scheduler_names.contains(&pod.spec.scheduler_name)
    }

    /// A node is cached when no selector is set or any of its labels equals any entry.
    pub fn keeps_node(&self, node: &Node) -> bool {
        self.node_selector.is_empty()
            || self
                .node_selector
                .iter()
                .any(|(k, v)| node.metadata.labels.get(k) == Some(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(scheduler: &str, node: &str) -> Pod {
        let mut p = Pod::default();
        p.spec.scheduler_name = scheduler.into();
        p.spec.node_name = node.into();
        p
    }

    #[test]
    fn pods_of_other_schedulers_are_kept_only_when_bound() {
        let r = Responsibility {
            scheduler_names: vec!["volcano".into()],
            ..Default::default()
        };
        assert!(r.keeps_pod(&pod("volcano", "")));
        assert!(!r.keeps_pod(&pod("default-scheduler", "")));
        assert!(r.keeps_pod(&pod("default-scheduler", "n1")));
    }

    #[test]
    fn node_selector_keeps_nodes_with_any_matching_label() {
        let r = Responsibility {
            node_selector: vec![("zone".into(), "a".into()), ("pool".into(), "x".into())],
            ..Default::default()
        };
        let mut n = Node::default();
        assert!(!r.keeps_node(&n));
        n.metadata.labels.insert("pool".into(), "x".into());
        assert!(r.keeps_node(&n));
        assert!(Responsibility::default().keeps_node(&Node::default()));
    }

    #[test]
    fn list_items_without_kind_decode_and_lose_managed_fields() {
        let v = json!({"metadata": {"name": "p", "namespace": "ns", "managedFields": [{}]},
                       "spec": {"schedulerName": "volcano"}});
        let c = convert(ObjectKind::Pod, v).unwrap();
        assert!(matches!(c.object, ClusterObject::Pod(_)));
        assert!(c.raw["metadata"].get("managedFields").is_none());
    }

    #[test]
    fn a_malformed_object_is_an_error_naming_it() {
        let v = json!({"metadata": {"name": "q"}, "spec": {"weight": "heavy"}});
        let e = convert(ObjectKind::Queue, v).unwrap_err();
        assert!(e.contains("Queue q"), "{e}");
    }
}
