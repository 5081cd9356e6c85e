//! The objects as the API server last sent them, for writes that send a whole object back.
//! Only the scheduler loop changes it, together with the cache.

use std::collections::HashMap;

use serde_json::Value;
use tephra_cache::ObjectKind;

use crate::writes::ObjectRef;

/// Raw pods, PodGroups, queues, volumes, claims and NodeShards by `namespace/name`.
#[derive(Debug, Default)]
pub struct RawStore {
    objects: HashMap<(ObjectKind, String, String), Value>,
}

/// Whether raw copies of `kind` are kept (the kinds vc-scheduler writes back).
fn kept(kind: ObjectKind) -> bool {
    matches!(
        kind,
        ObjectKind::Pod
            | ObjectKind::PodGroup
            | ObjectKind::Queue
            | ObjectKind::PersistentVolume
            | ObjectKind::PersistentVolumeClaim
            | ObjectKind::NodeShard
    )
}

impl RawStore {
    pub fn upsert(&mut self, kind: ObjectKind, namespace: &str, name: &str, raw: Value) {
        if kept(kind) {
            self.objects
                .insert((kind, namespace.to_string(), name.to_string()), raw);
        }
    }

    pub fn remove(&mut self, kind: ObjectKind, namespace: &str, name: &str) -> Option<Value> {
        self.objects
            .remove(&(kind, namespace.to_string(), name.to_string()))
    }

    pub fn get(&self, kind: ObjectKind, namespace: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(&(kind, namespace.to_string(), name.to_string()))
    }

    /// An event reference to the object, with its UID when known.
    pub fn object_ref(&self, kind: ObjectKind, namespace: &str, name: &str) -> ObjectRef {
        let uid = self
            .get(kind, namespace, name)
            .and_then(|v| v.pointer("/metadata/uid"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let (kind, api_version) = match kind {
            ObjectKind::PodGroup => ("PodGroup", "scheduling.volcano.sh/v1beta1"),
            ObjectKind::Queue => ("Queue", "scheduling.volcano.sh/v1beta1"),
            _ => ("Pod", "v1"),
        };
        ObjectRef {
            kind,
            api_version,
            namespace: namespace.to_string(),
            name: name.to_string(),
            uid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_written_kinds_are_kept() {
        let mut s = RawStore::default();
        s.upsert(ObjectKind::Node, "", "n1", json!({}));
        s.upsert(
            ObjectKind::Pod,
            "ns",
            "p",
            json!({"metadata": {"uid": "u1"}}),
        );
        assert!(s.get(ObjectKind::Node, "", "n1").is_none());
        assert_eq!(s.object_ref(ObjectKind::Pod, "ns", "p").uid, "u1");
        assert!(s.remove(ObjectKind::Pod, "ns", "p").is_some());
        assert_eq!(s.object_ref(ObjectKind::Pod, "ns", "p").uid, "");
    }
}
