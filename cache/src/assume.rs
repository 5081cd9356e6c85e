//! `assume`: write a cycle's decisions into the cluster state as the API server would hold them
//! once Volcano's binder, evictor and status updater have run, so the next cycle sees them.

use std::sync::Arc;

use rayon::prelude::*;
use tephra_engine::api::{
    BOUND_BY_CONTROLLER_ANNOTATION, Pod, PodCondition, SELECTED_NODE_ANNOTATION, Time,
};
use tephra_engine::arrival::prepare_pod_group;
use tephra_engine::framework::{Decisions, PodConditionUpdate, VolumeBinds};

use crate::ClusterState;
use crate::state::{key, prepare_pods};

/// The UID the snapshot gives a pod (its `namespace/name` when the manifest has none).
fn snapshot_uid(pod: &Pod) -> String {
    if pod.metadata.uid.is_empty() {
        pod.metadata.key()
    } else {
        pod.metadata.uid.clone()
    }
}

/// Sets the pod's `PodScheduled` condition, replacing any earlier one; its transition time is
/// `now` when the status changes, as the API server keeps it (`cdp` counts from it).
fn set_scheduled_condition(pod: &mut Pod, status: &str, reason: &str, message: &str, now: Time) {
    let conditions = &mut pod.status.conditions;
    let earlier = conditions.iter().position(|c| c.type_ == "PodScheduled");
    let kept_time = earlier
        .map(|i| &conditions[i])
        .filter(|c| c.status == status)
        .and_then(|c| c.last_transition_time);
    let condition = PodCondition {
        type_: "PodScheduled".into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: Some(kept_time.unwrap_or(now)),
    };
    match earlier {
        Some(i) => conditions[i] = condition,
        None => conditions.push(condition),
    }
}

/// True when `pod` already holds what `c` would write: a `PodScheduled=False` condition with
/// its reason, message and a transition time, and its nominated node. The API server then gets
/// no write (Volcano: pkg/scheduler/cache/cache.go, `taskUnschedulable` asks
/// `podConditionHaveUpdate`), so no new version of the pod comes back, and the cache makes none
/// either.
fn condition_held(pod: &Pod, c: &PodConditionUpdate) -> bool {
    let held = pod
        .status
        .conditions
        .iter()
        .find(|x| x.type_ == "PodScheduled")
        .is_some_and(|x| {
            x.status == "False"
                && x.reason == c.reason
                && x.message == *c.message
                && x.last_transition_time.is_some()
        });
    held && c
        .nominated_node
        .as_ref()
        .is_none_or(|n| *n == pod.status.nominated_node_name)
}

impl ClusterState {
    /// Writes a bind's volume work as the binder leaves it: each volume's `claimRef` names its
    /// claim (marked bound by a controller when it named none or another), each claim to
    /// provision carries its node. The watch's next versions replace them.
    fn assume_volume_work(&mut self, work: &VolumeBinds, node: &str) {
        let storage = Arc::make_mut(&mut self.storage);
        for (name, claim) in &work.volumes {
            if let Some(pv) = storage.volumes.get_mut(name) {
                let pv = Arc::make_mut(pv);
                let annotations = &mut pv.metadata.annotations;
                if pv.spec.claim_ref.as_ref() != Some(claim)
                    && !annotations.contains_key(BOUND_BY_CONTROLLER_ANNOTATION)
                {
                    annotations.insert(BOUND_BY_CONTROLLER_ANNOTATION.into(), "yes".into());
                }
                pv.spec.claim_ref = Some(claim.clone());
            }
        }
        for (namespace, name) in &work.provisions {
            if let Some(claim) = storage.claims.get_mut(&key(namespace, name)) {
                Arc::make_mut(claim)
                    .metadata
                    .meta
                    .annotations
                    .insert(SELECTED_NODE_ANNOTATION.into(), node.into());
            }
        }
        self.storage_changes += 1;
    }

    /// Applies `decisions`: a bind sets the pod's `spec.nodeName` (so it counts on its node next
    /// cycle) and the bind's annotations (the API server copies a Binding's onto the pod; they
    /// say which devices the pod holds) and marks it scheduled, and does its volume work first, an eviction marks the pod deleting at `now` (so it is
    /// Releasing), changed PodGroup statuses, queue `status.allocated` and unschedulable pod
    /// conditions are written. A decision
    /// about a pod that is gone or was recreated (other UID) is dropped, as the API would refuse it.
    pub fn assume(&mut self, decisions: &Decisions, now: Time) {
        // The cycle is over: what its snapshot let go of can be freed now.
        self.released.free();
        let decided = decisions.binds.len() + decisions.evictions.len();
        self.forget_task_tables_if_mostly_replaced(decided + decisions.pod_conditions.len());
        // Each replaced pod's old version is then freed as its new one is made, instead of both
        // living until the next snapshot.
        if let Some(tables) = &mut self.task_tables {
            tables.let_go_of(&decisions.replaced_tasks);
        }
        let mut changed = Vec::new();
        for b in &decisions.binds {
            changed.extend(self.change_live_pod(&b.namespace, &b.name, &b.uid, |pod| {
                pod.spec.node_name = b.node.clone();
                pod.metadata
                    .annotations
                    .extend(b.annotations.iter().map(|(k, v)| (k.clone(), v.clone())));
                set_scheduled_condition(pod, "True", "", "", now);
            }));
            if let Some(work) = &b.volumes {
                self.assume_volume_work(work, &b.node);
            }
        }
        for b in &decisions.numa_bookings {
            self.numa_bookings.add(b);
        }
        for e in &decisions.evictions {
            changed.extend(self.change_live_pod(&e.namespace, &e.name, &e.uid, |pod| {
                pod.metadata.deletion_timestamp.get_or_insert(now);
            }));
        }
        for c in &decisions.pod_conditions {
            let k = key(&c.namespace, &c.name);
            if self.pods.get(&k).is_some_and(|pod| condition_held(pod, c)) {
                continue;
            }
            changed.extend(self.pods.change(&k, |pod| {
                set_scheduled_condition(pod, "False", c.reason, &c.message, now);
                if let Some(node) = &c.nominated_node {
                    pod.status.nominated_node_name = node.clone();
                }
            }));
        }
        // The assumed pods are new versions: prepared now, as arrivals are, not by the next
        // cycle.
        prepare_pods(&changed);
        let mut changed_groups = Vec::new();
        for pg in decisions.pod_groups.iter().filter(|pg| pg.changed) {
            let k = key(&pg.namespace, &pg.name);
            if let Some(object) = self.pod_groups.get_mut(&k) {
                object.status = pg.status.clone();
                changed_groups.push(k);
            }
        }
        let pod_groups = &self.pod_groups;
        changed_groups
            .par_iter()
            .filter_map(|k| pod_groups.get(k))
            .for_each(|pg| prepare_pod_group(pg));
        for q in &decisions.queues {
            if let Some(object) = self.queues.get_mut(&key("", &q.name)) {
                object.status.allocated = q.allocated.clone();
            }
        }
    }

    /// Changes the pod `namespace/name` unless it is gone or was recreated (other UID); returns
    /// the new version.
    fn change_live_pod(
        &mut self,
        namespace: &str,
        name: &str,
        uid: &str,
        change: impl FnOnce(&mut Pod),
    ) -> Option<Arc<Pod>> {
        let k = key(namespace, name);
        let same = self.pods.get(&k).is_some_and(|p| snapshot_uid(p) == uid);
        if same {
            self.pods.change(&k, change)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::api::{ClusterObject, PodGroup, PodGroupStatus, Queue, ResourceList};
    use tephra_engine::framework::{
        Bind, Eviction, PodConditionUpdate, PodGroupUpdate, QueueUpdate,
    };
    use tephra_engine::model::{Quantity, TaskStatus};

    const NOW: Time = Time(1_000);

    fn pod(name: &str, uid: &str) -> ClusterObject {
        let mut p = Pod::default();
        p.metadata.namespace = "ns".into();
        p.metadata.name = name.into();
        p.metadata.uid = uid.into();
        p.status.phase = "Pending".into();
        ClusterObject::Pod(Box::new(p))
    }

    fn bind(name: &str, uid: &str, node: &str) -> Bind {
        Bind {
            namespace: "ns".into(),
            name: name.into(),
            uid: uid.into(),
            node: node.into(),
            volumes: None,
            node_lock: None,
            annotations: Default::default(),
        }
    }

    #[test]
    fn bind_sets_node_name_so_the_pod_is_bound_next_cycle() {
        let mut s = ClusterState::from_objects([pod("p", "u1")]);
        s.assume(
            &Decisions {
                binds: vec![bind("p", "u1", "n1")],
                ..Default::default()
            },
            NOW,
        );
        let p = s.pod("ns", "p").unwrap();
        assert_eq!(p.spec.node_name, "n1");
        let c = &p.status.conditions[0];
        assert_eq!(
            (c.type_.as_str(), c.status.as_str()),
            ("PodScheduled", "True")
        );
        assert_eq!(
            c.last_transition_time,
            Some(NOW),
            "the bind is when it was scheduled"
        );
    }

    #[test]
    fn a_binds_annotations_land_on_the_pod_so_the_next_cycle_counts_its_devices() {
        let mut s = ClusterState::from_objects([pod("p", "u1")]);
        let mut b = bind("p", "u1", "n1");
        b.annotations = [("volcano.sh/gpu-index".to_string(), "1".to_string())].into();
        s.assume(
            &Decisions {
                binds: vec![b],
                ..Default::default()
            },
            NOW,
        );
        let p = s.pod("ns", "p").unwrap();
        assert_eq!(p.metadata.annotations["volcano.sh/gpu-index"], "1");
    }

    #[test]
    fn a_bind_with_volume_work_binds_the_volume_and_selects_the_claims_node() {
        use tephra_engine::api::{ClaimReference, PersistentVolume, PersistentVolumeClaim};
        let mut pv = PersistentVolume::default();
        pv.metadata.name = "pv1".into();
        let mut claim = PersistentVolumeClaim::default();
        claim.metadata.meta.namespace = "ns".into();
        claim.metadata.meta.name = "c2".into();
        let mut s = ClusterState::from_objects([
            pod("p", "u1"),
            ClusterObject::PersistentVolume(Box::new(pv)),
            ClusterObject::PersistentVolumeClaim(Box::new(claim)),
        ]);
        let reference = ClaimReference {
            namespace: "ns".into(),
            name: "c1".into(),
            uid: "c1".into(),
        };
        let mut b = bind("p", "u1", "n1");
        b.volumes = Some(Box::new(VolumeBinds {
            volumes: vec![("pv1".into(), reference.clone())],
            provisions: vec![("ns".into(), "c2".into())],
            ..Default::default()
        }));
        let before = s.snapshot("default").storage.clone();
        s.assume(
            &Decisions {
                binds: vec![b],
                ..Default::default()
            },
            NOW,
        );
        let after = s.snapshot("default").storage.clone();
        let pv = &after.volumes["pv1"];
        assert_eq!(pv.spec.claim_ref.as_ref(), Some(&reference));
        assert_eq!(
            pv.metadata.annotations[BOUND_BY_CONTROLLER_ANNOTATION],
            "yes"
        );
        let claim = after.claim("ns", "c2").unwrap();
        assert_eq!(
            claim.metadata.meta.annotations[SELECTED_NODE_ANNOTATION],
            "n1"
        );
        assert!(
            before.volumes["pv1"].spec.claim_ref.is_none(),
            "the earlier snapshot keeps its version"
        );
    }

    #[test]
    fn an_assumed_pod_is_prepared_like_an_arrival() {
        use tephra_engine::plugins::k8s::pod_info::PodInfo;
        let mut s = ClusterState::from_objects([pod("p", "u1")]);
        s.assume(
            &Decisions {
                binds: vec![bind("p", "u1", "n1")],
                ..Default::default()
            },
            NOW,
        );
        let p = s.pod("ns", "p").unwrap();
        assert_eq!(p.spec.node_name, "n1", "a new version");
        let info = p
            .memo
            .get_or_init_ref::<PodInfo>(|| panic!("prepared by assume"));
        assert!(info.is_some());
    }

    #[test]
    fn next_snapshot_sees_a_bound_pod_on_its_node_and_an_evicted_one_releasing() {
        let mut node = tephra_engine::api::Node::default();
        node.metadata.name = "n1".into();
        let mut running = pod("victim", "u2");
        if let ClusterObject::Pod(p) = &mut running {
            p.status.phase = "Running".into();
            p.spec.node_name = "n1".into();
        }
        let mut s = ClusterState::from_objects([
            ClusterObject::Node(Box::new(node)),
            pod("p", "u1"),
            running,
        ]);
        let evict = Eviction {
            namespace: "ns".into(),
            name: "victim".into(),
            uid: "u2".into(),
            reason: "preempt".into(),
        };
        s.assume(
            &Decisions {
                binds: vec![bind("p", "u1", "n1")],
                evictions: vec![evict],
                ..Default::default()
            },
            NOW,
        );
        let snap = s.snapshot("default");
        let status = |name: &str| {
            snap.tasks.status[snap.tasks.name.iter().position(|n| &**n == name).unwrap()]
        };
        assert_eq!(status("p"), TaskStatus::Bound);
        assert_eq!(status("victim"), TaskStatus::Releasing);
        assert!(snap.tasks.node.iter().all(|n| *n == snap.nodes.id("n1")));
    }

    #[test]
    fn bind_matches_the_key_uid_of_a_pod_without_uid() {
        let mut s = ClusterState::from_objects([pod("p", "")]);
        s.assume(
            &Decisions {
                binds: vec![bind("p", "ns/p", "n1")],
                ..Default::default()
            },
            NOW,
        );
        assert_eq!(s.pod("ns", "p").unwrap().spec.node_name, "n1");
    }

    #[test]
    fn decision_for_a_recreated_pod_is_dropped() {
        let mut s = ClusterState::from_objects([pod("p", "new")]);
        s.assume(
            &Decisions {
                binds: vec![bind("p", "old", "n1")],
                ..Default::default()
            },
            NOW,
        );
        assert_eq!(s.pod("ns", "p").unwrap().spec.node_name, "");
    }

    #[test]
    fn eviction_marks_the_pod_deleting_once() {
        let mut s = ClusterState::from_objects([pod("p", "u1")]);
        let evict = Eviction {
            namespace: "ns".into(),
            name: "p".into(),
            uid: "u1".into(),
            reason: "preempt".into(),
        };
        let d = Decisions {
            evictions: vec![evict],
            ..Default::default()
        };
        s.assume(&d, NOW);
        s.assume(&d, Time(2_000));
        assert_eq!(
            s.pod("ns", "p").unwrap().metadata.deletion_timestamp,
            Some(NOW)
        );
    }

    #[test]
    fn only_changed_pod_group_statuses_are_written() {
        let mut a = PodGroup::default();
        a.metadata.namespace = "ns".into();
        a.metadata.name = "a".into();
        let mut b = a.clone();
        b.metadata.name = "b".into();
        let mut s = ClusterState::from_objects([
            ClusterObject::PodGroup(Box::new(a)),
            ClusterObject::PodGroup(Box::new(b)),
        ]);
        let running = PodGroupStatus {
            phase: "Running".into(),
            ..Default::default()
        };
        let update = |name: &str, changed| PodGroupUpdate {
            namespace: "ns".into(),
            name: name.into(),
            status: running.clone(),
            changed,
        };
        s.assume(
            &Decisions {
                pod_groups: vec![update("a", true), update("b", false)],
                ..Default::default()
            },
            NOW,
        );
        assert_eq!(s.pod_group("ns", "a").unwrap().status.phase, "Running");
        assert_eq!(s.pod_group("ns", "b").unwrap().status.phase, "");
    }

    #[test]
    fn queue_allocated_is_written() {
        let mut q = Queue::default();
        q.metadata.name = "q1".into();
        let mut s = ClusterState::from_objects([ClusterObject::Queue(Box::new(q))]);
        let allocated: ResourceList = [("cpu".to_string(), Quantity::parse("2").unwrap())].into();
        let d = Decisions {
            queues: vec![QueueUpdate {
                name: "q1".into(),
                allocated: allocated.clone(),
            }],
            ..Default::default()
        };
        s.assume(&d, NOW);
        assert_eq!(s.queue("q1").unwrap().status.allocated, allocated);
    }

    #[test]
    fn unschedulable_condition_replaces_the_previous_one_and_nominates() {
        let mut s = ClusterState::from_objects([pod("p", "u1")]);
        let cond = |message: &str, nominated: Option<&str>| PodConditionUpdate {
            namespace: "ns".into(),
            name: "p".into(),
            reason: "Unschedulable",
            message: message.into(),
            nominated_node: nominated.map(str::to_string),
        };
        s.assume(
            &Decisions {
                pod_conditions: vec![cond("first", None)],
                ..Default::default()
            },
            NOW,
        );
        s.assume(
            &Decisions {
                pod_conditions: vec![cond("second", Some("n2"))],
                ..Default::default()
            },
            Time(NOW.0 + 5),
        );
        let p = s.pod("ns", "p").unwrap();
        assert_eq!(p.status.conditions.len(), 1);
        assert_eq!(p.status.conditions[0].message, "second");
        let held = s.pods.get("ns/p").unwrap().clone();
        s.assume(
            &Decisions {
                pod_conditions: vec![cond("second", None), cond("second", Some("n2"))],
                ..Default::default()
            },
            Time(NOW.0 + 9),
        );
        assert!(
            Arc::ptr_eq(s.pods.get("ns/p").unwrap(), &held),
            "a condition the pod already holds makes no new version"
        );
        let p = s.pod("ns", "p").unwrap();
        assert_eq!(
            p.status.conditions[0].last_transition_time,
            Some(NOW),
            "still False: the transition time is kept"
        );
        assert_eq!(p.status.nominated_node_name, "n2");
    }
}
