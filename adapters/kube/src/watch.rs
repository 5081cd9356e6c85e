//! Watches: one list-and-watch loop per watched kind (`reflector`), each turning the API's events
//! into cache events on one channel, so the scheduler loop is the single writer of the cache. A
//! re-list (after an expired watch) deletes what it no longer lists.

use std::collections::HashSet;

use kube::api::{ApiResource, GroupVersionKind};
use tephra_cache::{ClusterEvent, ObjectKind, meta_of};
use tephra_engine::api::ClusterObject;
use tephra_engine::snapshot::ShardingMode;

use crate::flags::Flags;
use crate::objects::{Responsibility, decode_object};
use crate::raw::Raw;
use crate::watched_object::WatchedObject;

/// What the watches tell the scheduler loop.
#[derive(Debug)]
pub enum Feed {
    /// A cache event, with the object as the API holds it for upserts.
    Event(ClusterEvent, Option<Raw>),
    /// The kind has been listed completely at least once.
    Synced(ObjectKind),
}

/// What a kind's list-and-watch loop saw, in order: a list's start, each object it listed and
/// its end (the first list or a re-list), then each change the watch reported.
#[derive(Debug)]
pub enum Event {
    Init,
    InitApply(WatchedObject),
    InitDone,
    Apply(WatchedObject),
    Delete(WatchedObject),
}

/// The API resource of a watched kind.
pub fn api_resource(kind: ObjectKind) -> ApiResource {
    let (group, version, plural) = match kind {
        ObjectKind::Pod => ("", "v1", "pods"),
        ObjectKind::Node => ("", "v1", "nodes"),
        ObjectKind::PodGroup => ("scheduling.volcano.sh", "v1beta1", "podgroups"),
        ObjectKind::Queue => ("scheduling.volcano.sh", "v1beta1", "queues"),
        ObjectKind::PriorityClass => ("scheduling.k8s.io", "v1", "priorityclasses"),
        ObjectKind::HyperNode => ("topology.volcano.sh", "v1alpha1", "hypernodes"),
        ObjectKind::PodDisruptionBudget => ("policy", "v1", "poddisruptionbudgets"),
        ObjectKind::ResourceQuota => ("", "v1", "resourcequotas"),
        ObjectKind::NodeMetrics => ("metrics.k8s.io", "v1beta1", "nodes"),
        ObjectKind::Numatopology => ("nodeinfo.volcano.sh", "v1alpha1", "numatopologies"),
        ObjectKind::Namespace => ("", "v1", "namespaces"),
        ObjectKind::PersistentVolumeClaim => ("", "v1", "persistentvolumeclaims"),
        ObjectKind::PersistentVolume => ("", "v1", "persistentvolumes"),
        ObjectKind::StorageClass => ("storage.k8s.io", "v1", "storageclasses"),
        ObjectKind::CsiNode => ("storage.k8s.io", "v1", "csinodes"),
        ObjectKind::CsiDriver => ("storage.k8s.io", "v1", "csidrivers"),
        ObjectKind::CsiStorageCapacity => ("storage.k8s.io", "v1", "csistoragecapacities"),
        ObjectKind::VolumeAttachment => ("storage.k8s.io", "v1", "volumeattachments"),
        ObjectKind::Service => ("", "v1", "services"),
        ObjectKind::ReplicationController => ("", "v1", "replicationcontrollers"),
        ObjectKind::ReplicaSet => ("apps", "v1", "replicasets"),
        ObjectKind::StatefulSet => ("apps", "v1", "statefulsets"),
        ObjectKind::NodeShard => ("shard.volcano.sh", "v1alpha1", "nodeshards"),
    };
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind.name()), plural)
}

/// The kinds to watch, as Volcano's cache registers its informers (Volcano:
/// pkg/scheduler/cache/cache.go, `addEventHandler`): PriorityClasses with `--priority-class`
/// and their gate, PodDisruptionBudgets and Numatopologies with theirs, ReplicationControllers,
/// ReplicaSets and StatefulSets with WorkLoadSupport, CSIDrivers and CSIStorageCapacities with
/// `--csi-storage`, NodeShards with hard or soft sharding; Namespaces, Services, HyperNodes,
/// ResourceQuotas and the other storage kinds always.
pub fn watched_kinds(flags: &Flags) -> Vec<ObjectKind> {
    let gates = &flags.feature_gates;
    let mut kinds = Vec::new();
    if flags.priority_class && gates.priority_class {
        kinds.push(ObjectKind::PriorityClass);
    }
    kinds.extend([ObjectKind::Namespace, ObjectKind::Queue]);
    if gates.resource_topology {
        kinds.push(ObjectKind::Numatopology);
    }
    kinds.push(ObjectKind::Node);
    kinds.push(ObjectKind::HyperNode);
    kinds.extend([ObjectKind::PodGroup, ObjectKind::Pod]);
    if gates.pod_disruption_budgets {
        kinds.push(ObjectKind::PodDisruptionBudget);
    }
    kinds.push(ObjectKind::Service);
    if gates.workload_support {
        kinds.extend([
            ObjectKind::ReplicationController,
            ObjectKind::ReplicaSet,
            ObjectKind::StatefulSet,
        ]);
    }
    kinds.push(ObjectKind::ResourceQuota);
    kinds.extend([
        ObjectKind::PersistentVolumeClaim,
        ObjectKind::PersistentVolume,
        ObjectKind::StorageClass,
        ObjectKind::VolumeAttachment,
        ObjectKind::CsiNode,
    ]);
    if flags.csi_storage {
        kinds.extend([ObjectKind::CsiDriver, ObjectKind::CsiStorageCapacity]);
    }
    if flags.scheduler_sharding_mode != ShardingMode::None {
        kinds.push(ObjectKind::NodeShard);
    }
    kinds
}

/// Turns one kind's watch events into feed items, remembering what it has reported so a
/// re-list can delete the objects that are gone.
#[derive(Debug)]
pub struct KindFeed {
    kind: ObjectKind,
    keep: Responsibility,
    known: HashSet<(String, String)>,
    relisted: HashSet<(String, String)>,
    synced: bool,
}

impl KindFeed {
    pub fn new(kind: ObjectKind, keep: Responsibility) -> Self {
        KindFeed {
            kind,
            keep,
            known: HashSet::new(),
            relisted: HashSet::new(),
            synced: false,
        }
    }

    /// Whether the kind has been listed completely (or found not served) once.
    pub fn is_synced(&self) -> bool {
        self.synced
    }

    /// How many objects of the kind the cache holds from this feed.
    pub fn known_objects(&self) -> usize {
        self.known.len()
    }

    /// The feed items for one watch event.
    pub fn on_event(&mut self, event: Event) -> Vec<Feed> {
        match event {
            Event::Init => {
                self.relisted.clear();
                Vec::new()
            }
            Event::InitApply(o) => {
                let out = self.apply(o);
                self.relisted.extend(self.key_of_last(&out));
                out
            }
            Event::Apply(o) => self.apply(o),
            Event::Delete(o) => {
                let key = (
                    o.metadata.namespace.clone().unwrap_or_default(),
                    o.metadata.name.clone().unwrap_or_default(),
                );
                self.known.remove(&key);
                vec![self.delete(key)]
            }
            Event::InitDone => {
                let gone: Vec<_> = self.known.difference(&self.relisted).cloned().collect();
                let mut out: Vec<Feed> = gone.into_iter().map(|k| self.delete(k)).collect();
                self.known = std::mem::take(&mut self.relisted);
                if !self.synced {
                    self.synced = true;
                    out.push(Feed::Synced(self.kind));
                }
                out
            }
        }
    }

    /// The API server does not serve the kind (its CRD is not installed): it has no objects
    /// until it does, so the first such answer counts as a complete list. The watch keeps
    /// retrying and lists the kind once the CRD appears.
    pub fn on_not_served(&mut self) -> Option<Feed> {
        if self.synced {
            return None;
        }
        self.synced = true;
        Some(Feed::Synced(self.kind))
    }

    fn key_of_last(&self, out: &[Feed]) -> Option<(String, String)> {
        match out.last()? {
            Feed::Event(ClusterEvent::Upsert(o), _) => {
                let m = meta_of(o);
                Some((m.namespace.clone(), m.name.clone()))
            }
            _ => None,
        }
    }

    fn delete(&self, (namespace, name): (String, String)) -> Feed {
        Feed::Event(
            ClusterEvent::Delete {
                kind: self.kind,
                namespace,
                name,
            },
            None,
        )
    }

    fn apply(&mut self, o: WatchedObject) -> Vec<Feed> {
        let WatchedObject {
            metadata,
            json,
            raw,
        } = o;
        // Replicas split jobs by their first owner's name (the object's own without one).
        let job_key = metadata
            .owner_references
            .as_ref()
            .and_then(|r| r.first())
            .map(|r| r.name.as_str())
            .or(metadata.name.as_deref())
            .unwrap_or_default();
        let object = match decode_object(self.kind, &json) {
            Ok(o) => o,
            Err(e) => {
                tracing::warn!("ignoring a malformed object: {e}");
                return Vec::new();
            }
        };
        drop(json);
        let meta = meta_of(&object);
        let key = (meta.namespace.clone(), meta.name.clone());
        let kept = match &object {
            ClusterObject::Pod(p) => self.keep.keeps_pod(p, job_key),
            ClusterObject::PodGroup(_) => self.keep.keeps_pod_group(job_key),
            ClusterObject::Node(n) => self.keep.keeps_node(n) || self.known.contains(&key),
            _ => true,
        };
        if !kept {
            return if self.known.remove(&key) {
                vec![self.delete(key)]
            } else {
                Vec::new()
            };
        }
        self.known.insert(key);
        vec![Feed::Event(ClusterEvent::Upsert(object), Some(raw))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(kind: ObjectKind, name: &str, extra: serde_json::Value) -> WatchedObject {
        let mut v = json!({"apiVersion": "v1", "kind": kind.name(), "metadata": {"name": name, "namespace": "ns"}});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        WatchedObject::from_json(v.to_string().as_bytes()).unwrap()
    }

    fn keep() -> Responsibility {
        Responsibility {
            scheduler_names: vec!["volcano".into()],
            ..Default::default()
        }
    }

    fn names(out: &[Feed]) -> Vec<String> {
        out.iter()
            .map(|f| match f {
                Feed::Event(ClusterEvent::Upsert(o), _) => format!("+{}", meta_of(o).name),
                Feed::Event(ClusterEvent::Delete { name, .. }, _) => format!("-{name}"),
                Feed::Synced(k) => format!("synced {k}"),
            })
            .collect()
    }

    #[test]
    fn relist_deletes_objects_that_are_no_longer_listed() {
        let mut f = KindFeed::new(ObjectKind::Queue, keep());
        f.on_event(Event::Init);
        f.on_event(Event::InitApply(object(ObjectKind::Queue, "a", json!({}))));
        f.on_event(Event::InitApply(object(ObjectKind::Queue, "b", json!({}))));
        assert_eq!(names(&f.on_event(Event::InitDone)), ["synced Queue"]);
        f.on_event(Event::Init);
        f.on_event(Event::InitApply(object(ObjectKind::Queue, "b", json!({}))));
        assert_eq!(
            names(&f.on_event(Event::InitDone)),
            ["-a"],
            "synced is reported once"
        );
    }

    #[test]
    fn pods_of_other_schedulers_are_left_out_until_bound() {
        let mut f = KindFeed::new(ObjectKind::Pod, keep());
        let other = |node: &str| {
            object(
                ObjectKind::Pod,
                "p",
                json!({"spec": {"schedulerName": "default-scheduler", "nodeName": node}}),
            )
        };
        assert!(f.on_event(Event::Apply(other(""))).is_empty());
        assert_eq!(names(&f.on_event(Event::Apply(other("n1")))), ["+p"]);
    }

    #[test]
    fn a_malformed_object_is_skipped_not_fatal() {
        let mut f = KindFeed::new(ObjectKind::Queue, keep());
        let bad = object(ObjectKind::Queue, "q", json!({"spec": {"weight": "heavy"}}));
        assert!(f.on_event(Event::Apply(bad)).is_empty());
    }

    #[test]
    fn a_kind_the_server_does_not_serve_counts_as_synced_once() {
        let mut f = KindFeed::new(ObjectKind::HyperNode, keep());
        let synced: Vec<Feed> = f.on_not_served().into_iter().collect();
        assert_eq!(names(&synced), ["synced HyperNode"]);
        assert!(f.on_not_served().is_none());
        f.on_event(Event::Init);
        f.on_event(Event::InitApply(object(
            ObjectKind::HyperNode,
            "s0",
            json!({}),
        )));
        assert_eq!(
            names(&f.on_event(Event::InitDone)),
            Vec::<String>::new(),
            "a later list is not reported as a first sync again"
        );
    }

    #[test]
    fn volcanos_defaults_watch_budgets_hyper_nodes_numatopologies_and_storage() {
        let flags = |args: &[&str]| {
            let mut all = vec!["vc-scheduler"];
            all.extend_from_slice(args);
            <Flags as clap::Parser>::try_parse_from(all).unwrap()
        };
        let kinds = watched_kinds(&flags(&[]));
        for k in [
            ObjectKind::PriorityClass,
            ObjectKind::Namespace,
            ObjectKind::HyperNode,
            ObjectKind::PodDisruptionBudget,
            ObjectKind::ResourceQuota,
            ObjectKind::Numatopology,
            ObjectKind::Pod,
            ObjectKind::PersistentVolumeClaim,
            ObjectKind::CsiStorageCapacity,
            ObjectKind::Service,
            ObjectKind::ReplicaSet,
            ObjectKind::StatefulSet,
            ObjectKind::ReplicationController,
        ] {
            assert!(kinds.contains(&k), "{k} missing from {kinds:?}");
        }
        let kinds = watched_kinds(&flags(&[
            "--feature-gates=PodDisruptionBudgetsSupport=false,PriorityClass=false,WorkLoadSupport=false,ResourceTopology=false",
            "--csi-storage=false",
        ]));
        for k in [
            ObjectKind::PodDisruptionBudget,
            ObjectKind::PriorityClass,
            ObjectKind::Numatopology,
            ObjectKind::CsiDriver,
            ObjectKind::CsiStorageCapacity,
            ObjectKind::ReplicaSet,
            ObjectKind::StatefulSet,
            ObjectKind::ReplicationController,
        ] {
            assert!(!kinds.contains(&k), "{k} watched in {kinds:?}");
        }
        assert!(kinds.contains(&ObjectKind::CsiNode));
        assert!(!kinds.contains(&ObjectKind::NodeShard), "not sharded");
        assert!(
            watched_kinds(&flags(&["--scheduler-sharding-mode=hard"]))
                .contains(&ObjectKind::NodeShard)
        );
        assert!(
            kinds.contains(&ObjectKind::Service),
            "services are always read"
        );
    }

    #[test]
    fn replicas_split_pod_groups_by_their_first_owners_name() {
        let env = |k: &str| match k {
            "MULTI_SCHEDULER_ENABLE" => Some("true".to_string()),
            "SCHEDULER_NUM" => Some("2".to_string()),
            "SCHEDULER_POD_NAME" => Some("vc-0".to_string()),
            _ => None,
        };
        let ring = crate::multi_scheduler::MultiScheduler::from_env(env)
            .unwrap()
            .unwrap();
        let jobs: Vec<String> = (0..200).map(|i| format!("job-{i}")).collect();
        let mine = jobs.iter().find(|n| ring.owns(n)).unwrap();
        let theirs = jobs.iter().find(|n| !ring.owns(n)).unwrap();
        let mut f = KindFeed::new(
            ObjectKind::PodGroup,
            Responsibility {
                replicas: Some(std::sync::Arc::new(ring.clone())),
                ..keep()
            },
        );
        let owned_by = |name: &str, owner: &str| {
            let owner = json!({"metadata": {"ownerReferences": [
                {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": owner, "uid": "u"}]}});
            let mut pg = object(ObjectKind::PodGroup, name, json!({}));
            pg.metadata.owner_references =
                serde_json::from_value(owner["metadata"]["ownerReferences"].clone()).unwrap();
            pg
        };
        assert_eq!(
            names(&f.on_event(Event::Apply(owned_by(theirs, mine)))),
            [format!("+{theirs}")]
        );
        assert!(f.on_event(Event::Apply(owned_by(mine, theirs))).is_empty());
        let own_name = object(ObjectKind::PodGroup, mine, json!({}));
        assert_eq!(
            names(&f.on_event(Event::Apply(own_name))),
            [format!("+{mine}")]
        );
    }

    #[test]
    fn delete_is_forwarded() {
        let mut f = KindFeed::new(ObjectKind::PodGroup, keep());
        let pg = object(ObjectKind::PodGroup, "pg", json!({}));
        f.on_event(Event::Apply(pg.clone()));
        assert_eq!(names(&f.on_event(Event::Delete(pg))), ["-pg"]);
    }
}
