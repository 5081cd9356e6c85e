//! `CloseSession` (Volcano: pkg/scheduler/framework/framework.go, CloseSession; job_updater.go): plugin close hooks, the job status updater, queue status, and the
//! per-task scheduling reasons, all returned as `Decisions`.
//!
//! Close handles every job and every pending task of a cycle, so it copies little. A pod's
//! namespace, name and uid, and an event's object, are the snapshot's shared strings; what the
//! scheduler writes from constants (a phase, a condition's type, status and reason, an event's
//! reason and fixed message, a fit reason that is a constant) is a static string; every condition a
//! session sets shares the session UID as its `transitionID`. Jobs' statuses, events and task
//! conditions are worked out on the thread pool and gathered in job order, and the session's
//! columns and snapshot are freed on the pool, not before close returns.

use std::sync::Arc;

use fixedbitset::FixedBitSet;
use rayon::prelude::*;

use super::{
    Bind, ClosedSession, Decisions, Event, EventObject, Eviction, JobConditions, Pipelined,
    PodConditionUpdate, PodGroupUpdate, QueueUpdate, Session,
};
use crate::api::{PodGroupCondition, PodGroupStatus, ResourceList};
use crate::model::{Dim, JobId, Quantity, Resource, TaskId, TaskStatus};
use crate::snapshot::PodGroupCounts;

/// Jobs whose allocated tasks one task of the pool sums per queue for the queues' status.
const QUEUE_SUM_JOBS: usize = 2048;

/// The statuses whose tasks close gives a `PodScheduled` condition.
const CONDITIONED: [TaskStatus; 3] = [
    TaskStatus::Allocated,
    TaskStatus::Pending,
    TaskStatus::Pipelined,
];

/// What closing one job adds to the decisions.
struct JobClose {
    event: Option<Event>,
    pod_conditions: Vec<PodConditionUpdate>,
    pod_group: PodGroupUpdate,
}

impl Session {
    /// Closes the session and returns its decisions.
    pub fn close(mut self) -> Decisions {
        ClosedSession::leave(&self.state);
        self.close_plugins();
        let mut d = Decisions::default();
        let snap = self.state.snap.clone();
        let placed = std::mem::take(&mut self.state.placed_jobs);
        self.state.metrics.set_jobs_assumed(&snap, &placed);
        let tasks = &snap.tasks;
        let volume_binds = std::mem::take(&mut self.state.volume_binds);
        let bind_annotations = std::mem::take(&mut self.state.bind_annotations);
        let bind_node_locks = std::mem::take(&mut self.state.bind_node_locks);
        d.binds = self
            .binds
            .par_iter()
            .map(|&(t, n)| Bind {
                namespace: tasks.namespace[t.idx()].clone(),
                name: tasks.name[t.idx()].clone(),
                uid: tasks.uid[t.idx()].clone(),
                node: snap.nodes.name[n.idx()].clone(),
                volumes: volume_binds.get(&t).cloned().map(Box::new),
                annotations: bind_annotations.get(&t).cloned().unwrap_or_default(),
                node_lock: bind_node_locks.get(&t).copied(),
            })
            .collect();
        d.replaced_tasks = (self.binds.iter().map(|&(t, _)| t))
            .chain(self.evictions.iter().map(|(t, _)| *t))
            .collect();
        for (t, reason) in &self.evictions {
            d.evictions.push(Eviction {
                namespace: tasks.namespace[t.idx()].clone(),
                name: tasks.name[t.idx()].clone(),
                uid: tasks.uid[t.idx()].clone(),
                reason: reason.clone(),
            });
        }
        // Only a session pipelines a task: the tasks it changed hold every pipelined one.
        let changed = self.state.take_tasks_with_status_changed();
        let (status, node) = (&self.state.tasks.status, &self.state.tasks.node);
        d.pipelined = changed
            .iter()
            .filter_map(|&t| match (status[t], node[t]) {
                (TaskStatus::Pipelined, Some(n)) => Some(Pipelined {
                    namespace: tasks.namespace[t.idx()].clone(),
                    name: tasks.name[t.idx()].clone(),
                    node: snap.nodes.name[n.idx()].clone(),
                }),
                _ => None,
            })
            .collect();
        // Jobs are independent here and a contended cycle leaves 100k pending tasks, each with
        // a formatted reason, so they are worked out on the pool and gathered in job order, the
        // PodGroups straight into their place (one per job: moving 60k of them again cost a
        // pass over fresh memory).
        let conditions = self.state.take_job_conditions();
        let (events, (pod_conditions, pod_groups)): (Vec<_>, (Vec<_>, Vec<_>)) = conditions
            .into_par_iter()
            .enumerate()
            .map(|(j, conditions)| {
                let job = self.close_job(JobId(j as u32), conditions);
                (job.event, (job.pod_conditions, job.pod_group))
            })
            .unzip();
        d.pod_groups = pod_groups;
        // Reserved first: a first cycle has an event for every job (50k), and moving them into
        // a vector that grew as it went was a seventh of its close.
        d.events.reserve(events.iter().flatten().count());
        d.events.extend(events.into_iter().flatten());
        d.pod_conditions
            .reserve(pod_conditions.iter().map(Vec::len).sum());
        d.pod_conditions
            .extend(pod_conditions.into_iter().flatten());
        self.queue_status(&mut d, &changed);
        d.events.extend(self.state.take_events());
        d.numa_bookings = std::mem::take(&mut self.state.numa_bookings);
        self.state.metrics.search = self.state.take_search_timings();
        d.metrics = std::mem::take(&mut self.state.metrics);
        // Plugins go now (one may come from a library); freeing the session's columns, a few
        // shared strings and pointers per task, took a third of a large close, so the thread
        // pool frees them while the caller carries on with the decisions. The snapshot is let go
        // of here instead (a cycle's caller holds it too, `Cycle`): a cache that keeps its task
        // table lets go of the replaced pods only while nothing else holds that table
        // (`TaskTables::let_go_of`).
        let Session {
            mut state, slots, ..
        } = self;
        drop(slots);
        state.leave_node_columns();
        drop((std::mem::take(&mut state.snap), snap));
        rayon::spawn(move || drop(state));
        d
    }

    /// The PodGroup status Volcano's job updater computes, with the job's `conditions`.
    fn pod_group_status(&self, j: JobId, conditions: Vec<PodGroupCondition>) -> PodGroupStatus {
        let st = &self.state;
        let uid = &st.options.uid;
        let unschedulable = conditions
            .iter()
            .any(|c| c.type_ == "Unschedulable" && c.status == "True" && &c.transition_id == uid);
        let running = st.job_status_count(j, TaskStatus::Running);
        let phase = if running > 0 && unschedulable {
            "Unknown"
        } else {
            use TaskStatus::*;
            let mut scheduled: u32 = [Running, Bound, Failed, Succeeded]
                .iter()
                .map(|&s| st.job_status_count(j, s))
                .sum();
            let completed = st.job_status_count(j, Failed) + st.job_status_count(j, Succeeded);
            if st.job_status_count(j, Releasing) > 0 {
                scheduled += st.snap.jobs.tasks[j.idx()]
                    .iter()
                    .filter(|&&t| st.tasks.status[t] == Releasing && st.tasks.node[t].is_some())
                    .count() as u32;
            }
            // `min_available` is `minMember` floored at 0, the same test for a count.
            if scheduled as i32 >= st.snap.jobs.min_available[j.idx()] {
                if scheduled == completed {
                    "Completed"
                } else {
                    "Running"
                }
            } else if st.job_phase(j) != "Inqueue" {
                "Pending"
            } else {
                "Inqueue"
            }
        };
        PodGroupStatus {
            phase: phase.into(),
            conditions,
            running: running as i32,
            failed: st.job_status_count(j, TaskStatus::Failed) as i32,
            succeeded: st.job_status_count(j, TaskStatus::Succeeded) as i32,
        }
    }

    /// The job status updater for one job: its event, its tasks' conditions, its PodGroup with
    /// the job's `conditions`.
    fn close_job(&self, j: JobId, conditions: JobConditions) -> JobClose {
        let snap = &self.state.snap;
        let conditions_changed = !conditions.unchanged();
        let status = self.pod_group_status(j, conditions.into_list());
        // Compared with the job table's copy of the PodGroup's status: the PodGroups of a
        // long-running cluster lie scattered over the heap.
        let changed = status.phase != snap.jobs.pod_group_phase(j)
            || PodGroupCounts::of(&status) != snap.jobs.status_counts[j.idx()]
            || conditions_changed;
        let ns = snap.jobs.namespace[j.idx()].clone();
        let name = snap.jobs.name[j.idx()].clone();
        // Built only when a message needs it: most jobs at close are running fine. Shared by
        // the job's tasks that have no fit error of their own (most of a gang that failed).
        let fit_cell: std::cell::OnceCell<Arc<str>> = std::cell::OnceCell::new();
        let fit = || -> Arc<str> {
            fit_cell
                .get_or_init(|| Arc::from(self.state.job_fit_error(j)))
                .clone()
        };
        // Built only for an event: most jobs at close have none.
        let pg_object = || EventObject::PodGroup {
            namespace: ns.clone(),
            name: name.clone(),
        };
        let mut event = None;
        if matches!(&*status.phase, "Unknown" | "Pending" | "Inqueue") {
            let pending = self.state.job_status_count(j, TaskStatus::Pending);
            event = Some(Event {
                object: pg_object(),
                type_: "Warning",
                reason: "Unschedulable".into(),
                message: format!(
                    "{pending}/{} tasks in gang unschedulable: {}",
                    snap.jobs.tasks[j.idx()].len(),
                    fit()
                )
                .into(),
            });
        } else if changed {
            event = Some(Event {
                object: pg_object(),
                type_: "Normal",
                reason: "Scheduled".into(),
                message: "pod group is ready".into(),
            });
        }
        let mut pod_conditions = Vec::new();
        // The job's counts say whether it has a task to condition (most jobs at close are
        // running and have none).
        let has_conditioned = CONDITIONED
            .iter()
            .any(|&s| self.state.job_status_count(j, s) > 0);
        let tasks: &[TaskId] = if has_conditioned {
            &snap.jobs.tasks[j.idx()]
        } else {
            &[]
        };
        for &t in tasks {
            if snap.tasks.sch_gated[t.idx()] {
                continue;
            }
            let tx = self.state.tasks.last_tx[t];
            let status = tx.map(|x| x.status).unwrap_or(self.state.tasks.status[t]);
            if !CONDITIONED.contains(&self.state.tasks.status[t]) {
                continue;
            }
            let node = tx
                .map(|x| x.node)
                .unwrap_or(self.state.tasks.node[t])
                .map(|n| snap.nodes.name[n.idx()].clone());
            let key = || snap.tasks.key(t);
            let (reason, mut message, nominated) = match status {
                TaskStatus::Allocated => (
                    "Schedulable",
                    format!(
                        "Pod {} can possibly be assigned to {}, once minAvailable is satisfied",
                        key(),
                        node.clone().unwrap_or_default()
                    )
                    .into(),
                    None,
                ),
                TaskStatus::Pipelined => {
                    let evicted = tx
                        .map(|x| x.eviction_occurred)
                        .unwrap_or(self.state.tasks.eviction_occurred[t]);
                    (
                        "Unschedulable",
                        format!(
                            "Pod {} can possibly be assigned to {}, once resource is released and minAvailable is satisfied",
                            key(),
                            node.clone().unwrap_or_default()
                        )
                        .into(),
                        if evicted { node.clone() } else { None },
                    )
                }
                TaskStatus::Pending => {
                    let message = match self.state.jobs.fit_errors[j].get(&t) {
                        Some(fe) => fe.summary(snap.nodes.len()).into(),
                        None => fit(),
                    };
                    ("Unschedulable", message, None)
                }
                other => (other.name(), fit(), None),
            };
            if message.is_empty() {
                let f = fit();
                message = if f.is_empty() {
                    "all nodes are unavailable".into()
                } else {
                    f
                };
            }
            pod_conditions.push(PodConditionUpdate {
                namespace: snap.tasks.namespace[t.idx()].clone(),
                name: snap.tasks.name[t.idx()].clone(),
                reason,
                message,
                nominated_node: nominated,
            });
        }
        JobClose {
            event,
            pod_conditions,
            pod_group: PodGroupUpdate {
                namespace: ns,
                name,
                status,
                changed,
            },
        }
    }

    /// The queues whose allocation differs from their status: each queue's allocated tasks
    /// summed, a job whose tasks kept their statuses (all but the `changed` tasks' jobs) by the
    /// snapshot's sum of its allocated tasks.
    fn queue_status(&self, d: &mut Decisions, changed: &[TaskId]) {
        let snap = &self.state.snap;
        let q = &snap.queues;
        let mut moved = FixedBitSet::with_capacity(snap.jobs.len());
        for j in changed.iter().filter_map(|&t| self.state.job_of(t)) {
            moved.insert(j.idx());
        }
        // Summed a fixed run of jobs at a time on the pool, the runs' sums then added in order.
        // Quantities are whole milli-units and bytes, exact in an f64 up to 2^53, so neither
        // the grouping nor a job's sum taken whole changes a sum, and it does not depend on the
        // thread count.
        let task_status = &self.state.tasks.status;
        let runs: Vec<Vec<Resource>> = snap
            .jobs
            .queue
            .par_iter()
            .zip(snap.jobs.tasks.par_iter())
            .enumerate()
            .chunks(QUEUE_SUM_JOBS)
            .map(|jobs| {
                let mut alloc = vec![Resource::empty(); q.len()];
                for (j, (qi, tasks)) in jobs {
                    let sum = &mut alloc[qi.idx()];
                    if !moved.contains(j) {
                        sum.add(&snap.jobs.task_sums[j].allocated);
                        continue;
                    }
                    for &t in tasks {
                        if task_status[t].is_allocated() {
                            sum.add(&snap.tasks.resreq[t.idx()]);
                        }
                    }
                }
                alloc
            })
            .collect();
        let mut alloc: Vec<Resource> = vec![Resource::empty(); q.len()];
        for run in runs {
            for (total, part) in alloc.iter_mut().zip(&run) {
                total.add(part);
            }
        }
        if let Some(root) = q.id("root") {
            let own = alloc.clone();
            for qi in q.ids() {
                if qi == root {
                    continue;
                }
                let mut parent = if q.parent[qi.idx()].is_empty() {
                    Some(root)
                } else {
                    q.id(&q.parent[qi.idx()])
                };
                let mut guard = 0;
                while let Some(p) = parent {
                    alloc[p.idx()].add(&own[qi.idx()]);
                    if p == root || guard > q.len() {
                        break;
                    }
                    guard += 1;
                    parent = if q.parent[p.idx()].is_empty() {
                        Some(root)
                    } else {
                        q.id(&q.parent[p.idx()])
                    };
                }
            }
        }
        for qi in q.ids() {
            let list = to_resource_list(&alloc[qi.idx()]);
            let old = &q.object[qi.idx()].status.allocated;
            if !Resource::from_list(&list).equal(&Resource::from_list(old))
                || !Resource::from_list(old).equal(&Resource::from_list(&list))
            {
                d.queues.push(QueueUpdate {
                    name: q.name[qi.idx()].clone(),
                    allocated: list,
                });
            }
        }
    }
}

/// `ConvertRes2ResList`: cpu as millicores, memory and `pods` whole, other scalars milli.
pub fn to_resource_list(r: &Resource) -> ResourceList {
    let mut l = ResourceList::new();
    let q = |s: String| Quantity::parse(&s).unwrap_or_else(|_| Quantity::from_units(0));
    l.insert("cpu".into(), q(format!("{}m", r.milli_cpu.max(0.0) as i64)));
    l.insert(
        "memory".into(),
        Quantity::from_units(r.memory.max(0.0) as i64),
    );
    for (dim, v) in r.scalars() {
        if dim == Dim::PODS {
            l.insert("pods".into(), Quantity::from_units(v.max(0.0) as i64));
        } else {
            l.insert(dim.name().to_string(), q(format!("{}m", v.max(0.0) as i64)));
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use crate::framework::Decisions;
    use crate::harness::Harness;
    use crate::model::Resource;

    /// A PodGroup `name` in queue `q` reporting `status`, with one pod running on `n1`.
    fn running_group_in(q: &str, name: &str, status: &str) -> String {
        format!(
            "- {{kind: PodGroup, metadata: {{name: {name}, namespace: ns}}, spec: {{queue: {q}, minMember: 1}}, status: {status}}}\n\
             - {{kind: Pod, metadata: {{name: {name}-0, namespace: ns, uid: u-{name}, annotations: {{scheduling.k8s.io/group-name: {name}}}}}, spec: {{nodeName: n1, schedulerName: volcano, containers: [{{name: c, resources: {{requests: {{cpu: '1'}}}}}}]}}, status: {{phase: Running}}}}\n"
        )
    }

    /// The decisions of a session over `objects`, queues `queues` and one node `n1` of `cpu`.
    fn closed(queues: &[&str], cpu: &str, objects: &str) -> Decisions {
        let conf = "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n";
        let harness = queues.iter().fold(Harness::new(conf), |h, q| h.queue(q, 1));
        let harness = harness.node("n1", cpu, "8Gi", &[]).manifests(objects);
        harness.open().unwrap().close()
    }

    /// `running_group_in` the queue named q.
    fn running_group(name: &str, status: &str) -> String {
        running_group_in("q", name, status)
    }

    #[test]
    fn a_queues_allocated_status_sums_the_running_tasks_of_all_its_jobs_however_many() {
        let jobs = 2 * super::QUEUE_SUM_JOBS + 5;
        let objects: String = (0..jobs)
            .map(|j| running_group_in(["a", "b"][j % 2], &format!("job-{j}"), "{phase: Running}"))
            .collect();
        let cpu: Vec<(String, f64)> = closed(&["a", "b"], "10000", &objects)
            .queues
            .iter()
            .map(|q| (q.name.clone(), Resource::from_list(&q.allocated).milli_cpu))
            .collect();
        let (a, b) = (jobs.div_ceil(2) as f64, (jobs / 2) as f64);
        let expected = [("a".to_string(), a * 1000.0), ("b".to_string(), b * 1000.0)];
        assert_eq!(cpu, expected);
    }

    /// A pending PodGroup `name` in queue `q` of `pods` pods, each asking `cpu`.
    fn pending_group(q: &str, name: &str, pods: usize, cpu: &str) -> String {
        let mut s = format!(
            "- {{kind: PodGroup, metadata: {{name: {name}, namespace: ns}}, spec: {{queue: {q}, minMember: {pods}}}, status: {{phase: Inqueue}}}}\n"
        );
        for i in 0..pods {
            s += &format!(
                "- {{kind: Pod, metadata: {{name: {name}-{i}, namespace: ns, uid: u-{name}-{i}, annotations: {{scheduling.k8s.io/group-name: {name}}}}}, spec: {{schedulerName: volcano, containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}, status: {{phase: Pending}}}}\n"
            );
        }
        s
    }

    #[test]
    fn a_queues_allocated_status_counts_what_the_session_placed_beside_what_ran_before() {
        let conf = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n";
        let objects = [
            running_group_in("a", "ran", "{phase: Running}"),
            pending_group("a", "fits", 2, "1"),
            pending_group("b", "too-big", 2, "3"),
        ]
        .concat();
        let mut ssn = Harness::new(conf)
            .queue("a", 1)
            .queue("b", 1)
            .node("n1", "4", "8Gi", &[])
            .manifests(&objects)
            .open()
            .unwrap();
        crate::actions::run(&mut ssn, crate::config::Action::Allocate);
        let cpu: Vec<(String, f64)> = ssn
            .close()
            .queues
            .iter()
            .map(|q| (q.name.clone(), Resource::from_list(&q.allocated).milli_cpu))
            .collect();
        // The gang of `too-big` was placed in part, then discarded: its queue has nothing.
        assert_eq!(cpu, [("a".to_string(), 3000.0)]);
    }

    #[test]
    fn a_pod_group_is_changed_when_its_reported_phase_or_counts_differ_from_the_sessions() {
        let objects = [
            running_group("same", "{phase: Running, running: 1}"),
            running_group("count", "{phase: Running, running: 0}"),
            running_group("failed", "{phase: Running, running: 1, failed: 1}"),
            running_group("known", "{phase: Pending, running: 1}"),
            running_group("other", "{phase: Custom, running: 1}"),
        ]
        .concat();
        let marks: Vec<(String, bool)> = closed(&["q"], "4", &objects)
            .pod_groups
            .iter()
            .map(|pg| (pg.name.to_string(), pg.changed))
            .collect();
        let expected = [
            ("count", true),
            ("failed", true),
            ("known", true),
            ("other", true),
            ("same", false),
        ];
        assert_eq!(marks, expected.map(|(n, c)| (n.to_string(), c)));
    }
}
