//! Turning one manifest document into a `ClusterObject`, by its `kind`.

use serde::de::DeserializeOwned;
use serde_json::Value;
use tephra_cache::ObjectKind;
use tephra_engine::api::{
    ClusterObject, CsiDriver, CsiNode, CsiStorageCapacity, HyperNode, Namespace, Node, NodeMetrics,
    NodeShard, Numatopology, PersistentVolume, PersistentVolumeClaim, Pod, PodDisruptionBudget,
    PodGroup, PriorityClass, Queue, ReplicaSet, ReplicationController, ResourceQuota, Service,
    StatefulSet, StorageClass, VolumeAttachment,
};

use super::admission::admit;
use super::field_path::failing_field;
use crate::InputError;

/// What a document turned out to be.
#[derive(Debug)]
pub enum Decoded {
    Object(ClusterObject),
    /// A kind tephra does not watch, as `Kind ns/name`.
    Skipped(String),
}

/// `Kind ns/name` (or `Kind name` when cluster-scoped), from whatever metadata the raw
/// document has, for messages.
fn describe(kind: &str, value: &Value) -> String {
    let meta = |k: &str| {
        value
            .get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    match (meta("namespace"), meta("name")) {
        (_, "") => format!("{kind} (unnamed)"),
        ("", name) => format!("{kind} {name}"),
        (ns, name) => format!("{kind} {ns}/{name}"),
    }
}

/// `Kind ns/name` (or `Kind name` when cluster-scoped) of a decoded object, for messages.
pub fn describe_object(object: &ClusterObject) -> String {
    let meta = tephra_cache::meta_of(object);
    let kind = ObjectKind::of(object).name();
    if meta.namespace.is_empty() {
        format!("{kind} {}", meta.name)
    } else {
        format!("{kind} {}/{}", meta.namespace, meta.name)
    }
}

/// Decodes one document. `implied_kind` is used when the document has no `kind` of its own
/// (items of a typed list such as `PodList`). `origin` and `location` go into errors.
pub fn decode(
    value: &Value,
    implied_kind: Option<&str>,
    origin: &str,
    location: &str,
) -> Result<Decoded, InputError> {
    let fail = |message: &str| InputError::new(origin, message).at(location);
    if !value.is_object() {
        return Err(fail(
            "expected an object with `kind`, found a scalar or a sequence",
        ));
    }
    let kind = match value.get("kind") {
        Some(Value::String(k)) => k.clone(),
        Some(_) => return Err(fail("`kind` must be a string")),
        None => implied_kind
            .map(str::to_string)
            .ok_or_else(|| fail("no `kind`"))?,
    };
    let what = describe(&kind, value);
    let Some(kind) = ObjectKind::from_name(&kind) else {
        return Ok(Decoded::Skipped(what));
    };
    let object = match kind {
        ObjectKind::Pod => {
            ClusterObject::Pod(Box::new(typed::<Pod>(value, origin, location, &what)?))
        }
        ObjectKind::Node => {
            ClusterObject::Node(Box::new(typed::<Node>(value, origin, location, &what)?))
        }
        ObjectKind::PodGroup => {
            ClusterObject::PodGroup(Box::new(typed::<PodGroup>(value, origin, location, &what)?))
        }
        ObjectKind::Queue => {
            ClusterObject::Queue(Box::new(typed::<Queue>(value, origin, location, &what)?))
        }
        ObjectKind::PriorityClass => ClusterObject::PriorityClass(Box::new(
            typed::<PriorityClass>(value, origin, location, &what)?,
        )),
        ObjectKind::HyperNode => ClusterObject::HyperNode(Box::new(typed::<HyperNode>(
            value, origin, location, &what,
        )?)),
        ObjectKind::PodDisruptionBudget => {
            ClusterObject::PodDisruptionBudget(Box::new(typed::<PodDisruptionBudget>(
                value, origin, location, &what,
            )?))
        }
        ObjectKind::ResourceQuota => ClusterObject::ResourceQuota(Box::new(
            typed::<ResourceQuota>(value, origin, location, &what)?,
        )),
        ObjectKind::NodeMetrics => ClusterObject::NodeMetrics(Box::new(typed::<NodeMetrics>(
            value, origin, location, &what,
        )?)),
        ObjectKind::Numatopology => ClusterObject::Numatopology(Box::new(typed::<Numatopology>(
            value, origin, location, &what,
        )?)),
        ObjectKind::Namespace => ClusterObject::Namespace(Box::new(typed::<Namespace>(
            value, origin, location, &what,
        )?)),
        ObjectKind::PersistentVolumeClaim => ClusterObject::PersistentVolumeClaim(Box::new(
            typed::<PersistentVolumeClaim>(value, origin, location, &what)?,
        )),
        ObjectKind::PersistentVolume => {
            ClusterObject::PersistentVolume(Box::new(typed::<PersistentVolume>(
                value, origin, location, &what,
            )?))
        }
        ObjectKind::StorageClass => ClusterObject::StorageClass(Box::new(typed::<StorageClass>(
            value, origin, location, &what,
        )?)),
        ObjectKind::CsiNode => {
            ClusterObject::CsiNode(Box::new(typed::<CsiNode>(value, origin, location, &what)?))
        }
        ObjectKind::CsiDriver => ClusterObject::CsiDriver(Box::new(typed::<CsiDriver>(
            value, origin, location, &what,
        )?)),
        ObjectKind::CsiStorageCapacity => {
            ClusterObject::CsiStorageCapacity(Box::new(typed::<CsiStorageCapacity>(
                value, origin, location, &what,
            )?))
        }
        ObjectKind::VolumeAttachment => {
            ClusterObject::VolumeAttachment(Box::new(typed::<VolumeAttachment>(
                value, origin, location, &what,
            )?))
        }
        ObjectKind::Service => {
            ClusterObject::Service(Box::new(typed::<Service>(value, origin, location, &what)?))
        }
        ObjectKind::ReplicationController => ClusterObject::ReplicationController(Box::new(
            typed::<ReplicationController>(value, origin, location, &what)?,
        )),
        ObjectKind::ReplicaSet => ClusterObject::ReplicaSet(Box::new(typed::<ReplicaSet>(
            value, origin, location, &what,
        )?)),
        ObjectKind::StatefulSet => ClusterObject::StatefulSet(Box::new(typed::<StatefulSet>(
            value, origin, location, &what,
        )?)),
        ObjectKind::NodeShard => ClusterObject::NodeShard(Box::new(typed::<NodeShard>(
            value, origin, location, &what,
        )?)),
    };
    Ok(Decoded::Object(with_defaults(
        object, origin, location, &what,
    )?))
}

fn typed<T: DeserializeOwned>(
    value: &Value,
    origin: &str,
    location: &str,
    what: &str,
) -> Result<T, InputError> {
    T::deserialize(value).map_err(|e| {
        let err = InputError::new(origin, e).at(location).object(what);
        match failing_field::<T>(value) {
            Some(field) => err.field(field),
            None => err,
        }
    })
}

/// Requires a name, puts namespaced objects without a namespace into `default` and applies the
/// API server's checks and defaults (`admission`), as the API server would.
fn with_defaults(
    mut object: ClusterObject,
    origin: &str,
    location: &str,
    what: &str,
) -> Result<ClusterObject, InputError> {
    if tephra_cache::meta_of(&object).name.is_empty() {
        return Err(InputError::new(origin, "missing")
            .at(location)
            .object(what)
            .field("metadata.name"));
    }
    let meta = match &mut object {
        ClusterObject::Pod(p) => Some(&mut p.metadata),
        ClusterObject::PodGroup(pg) => Some(&mut pg.metadata),
        ClusterObject::PodDisruptionBudget(pdb) => Some(&mut pdb.metadata),
        ClusterObject::ResourceQuota(quota) => Some(&mut quota.metadata),
        ClusterObject::PersistentVolumeClaim(pvc) => Some(&mut pvc.metadata.meta),
        ClusterObject::CsiStorageCapacity(c) => Some(&mut c.metadata),
        ClusterObject::Service(o) => Some(&mut o.metadata),
        ClusterObject::ReplicationController(o) => Some(&mut o.metadata),
        ClusterObject::ReplicaSet(o) => Some(&mut o.metadata),
        ClusterObject::StatefulSet(o) => Some(&mut o.metadata),
        _ => None,
    };
    if let Some(meta) = meta.filter(|m| m.namespace.is_empty()) {
        meta.namespace = "default".into();
    }
    admit(&mut object).map_err(|r| {
        InputError::new(origin, r.message)
            .at(location)
            .object(what)
            .field(r.field)
    })?;
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode_ok(v: Value) -> Decoded {
        decode(&v, None, "f.yaml", "document 0").unwrap()
    }

    fn decode_err(v: Value) -> String {
        decode(&v, None, "f.yaml", "document 0")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn pod_is_decoded_with_its_requests() {
        let v = json!({"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 2}}}]}});
        let Decoded::Object(ClusterObject::Pod(p)) = decode_ok(v) else {
            panic!("not a pod")
        };
        assert_eq!(
            p.spec.containers[0]
                .resources
                .requests
                .get("cpu")
                .map(|q| q.milli_value()),
            Some(2000)
        );
    }

    #[test]
    fn namespaced_object_without_namespace_goes_to_default() {
        let Decoded::Object(ClusterObject::PodGroup(pg)) =
            decode_ok(json!({"kind": "PodGroup", "metadata": {"name": "pg"}}))
        else {
            panic!("not a pod group")
        };
        assert_eq!(pg.metadata.namespace, "default");
    }

    #[test]
    fn cluster_scoped_object_keeps_an_empty_namespace() {
        let Decoded::Object(ClusterObject::Node(n)) =
            decode_ok(json!({"kind": "Node", "metadata": {"name": "n1"}}))
        else {
            panic!("not a node")
        };
        assert_eq!(n.metadata.namespace, "");
    }

    #[test]
    fn unwatched_kind_is_skipped_by_name() {
        let d = decode_ok(
            json!({"kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"}}),
        );
        assert!(
            matches!(d, Decoded::Skipped(ref s) if s == "Deployment ns/web"),
            "{d:?}"
        );
    }

    #[test]
    fn implied_kind_applies_only_without_own_kind() {
        let d = decode(
            &json!({"metadata": {"name": "n1"}}),
            Some("Node"),
            "f",
            "items[0]",
        )
        .unwrap();
        assert!(matches!(d, Decoded::Object(ClusterObject::Node(_))));
    }

    #[test]
    fn bad_field_error_names_file_document_object_and_field() {
        let e = decode_err(
            json!({"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"resources": {"requests": {"cpu": "lots"}}}]}}),
        );
        assert!(
            e.starts_with("f.yaml: document 0: Pod ns/p: field spec.containers[0].resources.requests.cpu: quantities must"),
            "{e}"
        );
    }

    #[test]
    fn a_value_the_api_server_refuses_names_file_object_and_field() {
        let e = decode_err(json!({"kind": "Node", "metadata": {"name": "n1"},
            "status": {"capacity": {"cpu": -4}}}));
        assert_eq!(
            e,
            "f.yaml: document 0: Node n1: field status.capacity.cpu: must not be negative: -4 (the API server refuses it)"
        );
    }

    #[test]
    fn missing_kind_name_or_shape_is_refused() {
        assert_eq!(
            decode_err(json!({"metadata": {"name": "x"}})),
            "f.yaml: document 0: no `kind`"
        );
        assert_eq!(
            decode_err(json!({"kind": 3})),
            "f.yaml: document 0: `kind` must be a string"
        );
        assert_eq!(
            decode_err(json!({"kind": "Node", "metadata": {}})),
            "f.yaml: document 0: Node (unnamed): field metadata.name: missing"
        );
        assert!(decode_err(json!(["kind", "Pod"])).contains("expected an object"));
    }
}
