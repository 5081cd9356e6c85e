//! Evicting a pod as Volcano's default evictor does (Volcano: pkg/scheduler/cache/cache.go, Evict and defaultEvictor): add the `Ready=False` and
//! `DisruptionTarget=True` conditions through pods/status, then delete the pod with its
//! default grace period. If both conditions were already there the eviction stops.

use kube::api::{DeleteParams, DynamicObject, PostParams};
use serde_json::{Value, json};
use tephra_cache::ObjectKind;

use super::{Writer, is_status};
use crate::watch::api_resource;

/// The pod with the eviction conditions added, or `None` when they are already there.
pub fn evicted_pod(raw: &Value, reason: &str, scheduler: &str, now: &str) -> Option<Value> {
    let wanted = [
        json!({"type": "Ready", "status": "False", "reason": "Evict",
               "message": format!("Pod is evicted, because of {reason}"), "lastTransitionTime": now}),
        json!({"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
               "message": format!("{scheduler}: preempting to accommodate a higher priority pod"),
               "lastTransitionTime": now}),
    ];
    let mut conditions = raw
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut changed = false;
    for w in wanted {
        let same = |c: &Value| {
            c["type"] == w["type"]
                && c["status"] == w["status"]
                && c["reason"] == w["reason"]
                && c["message"] == w["message"]
        };
        if conditions.iter().any(same) {
            continue;
        }
        changed = true;
        conditions.retain(|c| c["type"] != w["type"]);
        conditions.push(w);
    }
    if !changed {
        return None;
    }
    let mut pod = raw.clone();
    if !pod.get("status").is_some_and(Value::is_object) {
        pod["status"] = json!({});
    }
    pod["status"]["conditions"] = Value::Array(conditions);
    Some(pod)
}

/// Evicts the pod `raw` for `reason`; API errors are logged and the next cycle sees the pod
/// as the API holds it.
pub async fn evict(w: &Writer, raw: &Value, reason: &str, scheduler: &str) {
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    let Some(pod) = evicted_pod(raw, reason, scheduler, &now) else {
        return;
    };
    let ns = pod
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let api = w.api(&api_resource(ObjectKind::Pod), &ns);
    let Ok(dynamic) = serde_json::from_value::<DynamicObject>(pod) else {
        return;
    };
    w.before("update pods/status").await;
    if let Err(e) = api
        .replace_status(&name, &PostParams::default(), &dynamic)
        .await
    {
        tracing::warn!("evict {ns}/{name}: status update: {e}");
        return;
    }
    w.before("delete pods").await;
    match api.delete(&name, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(e) if is_status(&e, 404) => {}
        Err(e) => tracing::warn!("evict {ns}/{name}: delete: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eviction_adds_ready_false_and_disruption_target() {
        let raw = json!({"metadata": {"name": "p"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        let pod = evicted_pod(&raw, "preempt", "volcano", "T").unwrap();
        let c = pod["status"]["conditions"].as_array().unwrap();
        assert_eq!(c.len(), 2);
        assert!(c.iter().any(|c| c["type"] == "Ready"
            && c["status"] == "False"
            && c["message"] == "Pod is evicted, because of preempt"));
        assert!(
            c.iter()
                .any(|c| c["type"] == "DisruptionTarget" && c["reason"] == "PreemptionByScheduler")
        );
    }

    #[test]
    fn an_eviction_already_recorded_stops() {
        let raw = json!({"metadata": {"name": "p"}});
        let once = evicted_pod(&raw, "preempt", "volcano", "T").unwrap();
        assert!(evicted_pod(&once, "preempt", "volcano", "T2").is_none());
    }
}
