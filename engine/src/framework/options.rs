//! Per-session options that do not come from the configuration file.

use std::sync::Arc;

use super::{Carryover, Timers};
use crate::api::Time;

/// Volcano's node-sampling flags (`--percentage-nodes-to-find` and friends, Volcano: pkg/scheduler/util/predicate_helper.go, PredicateNodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeSampling {
    pub percentage_nodes_to_find: i32,
    pub minimum_feasible_nodes: i32,
    pub minimum_percentage_nodes_to_find: i32,
}

impl Default for NodeSampling {
    /// Volcano's flag defaults.
    fn default() -> Self {
        NodeSampling {
            percentage_nodes_to_find: 0,
            minimum_feasible_nodes: 100,
            minimum_percentage_nodes_to_find: 5,
        }
    }
}

impl NodeSampling {
    /// How many feasible nodes to look for among `n` candidates.
    pub fn num_to_find(&self, n: usize) -> usize {
        let n = n as i64;
        let min = i64::from(self.minimum_feasible_nodes);
        if n <= min || self.percentage_nodes_to_find >= 100 {
            return n as usize;
        }
        let mut pct = i64::from(self.percentage_nodes_to_find);
        if pct <= 0 {
            pct = (50 - n / 125).max(i64::from(self.minimum_percentage_nodes_to_find));
        }
        (n * pct / 100).max(min) as usize
    }
}

/// Options of one session.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// "Now" for timestamps the session writes (kept explicit so runs are reproducible).
    pub now: Time,
    /// The session UID, written as `transitionID` into PodGroup conditions.
    pub uid: Arc<str>,
    /// `None`: consider every feasible node (tephra's default); `Some`: Volcano's sampling.
    pub node_sampling: Option<NodeSampling>,
    /// Clocks kept across sessions by the scheduler loop.
    pub timers: Arc<Timers>,
    /// Turns off the per-cycle equivalence-class caches (predicate results and score columns
    /// shared by tasks of one scheduling signature), so every task takes the plain per-node
    /// path. The plain path is the reference: decisions must be the same either way, and the
    /// determinism tests compare both (`actions::class_cache`).
    pub disable_class_caches: bool,
    /// What one session leaves for the next (equivalence classes, the kube node map's sums);
    /// the scheduler loop keeps one for all its sessions, and a fresh one carries nothing.
    /// Decisions are the same either way.
    pub carryover: Arc<Carryover>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_follows_volcano_formula() {
        let s = NodeSampling::default();
        assert_eq!(s.num_to_find(50), 50);
        assert_eq!(s.num_to_find(1000), 420, "pct = 50 - 1000/125 = 42");
        assert_eq!(s.num_to_find(50_000), 2500, "pct floors at 5");
        let all = NodeSampling {
            percentage_nodes_to_find: 100,
            ..s
        };
        assert_eq!(all.num_to_find(50_000), 50_000);
    }
}
