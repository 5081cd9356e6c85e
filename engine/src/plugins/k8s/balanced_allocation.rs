//! NodeResourcesBalancedAllocation, as Volcano configures it (cpu, memory, nvidia.com/gpu): nodes
//! whose resource fractions stay even after placing the pod score higher. Real requests on both
//! sides (no non-zero defaults); no normalisation.

use super::NodeScores;
use super::cluster::Cluster;
use super::normalize::MAX_NODE_SCORE;
use super::requests::allocatable;
use crate::model::{NodeId, TaskId};

const RESOURCES: [&str; 3] = ["cpu", "memory", "nvidia.com/gpu"];

/// `balancedResourceScore`: (1 − standard deviation of the capped fractions) × 100, truncated.
/// Called twice per node and task, so the fractions stay on the stack.
fn balance(requested: &[i64], capacity: &[i64]) -> i64 {
    let mut fractions = [0.0; RESOURCES.len()];
    let mut n = 0;
    for ((r, c), slot) in requested
        .iter()
        .zip(capacity)
        .filter(|(_, c)| **c != 0)
        .zip(fractions.iter_mut())
    {
        *slot = (*r as f64 / *c as f64).min(1.0);
        n += 1;
    }
    let std = match &fractions[..n] {
        [] | [_] => 0.0,
        [a, b] => ((a - b) / 2.0).abs(),
        fs => {
            let mean = fs.iter().sum::<f64>() / fs.len() as f64;
            (fs.iter().map(|f| (f - mean) * (f - mean)).sum::<f64>() / fs.len() as f64).sqrt()
        }
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// The scores of `nodes` (`None`: the scorer skips a pod requesting none of the resources).
/// The gpu counts only when the pod requests it and the node has it.
pub fn scores(c: &Cluster, task: TaskId, nodes: &[NodeId]) -> Option<NodeScores> {
    let pod = c.requests(task);
    let pod_req = RESOURCES.map(|r| pod.get(r));
    if pod_req.iter().all(|&r| r == 0) {
        return None;
    }
    let scores = nodes
        .iter()
        .map(|&n| {
            let node = c.requested(n);
            let alloc = &c.ssn.snap.nodes.allocatable[n.idx()];
            let mut capacity = [0i64; 3];
            let mut without = [0i64; 3];
            let mut with = [0i64; 3];
            for (i, name) in RESOURCES.iter().enumerate() {
                let scalar = i == 2;
                if scalar && pod_req[i] == 0 {
                    continue;
                }
                let cap = allocatable(alloc, name).unwrap_or(0);
                if cap == 0 {
                    continue;
                }
                capacity[i] = cap;
                without[i] = node.get(name);
                with[i] = without[i] + pod_req[i];
            }
            MAX_NODE_SCORE / 2
                + (MAX_NODE_SCORE / 2 + balance(&with, &capacity) - balance(&without, &capacity))
                    / 2
        })
        .collect();
    Some(scores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_resources_use_half_the_fraction_gap() {
        assert_eq!(
            balance(&[1000, 1 << 30], &[4000, 1 << 31]),
            87,
            "fractions .25 and .5"
        );
        assert_eq!(balance(&[0, 0], &[4000, 1 << 31]), 100);
    }

    #[test]
    fn three_resources_use_the_population_standard_deviation() {
        let s = balance(&[1, 2, 3], &[4, 4, 4]);
        let fs = [0.25f64, 0.5, 0.75];
        let std = (fs.iter().map(|f| (f - 0.5).powi(2)).sum::<f64>() / 3.0).sqrt();
        assert_eq!(s, ((1.0 - std) * 100.0) as i64);
    }

    #[test]
    fn fractions_are_capped_at_one_and_missing_capacity_is_left_out() {
        assert_eq!(
            balance(&[8000, 5], &[4000, 0]),
            100,
            "one resource left: no deviation"
        );
    }
}
