//! The scheduler's report on its NodeShard (nodeshards/status update), as Volcano's scheduler
//! writes it (Volcano: pkg/scheduler/cache/shard_coordinator.go, UpdateNodeShardStatus): the
//! nodes it uses and those it waits for or gives up. The other schedulers read it to learn when
//! a node moving to their shard is free.

use kube::api::{DynamicObject, PostParams};
use serde_json::{Value, json};
use tephra_cache::ObjectKind;
use tephra_engine::api::NodeShardStatus;

use super::{Writer, is_status};
use crate::watch::api_resource;

/// The NodeShard as the API holds it (`raw`) with the status lists replaced; other status
/// fields, and the resourceVersion that makes a stale write fail, are kept.
pub fn node_shard_status_write(raw: Value, status: &NodeShardStatus) -> Value {
    let mut o = raw;
    let ar = api_resource(ObjectKind::NodeShard);
    o["apiVersion"] = json!(ar.api_version);
    o["kind"] = json!(ar.kind);
    if !o.get("status").is_some_and(Value::is_object) {
        o["status"] = json!({});
    }
    o["status"]["nodesInUse"] = json!(status.nodes_in_use);
    o["status"]["nodesToAdd"] = json!(status.nodes_to_add);
    o["status"]["nodesToRemove"] = json!(status.nodes_to_remove);
    o
}

/// Writes `object` (from `node_shard_status_write`). A conflict means the shard changed since:
/// its new version arrives through the watch, and the status is worked out again from it.
pub async fn write_node_shard_status(w: &Writer, object: Value) {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let dynamic: DynamicObject = match serde_json::from_value(object) {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!("NodeShard {name}: cannot encode the status write: {e}");
            return;
        }
    };
    w.before_status("update nodeshards/status").await;
    let api = w.api(&api_resource(ObjectKind::NodeShard), "");
    match api
        .replace_status(&name, &PostParams::default(), &dynamic)
        .await
    {
        Ok(_) => tracing::info!("NodeShard {name}: status updated"),
        Err(e) if is_status(&e, 409) => {
            tracing::debug!(
                "NodeShard {name}: status write conflicted ({e}); retried on its next version"
            );
        }
        Err(e) => tracing::warn!("NodeShard {name}: status write failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_write_replaces_the_lists_and_keeps_the_version_and_other_status_fields() {
        let raw = json!({"metadata": {"name": "s1", "resourceVersion": "7"},
                         "spec": {"nodesDesired": ["n1", "n2"]},
                         "status": {"lastUpdateTime": "2025-01-01T00:00:00Z", "nodesInUse": ["n9"]}});
        let status = NodeShardStatus {
            nodes_in_use: vec!["n1".into()],
            nodes_to_add: vec!["n2".into()],
            nodes_to_remove: vec![],
        };
        let o = node_shard_status_write(raw, &status);
        assert_eq!(o["kind"], "NodeShard");
        assert_eq!(o["apiVersion"], "shard.volcano.sh/v1alpha1");
        assert_eq!(o["metadata"]["resourceVersion"], "7");
        assert_eq!(o["status"]["nodesInUse"], json!(["n1"]));
        assert_eq!(o["status"]["nodesToAdd"], json!(["n2"]));
        assert_eq!(o["status"]["nodesToRemove"], json!([]));
        assert_eq!(o["status"]["lastUpdateTime"], "2025-01-01T00:00:00Z");
        let bare = node_shard_status_write(json!({"metadata": {"name": "s1"}}), &status);
        assert_eq!(bare["status"]["nodesInUse"], json!(["n1"]));
    }
}
