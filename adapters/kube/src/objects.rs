//! API objects into cache objects: the JSON the API server sends, decoded into the engine's
//! stripped types by the same code that reads manifests, and the responsibility filters of
//! Volcano's cache (Volcano: pkg/scheduler/cache/cache.go and util.go, responsibleForPod).

use std::sync::Arc;

use serde_json::Value;
use tephra_adapters::manifest::{Decoded, decode};
use tephra_cache::ObjectKind;
use tephra_engine::api::{ClusterObject, Node, Pod};

use crate::multi_scheduler::MultiScheduler;
use crate::raw::Raw;

/// What an object the API server sent turned into.
#[derive(Debug)]
pub struct Converted {
    pub object: ClusterObject,
    /// The object as the API server holds it, kept for writes that send the whole object back
    /// (PodGroup update, pod and queue status updates).
    pub raw: Raw,
}

/// Decodes one object of `kind`; the error names the object and the field.
pub fn decode_object(kind: ObjectKind, value: &Value) -> Result<ClusterObject, String> {
    match decode(value, Some(kind.name()), "watch", kind.name()) {
        Ok(Decoded::Object(object)) => Ok(object),
        Ok(Decoded::Skipped(what)) => Err(format!("unexpected object {what}")),
        Err(e) => Err(e.to_string()),
    }
}

/// Decodes an object of `kind` the API server answered a write with; `managedFields` are
/// dropped from what is kept.
pub fn convert(kind: ObjectKind, mut value: Value) -> Result<Converted, String> {
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    let object = decode_object(kind, &value)?;
    Ok(Converted {
        object,
        raw: Raw::of_value(&value),
    })
}

/// Decodes a kept object of `kind` again.
pub fn convert_kept(kind: ObjectKind, raw: Raw) -> Result<Converted, String> {
    let object = decode_object(kind, &raw.value()?)?;
    Ok(Converted { object, raw })
}

/// Which objects this scheduler keeps, from its flags and environment.
#[derive(Debug, Clone, Default)]
pub struct Responsibility {
    pub scheduler_names: Vec<String>,
    /// `--node-selector` pairs; empty keeps every node.
    pub node_selector: Vec<(String, String)>,
    /// The hash ring of a scheduler StatefulSet's replicas (`MULTI_SCHEDULER_ENABLE`).
    pub replicas: Option<Arc<MultiScheduler>>,
}

impl Responsibility {
    /// True unless the replicas' ring gives `key` to another replica.
    fn owns(&self, key: &str) -> bool {
        self.replicas.as_ref().is_none_or(|r| r.owns(key))
    }

    /// A pod is cached when one of our scheduler names schedules it (and, among replicas, its
    /// job is ours: `job_key` is its first owner's name, or its own), or when it is bound
    /// (other schedulers' pods still use node resources; among replicas, to one of our nodes).
    pub fn keeps_pod(&self, pod: &Pod, job_key: &str) -> bool {
        (self.scheduler_names.contains(&pod.spec.scheduler_name) && self.owns(job_key))
            || (!pod.spec.node_name.is_empty() && self.owns(&pod.spec.node_name))
    }

    /// A PodGroup is cached unless the replicas' ring gives it to another replica (`job_key`:
    /// its first owner's name, or its own).
    pub fn keeps_pod_group(&self, job_key: &str) -> bool {
        self.owns(job_key)
    }

    /// A node is cached when it is ours among replicas, and no selector is set or any of its
    /// labels equals any entry.
    pub fn keeps_node(&self, node: &Node) -> bool {
        self.owns(&node.metadata.name)
            && (self.node_selector.is_empty()
                || self
                    .node_selector
                    .iter()
                    .any(|(k, v)| node.metadata.labels.get(k) == Some(v)))
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
        assert!(r.keeps_pod(&pod("volcano", ""), "p"));
        assert!(!r.keeps_pod(&pod("default-scheduler", ""), "p"));
        assert!(r.keeps_pod(&pod("default-scheduler", "n1"), "p"));
    }

    #[test]
    fn replicas_keep_their_jobs_pods_and_the_pods_bound_to_their_nodes() {
        let replica = |i: usize| {
            let me = format!("vc-{i}");
            let env = move |k: &str| match k {
                "MULTI_SCHEDULER_ENABLE" => Some("true".to_string()),
                "SCHEDULER_NUM" => Some("2".to_string()),
                "SCHEDULER_POD_NAME" => Some(me.clone()),
                _ => None,
            };
            Responsibility {
                scheduler_names: vec!["volcano".into()],
                replicas: MultiScheduler::from_env(env).unwrap().map(Arc::new),
                ..Default::default()
            }
        };
        let (r0, r1) = (replica(0), replica(1));
        for job in ["job-a", "job-b", "job-c", "job-d"] {
            let pending = pod("volcano", "");
            assert!(
                r0.keeps_pod(&pending, job) != r1.keeps_pod(&pending, job),
                "{job}: one replica schedules it"
            );
            assert_eq!(r0.keeps_pod(&pending, job), r0.keeps_pod_group(job));
        }
        for node in ["n1", "n2", "n3", "n4"] {
            let mut n = Node::default();
            n.metadata.name = node.into();
            let bound = pod("default-scheduler", node);
            assert!(
                r0.keeps_node(&n) != r1.keeps_node(&n),
                "{node}: one replica has it"
            );
            assert_eq!(r0.keeps_pod(&bound, "x"), r0.keeps_node(&n));
        }
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
        assert!(
            c.raw.value().unwrap()["metadata"]
                .get("managedFields")
                .is_none()
        );
        let again = convert_kept(ObjectKind::Pod, c.raw.clone()).unwrap();
        assert_eq!(again.raw, c.raw);
        assert!(matches!(again.object, ClusterObject::Pod(_)));
    }

    #[test]
    fn a_malformed_object_is_an_error_naming_it() {
        let v = json!({"metadata": {"name": "q"}, "spec": {"weight": "heavy"}});
        let e = convert(ObjectKind::Queue, v).unwrap_err();
        assert!(e.contains("Queue q"), "{e}");
    }
}
