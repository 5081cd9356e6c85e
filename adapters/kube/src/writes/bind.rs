//! Binding a pod: `POST pods/<name>/binding`, as Volcano's default binder does, after its
//! volume work (`volumes`, `volume_wait`) and its node lock when it has them; the UID in the
//! binding makes the API refuse a pod that was deleted and recreated since the snapshot, and the
//! binding's annotations (the devices `deviceshare` chose) are copied onto the pod by the API
//! server (Volcano: pkg/scheduler/cache/cache.go, DefaultBinder.Bind).

use kube::api::PostParams;
use serde_json::{Value, json};
use tephra_cache::ObjectKind;
use tephra_engine::framework::Bind;

use super::Writer;
use super::node_lock::lock_node;
use crate::watch::api_resource;

/// The `v1.Binding` body for `b`.
pub fn binding(b: &Bind) -> Value {
    let mut metadata = json!({"name": &*b.name, "namespace": &*b.namespace});
    if !b.uid.is_empty() && *b.uid != format!("{}/{}", b.namespace, b.name) {
        metadata["uid"] = json!(&*b.uid);
    }
    if !b.annotations.is_empty() {
        metadata["annotations"] = json!(&b.annotations);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": metadata,
        "target": {"apiVersion": "v1", "kind": "Node", "name": b.node},
    })
}

/// Binds one pod, after its node lock when it takes one.
pub async fn bind(w: &Writer, b: &Bind) -> Result<(), kube::Error> {
    if let Some(lock) = b.node_lock {
        lock_node(w, &b.node, lock).await?;
    }
    w.before("create pods/binding").await;
    w.api(&api_resource(ObjectKind::Pod), &b.namespace)
        .create_subresource::<Value, Value>("binding", &b.name, &PostParams::default(), &binding(b))
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_names_pod_uid_and_node() {
        let b = Bind {
            namespace: "ns".into(),
            name: "p".into(),
            uid: "u1".into(),
            node: "n1".into(),
            volumes: None,
            node_lock: None,
            annotations: Default::default(),
        };
        let v = binding(&b);
        assert_eq!(v["metadata"]["uid"], "u1");
        assert_eq!(v["target"]["kind"], "Node");
        assert_eq!(v["target"]["name"], "n1");
    }

    #[test]
    fn the_binding_carries_the_pods_device_annotations() {
        let b = Bind {
            namespace: "ns".into(),
            name: "p".into(),
            uid: "u1".into(),
            node: "n1".into(),
            volumes: None,
            node_lock: None,
            annotations: [("volcano.sh/gpu-index".to_string(), "1".to_string())].into(),
        };
        assert_eq!(
            binding(&b)["metadata"]["annotations"]["volcano.sh/gpu-index"],
            "1"
        );
    }

    #[test]
    fn the_snapshot_stand_in_uid_is_not_sent() {
        let b = Bind {
            namespace: "ns".into(),
            name: "p".into(),
            uid: "ns/p".into(),
            node: "n1".into(),
            volumes: None,
            node_lock: None,
            annotations: Default::default(),
        };
        assert!(binding(&b)["metadata"].get("uid").is_none());
    }
}
