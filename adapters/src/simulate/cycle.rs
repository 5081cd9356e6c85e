//! Scheduling cycles over the cluster state through the cycle driver, each then reported and
//! the offline cluster let catch up.

use std::collections::BTreeMap;
use std::sync::Arc;

use tephra_cache::ClusterState;
use tephra_cache::cycle::{CycleDriver, CycleError};
use tephra_engine::api::Pod;
use tephra_engine::api::{PodGroupStatus, Time};
use tephra_engine::config::SchedulerConfig;
use tephra_engine::framework::{Decisions, PluginRegistry};
use tephra_engine::model::TaskStatus;
use tephra_engine::snapshot::{GROUP_NAME_ANNOTATION, Snapshot};

use crate::offline::{DEFAULT_QUEUE, SCHEDULER_START, START_TIME};

/// A job that is still waiting, with the reason of each of its waiting pods.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    /// `ns/podgroup`.
    pub job: String,
    /// `(ns/pod, message)`, in task order.
    pub pods: Vec<(String, String)>,
}

/// What one cycle decided, keyed the way people read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CycleReport {
    /// `(ns/pod, node)` in decision order.
    pub binds: Vec<(String, String)>,
    /// `(ns/pod, reason)` in decision order.
    pub evictions: Vec<(String, String)>,
    /// `(ns/pod, node)` of tasks left pipelined.
    pub pipelined: Vec<(String, String)>,
    /// Every session job's PodGroup status, by `ns/name`.
    pub pod_groups: BTreeMap<String, PodGroupStatus>,
    /// Jobs with tasks that were not placed, in job order.
    pub waiting: Vec<Waiting>,
    /// `(ns/pod, why)` of pending pods outside any session job: the reason names the missing
    /// PodGroup or queue.
    pub orphans: Vec<(String, String)>,
}

/// Why a pending pod is in no session job, naming what is missing.
fn orphan_reason(state: &ClusterState, pod: &Pod) -> String {
    let ns = &pod.metadata.namespace;
    let group = pod
        .metadata
        .annotations
        .get(GROUP_NAME_ANNOTATION)
        .map_or("", String::as_str);
    if group.is_empty() {
        return format!(
            "names no PodGroup (annotation {GROUP_NAME_ANNOTATION}); in a cluster Volcano's controllers create one"
        );
    }
    let Some(pg) = state.pod_group(ns, group) else {
        return format!("its PodGroup {ns}/{group} is not in the input");
    };
    let queue = if pg.spec.queue.is_empty() {
        DEFAULT_QUEUE
    } else {
        &pg.spec.queue
    };
    if state.queue(queue).is_none() {
        return format!("queue {queue} of its PodGroup {ns}/{group} is not in the input");
    }
    format!("its PodGroup {ns}/{group} did not enter the session")
}

impl CycleReport {
    fn new(state: &ClusterState, snap: &Snapshot, d: &Decisions) -> Self {
        let key = |ns: &str, name: &str| format!("{ns}/{name}");
        let mut reasons: BTreeMap<String, &str> = BTreeMap::new();
        for c in &d.pod_conditions {
            reasons.insert(key(&c.namespace, &c.name), &c.message);
        }
        let waiting = snap
            .jobs
            .ids()
            .filter_map(|j| {
                let pods: Vec<(String, String)> = snap.jobs.tasks[j.idx()]
                    .iter()
                    .map(|&t| snap.tasks.key(t))
                    .filter_map(|pod| reasons.get(&pod).map(|m| (pod, m.to_string())))
                    .collect();
                (!pods.is_empty()).then(|| Waiting {
                    job: snap.jobs.uid[j.idx()].to_string(),
                    pods,
                })
            })
            .collect();
        let orphans = (0..snap.tasks.len())
            .filter(|&t| snap.tasks.job[t].is_none() && snap.tasks.status[t] == TaskStatus::Pending)
            .map(|t| {
                (
                    key(&snap.tasks.namespace[t], &snap.tasks.name[t]),
                    orphan_reason(state, &snap.tasks.pod[t]),
                )
            })
            .collect();
        CycleReport {
            binds: d
                .binds
                .iter()
                .map(|b| (key(&b.namespace, &b.name), b.node.clone()))
                .collect(),
            evictions: d
                .evictions
                .iter()
                .map(|e| (key(&e.namespace, &e.name), e.reason.clone()))
                .collect(),
            pipelined: d
                .pipelined
                .iter()
                .map(|p| (key(&p.namespace, &p.name), p.node.clone()))
                .collect(),
            pod_groups: d
                .pod_groups
                .iter()
                .map(|pg| (key(&pg.namespace, &pg.name), pg.status.clone()))
                .collect(),
            waiting,
            orphans,
        }
    }
}

/// Runs `cycles` cycles on `state` and reports each.
pub fn run_cycles(
    state: &mut ClusterState,
    conf: &SchedulerConfig,
    registry: &PluginRegistry,
    cycles: u32,
) -> Result<Vec<CycleReport>, CycleError> {
    let driver =
        CycleDriver::new(Arc::new(conf.clone()), DEFAULT_QUEUE).started_at(SCHEDULER_START);
    let mut reports = Vec::new();
    for cycle in 1..=cycles {
        // One second apart, Volcano's default scheduling period.
        let now = Time(START_TIME.0 + i64::from(cycle) - 1);
        let uid = format!("tephra-cycle-{cycle}").into();
        let cycle = driver.decide(state, registry, now, uid, &mut ())?;
        // Read before assuming, which changes no PodGroup spec or queue the report reads.
        reports.push(CycleReport::new(state, &cycle.snapshot, &cycle.decisions));
        cycle.assume(state, now);
        state.complete_offline();
    }
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::api::{ClusterObject, Pod, PodGroup, Queue};
    use tephra_engine::framework::{Bind, PodConditionUpdate};

    fn objects() -> Vec<ClusterObject> {
        let mut q = Queue::default();
        q.metadata.name = "default".into();
        let mut pg = PodGroup::default();
        pg.metadata.namespace = "ns".into();
        pg.metadata.name = "pg".into();
        pg.spec.min_member = 2;
        let pod = |name: &str, group: &str| {
            let mut p = Pod::default();
            p.metadata.namespace = "ns".into();
            p.metadata.name = name.into();
            if !group.is_empty() {
                p.metadata
                    .annotations
                    .insert("scheduling.k8s.io/group-name".into(), group.into());
            }
            ClusterObject::Pod(Box::new(p))
        };
        vec![
            ClusterObject::Queue(Box::new(q)),
            ClusterObject::PodGroup(Box::new(pg)),
            pod("a", "pg"),
            pod("b", "pg"),
            pod("loose", ""),
        ]
    }

    #[test]
    fn report_groups_waiting_pods_by_job_and_lists_orphans() {
        let mut state = ClusterState::from_objects(objects());
        let snap = state.snapshot(DEFAULT_QUEUE);
        let cond = |name: &str, message: &str| PodConditionUpdate {
            namespace: "ns".into(),
            name: name.into(),
            reason: "Unschedulable",
            message: message.into(),
            nominated_node: None,
        };
        let d = Decisions {
            binds: vec![Bind {
                namespace: "ns".into(),
                name: "x".into(),
                uid: "ns/x".into(),
                node: "n1".into(),
                volumes: None,
                node_lock: None,
                annotations: Default::default(),
            }],
            pod_conditions: vec![cond("b", "no room"), cond("a", "no room")],
            ..Default::default()
        };
        let r = CycleReport::new(&state, &snap, &d);
        assert_eq!(r.binds, [("ns/x".to_string(), "n1".to_string())]);
        assert_eq!(r.waiting.len(), 1);
        assert_eq!(r.waiting[0].job, "ns/pg");
        assert_eq!(
            r.waiting[0]
                .pods
                .iter()
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>(),
            ["ns/a", "ns/b"]
        );
        assert_eq!(r.orphans.len(), 1);
        assert_eq!(r.orphans[0].0, "ns/loose");
        assert!(r.orphans[0].1.starts_with("names no PodGroup"), "{r:?}");
    }

    #[test]
    fn an_orphans_reason_names_the_missing_pod_group_or_queue() {
        let mut objects = objects();
        let ClusterObject::PodGroup(pg) = &mut objects[1] else {
            unreachable!("the second object is the PodGroup")
        };
        pg.spec.queue = "gone".into();
        let mut pod = Pod::default();
        pod.metadata.namespace = "ns".into();
        pod.metadata.name = "lost".into();
        pod.metadata
            .annotations
            .insert(GROUP_NAME_ANNOTATION.into(), "nowhere".into());
        let state = ClusterState::from_objects(objects);
        assert_eq!(
            orphan_reason(&state, &pod),
            "its PodGroup ns/nowhere is not in the input"
        );
        let a = state.pod("ns", "a").unwrap();
        assert_eq!(
            orphan_reason(&state, a),
            "queue gone of its PodGroup ns/pg is not in the input"
        );
    }

    #[test]
    fn every_cycle_reports_every_pod_group() {
        let mut state = ClusterState::from_objects(objects());
        let conf = SchedulerConfig::parse("actions: allocate\n").unwrap();
        let reports = run_cycles(&mut state, &conf, &PluginRegistry::new(), 2).unwrap();
        assert_eq!(reports.len(), 2);
        assert!(reports.iter().all(|r| r.pod_groups.contains_key("ns/pg")));
    }
}
