//! A bucket: tasks of one job that the plugin wants on one node (Volcano:
//! pkg/scheduler/plugins/task-topology/bucket.go).

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Resource, TaskId};

/// One bucket of a job.
#[derive(Debug, Clone, Default)]
pub struct Bucket {
    /// Its place in the job's bucket list; older buckets go first.
    pub index: usize,
    /// Its tasks not yet on a node, in task order.
    pub pending: BTreeSet<TaskId>,
    /// How many of its tasks (pending or bound) play each task name.
    pub task_names: BTreeMap<String, i64>,
    /// The pending tasks' requests as one figure: a milli-CPU, a MiB of memory and one unit of
    /// any scalar count alike; buckets are balanced on it.
    pub request_score: f64,
    /// The pending tasks' requests.
    pub request: Resource,
    /// How many of its tasks are on a node.
    pub bound: usize,
    /// How many of its tasks are on each node, by node name.
    pub nodes: BTreeMap<String, i64>,
}

impl Bucket {
    /// An empty bucket at `index`.
    pub fn new(index: usize) -> Bucket {
        Bucket {
            index,
            ..Bucket::default()
        }
    }

    /// Its size: pending and bound tasks.
    pub fn size(&self) -> usize {
        self.pending.len() + self.bound
    }

    /// Adds (`sign` 1) or takes away (`sign` -1) a request (Volcano: bucket.go, CalcResReq).
    fn count_request(&mut self, req: &Resource, sign: f64) {
        let score = req.milli_cpu
            + req.memory / 1024.0 / 1024.0
            + req.scalars().map(|(_, v)| v).sum::<f64>();
        self.request_score += sign * score;
        if sign > 0.0 {
            self.request.add(req);
        } else {
            self.request.sub(req);
        }
    }

    /// Adds a task named `name`, bound to `node` or pending with request `req`.
    pub fn add(&mut self, task: TaskId, name: &str, node: Option<&str>, req: &Resource) {
        *self.task_names.entry(name.to_string()).or_default() += 1;
        match node {
            Some(node) => {
                *self.nodes.entry(node.to_string()).or_default() += 1;
                self.bound += 1;
            }
            None => {
                self.pending.insert(task);
                self.count_request(req, 1.0);
            }
        }
    }

    /// Records that `task` went to `node`. Its request is taken off whether or not it was
    /// pending here, as Volcano does (bucket.go, TaskBound).
    pub fn task_bound(&mut self, task: TaskId, node: &str, req: &Resource) {
        *self.nodes.entry(node.to_string()).or_default() += 1;
        self.bound += 1;
        self.pending.remove(&task);
        self.count_request(req, -1.0);
    }
}
