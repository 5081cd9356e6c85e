//! `task-topology` (Volcano: pkg/scheduler/plugins/task-topology/topology.go): places the tasks
//! of a job's roles together or apart as its PodGroup's annotations ask. At session open each
//! job with pending tasks and a topology has its tasks put into buckets (tasks meant for one
//! node); TaskOrder then takes bucketed tasks first, bigger and older buckets first, and
//! NodeOrder scores a node by how much of the task's bucket is or could go there.
//!
//! Argument: `task-topology.weight` (default 1) multiplies the node score.

mod annotations;
mod bucket;
mod manager;

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, SessionState};
use crate::model::{DimDefault, JobId, NodeId, TaskId, TaskStatus};
pub use annotations::{
    AFFINITY_ANNOTATION, ANTI_AFFINITY_ANNOTATION, TASK_ORDER_ANNOTATION, TASK_SPEC_KEY,
};
use annotations::{read_topology, task_name};
use manager::{BucketTask, JobManager};

/// The weight argument.
pub const WEIGHT_KEY: &str = "task-topology.weight";
/// Kubernetes' highest node score, which a full bucket's node gets.
const MAX_NODE_SCORE: f64 = 100.0;

/// The plugin: its weight and the managers of this session's jobs.
#[derive(Debug, Clone, Default)]
pub struct TaskTopologyPlugin {
    weight: i64,
    managers: BTreeMap<JobId, JobManager>,
}

/// Builds the plugin from `task-topology.weight`.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(TaskTopologyPlugin {
        weight: args.int(WEIGHT_KEY)?.unwrap_or(1),
        managers: BTreeMap::new(),
    }))
}

impl TaskTopologyPlugin {
    /// The manager of the task's job, if the job has one.
    fn manager_of(&self, ssn: &SessionState, t: TaskId) -> Option<&JobManager> {
        self.managers.get(&ssn.job_of(t)?)
    }

    /// The task's bucket score on `node` (Volcano: topology.go, calcBucketScore), and its
    /// job's manager when it has one and the node could hold the task.
    fn bucket_score(
        &self,
        ssn: &SessionState,
        t: TaskId,
        node: NodeId,
    ) -> (i64, Option<&JobManager>) {
        let room = ssn.nodes.idle[node].plus(&ssn.nodes.releasing[node]);
        if room.less_partly(ssn.resreq(t), DimDefault::Zero) {
            return (0, None);
        }
        let Some(manager) = self.manager_of(ssn, t) else {
            return (0, None);
        };
        let Some(bucket) = manager.bucket(t) else {
            return (0, Some(manager));
        };
        let node_name = ssn.snap.nodes.name[node.idx()].as_str();
        let mut score = bucket.nodes.get(node_name).copied().unwrap_or(0);
        score += manager.repulsion_on(task_name(&ssn.snap.tasks.pod[t.idx()]), node_name);
        score += bucket.pending.len() as i64;
        if bucket.request.less_equal(&room, DimDefault::Zero) {
            return (score, Some(manager));
        }
        // Take the bucket's other tasks out (Volcano in map order, tephra in task order), a
        // point each, until the rest fits the node.
        let mut remains = bucket.request.clone();
        for &other in bucket.pending.iter().filter(|&&o| o != t) {
            remains.sub(ssn.resreq(other));
            score -= 1;
            if remains.less_equal(&room, DimDefault::Zero) {
                break;
            }
        }
        (score, Some(manager))
    }
}

impl Plugin for TaskTopologyPlugin {
    fn name(&self) -> &str {
        "task-topology"
    }

    /// Builds the buckets of every job with a pending task and a readable topology; a job
    /// whose annotations name a task it lacks is left alone (Volcano: topology.go, initBucket).
    fn on_session_open(&mut self, ssn: &SessionState) {
        let snap = &ssn.snap;
        for j in snap.jobs.ids() {
            let tasks = &snap.jobs.tasks[j.idx()];
            if !tasks
                .iter()
                .any(|t| ssn.tasks.status[t] == TaskStatus::Pending)
            {
                continue;
            }
            let pods = tasks.iter().map(|t| &*snap.tasks.pod[t.idx()]);
            let annotations = &snap.jobs.podgroup[j.idx()].metadata.annotations;
            let Ok(Some(topology)) = read_topology(annotations, pods) else {
                continue;
            };
            let mut manager = JobManager::new(&topology);
            let bucket_tasks: Vec<BucketTask> = tasks
                .iter()
                .map(|&t| {
                    let pod = &snap.tasks.pod[t.idx()];
                    BucketTask {
                        id: t,
                        name: task_name(pod),
                        pod_name: &pod.metadata.name,
                        node: Some(pod.spec.node_name.as_str()).filter(|n| !n.is_empty()),
                        request: ssn.resreq(t),
                    }
                })
                .collect();
            manager.build_buckets(&bucket_tasks);
            self.managers.insert(j, manager);
        }
    }

    /// Bucketed tasks before the others; within a job, bigger buckets (more pending tasks)
    /// first, then older ones, and in one bucket by task name rank (Volcano: topology.go,
    /// TaskOrderFn).
    fn task_order(&self, ssn: &SessionState, l: TaskId, r: TaskId) -> Ordering {
        let (Some(lm), Some(rm)) = (self.manager_of(ssn, l), self.manager_of(ssn, r)) else {
            return Ordering::Equal;
        };
        let (lb, rb) = (lm.bucket(l), rm.bucket(r));
        match (lb, rb) {
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            _ if ssn.job_of(l) != ssn.job_of(r) => Ordering::Equal,
            (None, None) => Ordering::Equal,
            (Some(lb), Some(rb)) => rb.pending.len().cmp(&lb.pending.len()).then_with(|| {
                if lb.index == rb.index {
                    lm.task_order(r, l)
                } else {
                    lb.index.cmp(&rb.index)
                }
            }),
        }
    }

    /// `score × weight`, scaled so that the job's biggest bucket scores 100 (Volcano:
    /// topology.go, NodeOrderFn).
    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        let (score, manager) = self.bucket_score(ssn, task, node);
        let mut f = (score * self.weight) as f64;
        if let Some(m) = manager.filter(|m| m.max_bucket_size != 0) {
            f = f * MAX_NODE_SCORE / m.max_bucket_size as f64;
        }
        Some(Ok(f))
    }

    /// The task's bucket counts it on its node (Volcano: topology.go, AllocateFunc).
    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        let (Some(job), Some(node)) = (ssn.job_of(task), ssn.tasks.node[task]) else {
            return Ok(());
        };
        if let Some(manager) = self.managers.get_mut(&job) {
            let name = task_name(&ssn.snap.tasks.pod[task.idx()]);
            manager.task_bound(
                task,
                name,
                &ssn.snap.nodes.name[node.idx()],
                ssn.resreq(task),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::framework::{Session, Statement};
    use crate::harness::find::{node_id, task};
    use crate::harness::objects::node;
    use crate::harness::session;

    const CONF: &str = "actions: allocate\ntiers:\n- plugins:\n  - name: task-topology\n    arguments: {task-topology.weight: 2}\n";

    /// Two 4-cpu nodes, a job whose PodGroup has `annotations` (a flow-map body), and `pods`.
    fn open(annotations: &str, pods: &[(&str, &str, &str)]) -> Session {
        let mut objects = format!(
            "- {{kind: Queue, metadata: {{name: q}}}}\n- {{kind: PodGroup, metadata: {{name: pg, namespace: ns, annotations: {{{annotations}}}}}, spec: {{queue: q}}}}\n{}{}",
            node("n1", "", "cpu: '4', pods: '10'"),
            node("n2", "", "cpu: '4', pods: '10'"),
        );
        for (name, role, on) in pods {
            let (spec, phase) = match *on {
                "" => (String::new(), "Pending"),
                n => (format!("nodeName: {n}, "), "Running"),
            };
            objects += &format!(
                "- {{kind: Pod, metadata: {{name: {name}, namespace: ns, uid: {name}, annotations: {{scheduling.k8s.io/group-name: pg, volcano.sh/task-spec: {role}}}}}, spec: {{{spec}containers: [{{name: c, resources: {{requests: {{cpu: '1'}}}}}}]}}, status: {{phase: {phase}}}}}\n"
            );
        }
        session(CONF, &objects)
    }

    #[test]
    fn bucketed_tasks_go_first_and_an_unrelated_role_last() {
        let ssn = open(
            "volcano.sh/task-topology-affinity: 'ps,worker'",
            &[
                ("a-log", "log", ""),
                ("b-ps", "ps", ""),
                ("c-worker", "worker", ""),
            ],
        );
        let (log, ps, worker) = (
            task(&ssn, "ns/a-log"),
            task(&ssn, "ns/b-ps"),
            task(&ssn, "ns/c-worker"),
        );
        assert!(
            ssn.task_order_less(ps, log),
            "a bucketed task before one outside"
        );
        assert!(ssn.task_order_less(worker, log));
        assert!(!ssn.task_order_less(log, worker));
    }

    #[test]
    fn a_node_with_the_bucket_s_bound_task_scores_higher() {
        let ssn = open(
            "volcano.sh/task-topology-affinity: 'ps,worker'",
            &[("ps", "ps", "n2"), ("worker", "worker", "")],
        );
        let w = task(&ssn, "ns/worker");
        // One bound + one pending on n2, one pending on n1; × weight 2 × 100 / bucket size 2.
        assert_eq!(ssn.node_order(w, node_id(&ssn, "n2")), 200.0);
        assert_eq!(ssn.node_order(w, node_id(&ssn, "n1")), 100.0);
    }

    #[test]
    fn an_allocated_worker_repels_the_next_one_under_self_anti_affinity() {
        let mut ssn = open(
            "volcano.sh/task-topology-anti-affinity: worker",
            &[("w0", "worker", ""), ("w1", "worker", "")],
        );
        let (w0, w1) = (task(&ssn, "ns/w0"), task(&ssn, "ns/w1"));
        let (n1, n2) = (node_id(&ssn, "n1"), node_id(&ssn, "n2"));
        assert_eq!(ssn.node_order(w1, n1), ssn.node_order(w1, n2));
        Statement::new().allocate(&mut ssn, w0, n1).unwrap();
        assert_eq!(ssn.node_order(w1, n1), 0.0, "1 pending - 1 repelled");
        assert_eq!(ssn.node_order(w1, n2), 200.0);
    }
}
