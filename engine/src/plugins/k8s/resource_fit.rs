//! NodeResourcesFit scoring, as Volcano configures it: LeastAllocated (cpu 50, memory 50) and
//! MostAllocated (cpu 1, memory 1). Both sides use the non-zero requests (100m cpu and 200Mi
//! memory for a container that names none). No PreScore skip and no normalisation.

use super::NodeScores;
use super::cluster::Cluster;
use super::normalize::MAX_NODE_SCORE;
use super::requests::allocatable;
use crate::model::{NodeId, TaskId};

/// The scoring strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    LeastAllocated,
    MostAllocated,
}

impl Strategy {
    /// Volcano's resource weights for the strategy (cpu, memory).
    fn weights(self) -> [(&'static str, i64); 2] {
        match self {
            Strategy::LeastAllocated => [("cpu", 50), ("memory", 50)],
            Strategy::MostAllocated => [("cpu", 1), ("memory", 1)],
        }
    }

    /// One resource's score, `requested` including the pod. Computed in 128 bits: a capacity
    /// above `i64::MAX / 100` (a quantity that large saturates) would overflow the product, where
    /// kube-scheduler's int64 silently wraps.
    fn resource_score(self, requested: i64, capacity: i64) -> i64 {
        let used = match self {
            Strategy::LeastAllocated if requested > capacity => return 0,
            Strategy::LeastAllocated => capacity - requested,
            Strategy::MostAllocated => requested.min(capacity),
        };
        let score = i128::from(used) * i128::from(MAX_NODE_SCORE) / i128::from(capacity);
        score as i64
    }
}

/// The weighted mean over cpu and memory of each node's score; resources the node lacks are
/// left out.
pub fn scores(c: &Cluster, task: TaskId, nodes: &[NodeId], strategy: Strategy) -> NodeScores {
    let pod = c.requests(task);
    nodes
        .iter()
        .map(|&n| {
            let node = c.requested(n);
            let alloc = &c.ssn.snap.nodes.allocatable[n.idx()];
            let (mut sum, mut weights) = (0, 0);
            for (name, weight) in strategy.weights() {
                let capacity = allocatable(alloc, name).unwrap_or(0);
                if capacity == 0 {
                    continue;
                }
                let requested = match name {
                    "cpu" => node.non0_cpu + pod.non0_cpu,
                    _ => node.non0_mem + pod.non0_mem,
                };
                sum += strategy.resource_score(requested, capacity) * weight;
                weights += weight;
            }
            if weights == 0 { 0 } else { sum / weights }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capacity_near_the_largest_quantity_scores_without_overflow() {
        assert_eq!(
            Strategy::LeastAllocated.resource_score(1000, i64::MAX),
            MAX_NODE_SCORE - 1
        );
        assert_eq!(
            Strategy::MostAllocated.resource_score(i64::MAX, i64::MAX),
            MAX_NODE_SCORE
        );
    }

    #[test]
    fn least_allocated_prefers_free_capacity_and_zeroes_overcommit() {
        let s = Strategy::LeastAllocated;
        assert_eq!(s.resource_score(1000, 4000), 75);
        assert_eq!(s.resource_score(5000, 4000), 0);
    }

    #[test]
    fn most_allocated_truncates_and_caps_at_capacity() {
        let s = Strategy::MostAllocated;
        assert_eq!(s.resource_score(1_000_000_000, 4_294_967_296), 23);
        assert_eq!(s.resource_score(5000, 4000), 100);
    }
}
