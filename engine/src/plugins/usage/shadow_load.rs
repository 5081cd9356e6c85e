//! The load of pods placed on nodes that the metrics cannot show yet (Volcano:
//! pkg/scheduler/plugins/usage/shadow_cache.go): per node, the estimates of those pods, and per
//! pod what was added, so taking a placement back subtracts exactly that.

use std::collections::HashMap;

use crate::model::{NodeId, TaskId};

/// Estimated millicores and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Estimate {
    pub cpu: f64,
    pub memory: f64,
}

/// Per-node sums and per-task entries.
#[derive(Debug, Default)]
pub struct ShadowLoad {
    nodes: HashMap<NodeId, Estimate>,
    tasks: HashMap<TaskId, (NodeId, Estimate)>,
}

impl ShadowLoad {
    /// Forgets everything.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.tasks.clear();
    }

    /// Adds the task's estimate on `node`, replacing an earlier one of the task.
    pub fn add(&mut self, node: NodeId, task: TaskId, estimate: Estimate) {
        self.remove(task);
        let sum = self.nodes.entry(node).or_default();
        sum.cpu += estimate.cpu;
        sum.memory += estimate.memory;
        self.tasks.insert(task, (node, estimate));
    }

    /// Takes the task's estimate back off its node (never below zero).
    pub fn remove(&mut self, task: TaskId) {
        let Some((node, e)) = self.tasks.remove(&task) else {
            return;
        };
        if let Some(sum) = self.nodes.get_mut(&node) {
            sum.cpu = (sum.cpu - e.cpu).max(0.0);
            sum.memory = (sum.memory - e.memory).max(0.0);
        }
    }

    /// The node's estimated extra load.
    pub fn of(&self, node: NodeId) -> Estimate {
        self.nodes.get(&node).copied().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_counts_once_and_removing_it_takes_back_what_it_added() {
        let mut s = ShadowLoad::default();
        let (n1, n2, t) = (NodeId(0), NodeId(1), TaskId(7));
        s.add(
            n1,
            t,
            Estimate {
                cpu: 100.0,
                memory: 10.0,
            },
        );
        s.add(
            n2,
            t,
            Estimate {
                cpu: 50.0,
                memory: 5.0,
            },
        );
        assert_eq!(s.of(n1), Estimate::default(), "moved to n2");
        assert_eq!(s.of(n2).cpu, 50.0);
        s.remove(t);
        s.remove(t);
        assert_eq!(s.of(n2), Estimate::default());
    }
}
