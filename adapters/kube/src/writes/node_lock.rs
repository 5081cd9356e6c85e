//! The node lock a device bind takes first (`deviceshare.NodeLockEnable`): an annotation on the
//! node, named after the device kind, holding when it was taken (RFC 3339). A lock younger than
//! five minutes refuses the bind; an older one is taken over. The device plugin on the node
//! removes it once it has read the pod's devices (Volcano:
//! pkg/scheduler/plugins/util/nodelock/nodelock.go, LockNode). Volcano takes the lock while it
//! allocates; here it is taken just before the bind, so a refused lock fails the bind and the
//! pod is scheduled again next cycle. `get` and `update` on nodes are in Volcano's ClusterRole.

use std::time::{SystemTime, UNIX_EPOCH};

use kube::api::{DynamicObject, PostParams};
use tephra_cache::ObjectKind;
use tephra_engine::api::Time;

use super::Writer;
use crate::watch::api_resource;

/// How long a lock holds before the next bind may take it over.
const LOCK_EXPIRY_SECS: i64 = 5 * 60;
/// Updates tried after a conflict, each on a fresh read (Volcano: nodelock.go, MaxLockRetry).
const RETRIES: usize = 5;

/// Whether a lock taken at `held` (the annotation's value) still holds at `now`; a value that
/// is not a timestamp is refused, as Volcano's parse error refuses the lock.
fn still_held(held: &str, now: i64) -> Result<bool, String> {
    let taken = Time::parse(held).map_err(|e| e.to_string())?;
    Ok(now - taken.0 <= LOCK_EXPIRY_SECS)
}

/// `node` with the lock `name` set to `now`, or why the lock cannot be taken.
fn locked(mut node: DynamicObject, name: &str, now: i64) -> Result<DynamicObject, String> {
    let annotations = node.metadata.annotations.get_or_insert_default();
    if let Some(held) = annotations.get(name)
        && still_held(held, now)?
    {
        return Err(format!(
            "node {} has been locked within 5 minutes",
            node.metadata.name.as_deref().unwrap_or_default()
        ));
    }
    annotations.insert(name.to_string(), Time(now).to_string());
    Ok(node)
}

fn refused(why: String) -> kube::Error {
    kube::Error::Api(kube::core::Status::failure(&why, "NodeLocked").boxed())
}

/// Takes the lock `name` on `node`.
pub async fn lock_node(w: &Writer, node: &str, name: &str) -> Result<(), kube::Error> {
    let api = w.api(&api_resource(ObjectKind::Node), "");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let mut last = None;
    for _ in 0..=RETRIES {
        w.before("get nodes").await;
        let current = api.get(node).await?;
        let update = locked(current, name, now).map_err(refused)?;
        w.before("update nodes").await;
        match api.replace(node, &PostParams::default(), &update).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => last = Some(kube::Error::Api(s)),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| refused(format!("node {node} lock not taken"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(annotations: &[(&str, &str)]) -> DynamicObject {
        let mut n: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}
        }))
        .unwrap();
        if !annotations.is_empty() {
            n.metadata.annotations = Some(
                annotations
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            );
        }
        n
    }

    const NOW: i64 = 1_700_000_000;

    #[test]
    fn a_free_node_gets_the_lock_stamped_now() {
        let n = locked(node(&[]), "gpu", NOW).unwrap();
        let stamp = &n.metadata.annotations.unwrap()["gpu"];
        assert_eq!(Time::parse(stamp).unwrap().0, NOW);
    }

    #[test]
    fn a_lock_younger_than_five_minutes_refuses() {
        let held = Time(NOW - 60).to_string();
        let e = locked(node(&[("gpu", &held)]), "gpu", NOW).unwrap_err();
        assert_eq!(e, "node n1 has been locked within 5 minutes");
    }

    #[test]
    fn an_expired_lock_is_taken_over() {
        let held = Time(NOW - 301).to_string();
        let n = locked(node(&[("hamivgpu", &held)]), "hamivgpu", NOW).unwrap();
        assert_eq!(
            Time::parse(&n.metadata.annotations.unwrap()["hamivgpu"])
                .unwrap()
                .0,
            NOW
        );
    }

    #[test]
    fn another_kinds_lock_does_not_refuse() {
        let held = Time(NOW).to_string();
        assert!(locked(node(&[("gpu", &held)]), "hamivgpu", NOW).is_ok());
    }
}
