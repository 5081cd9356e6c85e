//! InterPodAffinity score: preferred (anti-)affinity of the pod towards existing pods, and of
//! existing pods towards the pod, summed per topology domain. Volcano sets the hard-affinity
//! weight to 0, so existing pods' required affinity does not score.
//!
//! Without preferred terms of its own the pod is scored only against nodes that held pods with
//! (anti-)affinity at session open.

use std::collections::HashMap;

use super::affinity_term::WeightedAffinityTerm;
use super::cluster::Cluster;
use super::normalize::MAX_NODE_SCORE;
use crate::api::{Pod, StringMap};
use crate::model::{NodeId, TaskId};
use crate::snapshot::NamespaceTable;

/// Score per topology key and value.
type TopologyScores = HashMap<String, HashMap<String, i64>>;

/// Adds `sign × weight` of every term matching `target` to the node's domain of the term's key.
fn process(
    scores: &mut TopologyScores,
    terms: &[WeightedAffinityTerm],
    target: &Pod,
    namespaces: &NamespaceTable,
    labels: &StringMap,
    sign: i64,
) {
    for t in terms.iter().filter(|t| t.term.matches(target, namespaces)) {
        if let Some(v) = labels.get(&t.term.topology_key) {
            *scores
                .entry(t.term.topology_key.clone())
                .or_default()
                .entry(v.clone())
                .or_default() += i64::from(t.weight) * sign;
        }
    }
}

fn has_preferred_terms(pod: &Pod) -> bool {
    let Some(a) = pod.spec.affinity.as_ref() else {
        return false;
    };
    a.pod_affinity.as_ref().is_some_and(|p| {
        !p.preferred_during_scheduling_ignored_during_execution
            .is_empty()
    }) || a.pod_anti_affinity.as_ref().is_some_and(|p| {
        !p.preferred_during_scheduling_ignored_during_execution
            .is_empty()
    })
}

/// The normalised scores of `nodes` (`None`: the scorer skips, no term matched anywhere).
pub fn scores(c: &Cluster, task: TaskId, nodes: &[NodeId]) -> Result<Option<Vec<i64>>, String> {
    // Nearly every pod: no terms of its own (so none to parse either) and no existing pod with
    // (anti-)affinity to score it. Known from the task table, without reading the pod.
    if !c.ssn.snap.tasks.inter_pod[task.idx()] && c.view.nodes_with_affinity().is_empty() {
        return Ok(None);
    }
    let pod = c.pod(task);
    let info = c.info(task);
    let own_terms = has_preferred_terms(pod);
    if let Some(e) = &info.parse_error {
        return Err(format!("failed to parse pod: {e}"));
    }
    let scanned: Vec<NodeId> = if own_terms {
        c.nodes().collect()
    } else {
        c.view.nodes_with_affinity().to_vec()
    };
    let mut topology = TopologyScores::new();
    for n in scanned {
        let labels = c.labels(n);
        if labels.is_empty() {
            continue;
        }
        for &e in c.pods_on(n) {
            let existing = c.info(e);
            if !own_terms && !existing.has_pod_affinity {
                continue;
            }
            let other = c.pod(e);
            let ns = c.namespaces();
            process(
                &mut topology,
                &info.preferred_affinity,
                other,
                ns,
                labels,
                1,
            );
            process(
                &mut topology,
                &info.preferred_anti_affinity,
                other,
                ns,
                labels,
                -1,
            );
            process(
                &mut topology,
                &existing.preferred_affinity,
                pod,
                ns,
                labels,
                1,
            );
            process(
                &mut topology,
                &existing.preferred_anti_affinity,
                pod,
                ns,
                labels,
                -1,
            );
        }
    }
    if topology.is_empty() {
        return Ok(None);
    }
    let raw: Vec<i64> = nodes
        .iter()
        .map(|&n| {
            let labels = c.labels(n);
            topology
                .iter()
                .filter_map(|(k, values)| {
                    labels.get(k).map(|v| values.get(v).copied().unwrap_or(0))
                })
                .sum()
        })
        .collect();
    Ok(Some(normalize(&raw)))
}

/// `NormalizeScore`: min-max scaling to [0, 100], truncated; all 0 when every node ties.
fn normalize(raw: &[i64]) -> Vec<i64> {
    let min = raw.iter().copied().min().unwrap_or(i64::MAX);
    let max = raw.iter().copied().max().unwrap_or(i64::MIN);
    let diff = max.wrapping_sub(min);
    raw.iter()
        .map(|&s| {
            if diff > 0 {
                (MAX_NODE_SCORE as f64 * ((s - min) as f64 / diff as f64)) as i64
            } else {
                0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_scale_between_the_lowest_and_highest_node() {
        assert_eq!(normalize(&[-5, 0, 5]), vec![0, 50, 100]);
        assert_eq!(normalize(&[1, 2, 4]), vec![0, 33, 100]);
    }

    #[test]
    fn tied_nodes_all_score_zero() {
        assert_eq!(normalize(&[3, 3]), vec![0, 0]);
    }
}
