//! The objects as the API server last sent them, for writes that send a whole object back.
//! Only the scheduler loop changes it, together with the cache.
//!
//! Each is kept as its JSON bytes and decoded when a write needs it: a decoded `Value` is ten
//! times the size of its JSON, and 50,000 pods' were most of the scheduler's memory (and of its
//! start-up's page faults), for objects most of which are never written.

use std::collections::HashMap;

use kube::core::ObjectMeta;
use serde_json::Value;
use tephra_cache::ObjectKind;

use crate::writes::ObjectRef;

/// One object as the API server sent it, `metadata.managedFields` left out, with the two
/// metadata fields the scheduler loop compares without decoding it.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw {
    json: Box<[u8]>,
    uid: Box<str>,
    /// `metadata.resourceVersion` when it is a number.
    version: Option<u64>,
}

impl Raw {
    /// The object's `json` (without managedFields) and its decoded `metadata`.
    pub fn new(json: Box<[u8]>, metadata: &ObjectMeta) -> Raw {
        Raw {
            json,
            uid: metadata.uid.as_deref().unwrap_or_default().into(),
            version: metadata
                .resource_version
                .as_deref()
                .and_then(|v| v.parse().ok()),
        }
    }

    /// A decoded object (an answer to a write, managedFields already dropped), encoded.
    pub fn of_value(object: &Value) -> Raw {
        let field = |k: &str| object["metadata"][k].as_str().unwrap_or_default();
        Raw {
            json: object.to_string().into_bytes().into_boxed_slice(),
            uid: field("uid").into(),
            version: field("resourceVersion").parse().ok(),
        }
    }

    /// The object, decoded.
    pub fn value(&self) -> Result<Value, String> {
        serde_json::from_slice(&self.json).map_err(|e| format!("a kept object: {e}"))
    }

    pub fn uid(&self) -> &str {
        &self.uid
    }

    /// Whether this is a newer state of the object than `held`: another UID (recreated), or a
    /// higher resourceVersion. resourceVersions are etcd revisions; Kubernetes calls them opaque,
    /// but the API server's own watch cache orders them the same way. Unparsable ones count as
    /// newer.
    pub fn is_newer_than(&self, held: &Raw) -> bool {
        self.uid != held.uid
            || match (self.version, held.version) {
                (Some(a), Some(b)) => a > b,
                _ => true,
            }
    }
}

/// Raw pods, PodGroups, queues, volumes, claims and NodeShards by `namespace/name`.
#[derive(Debug, Default)]
pub struct RawStore {
    objects: HashMap<(ObjectKind, String, String), Raw>,
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
    pub fn upsert(&mut self, kind: ObjectKind, namespace: &str, name: &str, raw: Raw) {
        if kept(kind) {
            self.objects
                .insert((kind, namespace.to_string(), name.to_string()), raw);
        }
    }

    pub fn remove(&mut self, kind: ObjectKind, namespace: &str, name: &str) -> Option<Raw> {
        self.objects
            .remove(&(kind, namespace.to_string(), name.to_string()))
    }

    /// The object as held.
    pub fn held(&self, kind: ObjectKind, namespace: &str, name: &str) -> Option<&Raw> {
        self.objects
            .get(&(kind, namespace.to_string(), name.to_string()))
    }

    /// The object, decoded (`None` when it is not held, or a warning and `None` should its bytes
    /// not decode).
    pub fn get(&self, kind: ObjectKind, namespace: &str, name: &str) -> Option<Value> {
        let raw = self.held(kind, namespace, name)?;
        raw.value()
            .inspect_err(|e| tracing::warn!("{kind} {namespace}/{name}: {e}"))
            .ok()
    }

    /// An event reference to the object, with its UID when known.
    pub fn object_ref(&self, kind: ObjectKind, namespace: &str, name: &str) -> ObjectRef {
        let uid = self
            .held(kind, namespace, name)
            .map_or("", Raw::uid)
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

    fn obj(uid: &str, rv: &str) -> Raw {
        Raw::of_value(&json!({"metadata": {"uid": uid, "resourceVersion": rv}}))
    }

    #[test]
    fn only_a_higher_resource_version_is_newer() {
        assert!(!obj("u", "100").is_newer_than(&obj("u", "200")));
        assert!(
            !obj("u", "200").is_newer_than(&obj("u", "200")),
            "the echo of what we hold"
        );
        assert!(obj("u", "300").is_newer_than(&obj("u", "200")));
    }

    #[test]
    fn a_recreated_object_or_an_opaque_version_is_newer() {
        assert!(obj("new", "100").is_newer_than(&obj("old", "200")));
        assert!(obj("u", "abc").is_newer_than(&obj("u", "200")));
    }

    #[test]
    fn a_kept_object_decodes_as_it_came_and_its_metadata_agrees() {
        let pod = json!({"metadata": {"name": "p", "uid": "u1", "resourceVersion": "42"},
                         "spec": {"nodeName": "n1"}});
        let metadata: ObjectMeta = serde_json::from_value(pod["metadata"].clone()).unwrap();
        let from_bytes = Raw::new(pod.to_string().into_bytes().into(), &metadata);
        assert_eq!(from_bytes, Raw::of_value(&pod));
        assert_eq!(from_bytes.value().unwrap(), pod);
        assert_eq!(from_bytes.uid(), "u1");
    }

    #[test]
    fn only_written_kinds_are_kept() {
        let mut s = RawStore::default();
        s.upsert(ObjectKind::Node, "", "n1", Raw::of_value(&json!({})));
        s.upsert(ObjectKind::Pod, "ns", "p", obj("u1", "1"));
        assert!(s.get(ObjectKind::Node, "", "n1").is_none());
        assert_eq!(s.object_ref(ObjectKind::Pod, "ns", "p").uid, "u1");
        assert!(s.remove(ObjectKind::Pod, "ns", "p").is_some());
        assert_eq!(s.object_ref(ObjectKind::Pod, "ns", "p").uid, "");
    }
}
