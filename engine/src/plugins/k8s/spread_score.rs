//! PodTopologySpread score (`whenUnsatisfiable: ScheduleAnyway`): nodes in less crowded domains
//! score higher. Domains are those of the candidate nodes; pods are counted on every node.

use std::collections::HashMap;

use super::cluster::Cluster;
use super::node_affinity::RequiredNodeAffinity;
use super::normalize::MAX_NODE_SCORE;
use super::spread_constraint::{
    HOSTNAME_KEY, SpreadConstraint, constraints, count_matching, has_all_keys,
};
use crate::api::Pod;
use crate::model::{NodeId, TaskId};

/// Marks a node without every topology key; it scores 0.
const IGNORED: i64 = -1;

/// `topologyNormalizingWeight`: ln(domains + 2).
fn normalizing_weight(domains: usize) -> f64 {
    ((domains + 2) as f64).ln()
}

/// What PreScore computes: which candidates lack a key, the pods per domain, the weights.
struct PreScore<'a> {
    constraints: Vec<SpreadConstraint>,
    ignored: Vec<bool>,
    counts: Vec<HashMap<&'a str, i64>>,
    weights: Vec<f64>,
}

/// Registers the candidates' domains (hostname domains are single nodes and need none) and
/// weighs each constraint by its domain count.
fn pre_score<'a>(
    c: &Cluster<'a>,
    nodes: &[NodeId],
    constraints: Vec<SpreadConstraint>,
) -> PreScore<'a> {
    // Only the pod's own constraints exist (see `spread_constraint`), so every key is required.
    let ignored: Vec<bool> = nodes
        .iter()
        .map(|&n| !has_all_keys(c.labels(n), &constraints))
        .collect();
    let mut counts: Vec<HashMap<&'a str, i64>> = vec![HashMap::new(); constraints.len()];
    for (&n, _) in nodes.iter().zip(&ignored).filter(|(_, ig)| !**ig) {
        for (i, sc) in constraints
            .iter()
            .enumerate()
            .filter(|(_, sc)| sc.topology_key != HOSTNAME_KEY)
        {
            counts[i]
                .entry(c.labels(n)[&sc.topology_key].as_str())
                .or_insert(0);
        }
    }
    let candidates = ignored.iter().filter(|ig| !**ig).count();
    let weights = constraints
        .iter()
        .zip(&counts)
        .map(|(sc, domains)| {
            normalizing_weight(if sc.topology_key == HOSTNAME_KEY {
                candidates
            } else {
                domains.len()
            })
        })
        .collect();
    PreScore {
        constraints,
        ignored,
        counts,
        weights,
    }
}

/// Adds the matching pods of every node (all nodes, not only candidates) to its registered
/// domain, honouring the inclusion policies.
fn count_domains(c: &Cluster, pod: &Pod, s: &mut PreScore) {
    let required = RequiredNodeAffinity::of(pod);
    for n in c.nodes() {
        let labels = c.labels(n);
        if !has_all_keys(labels, &s.constraints) {
            continue;
        }
        let taints = &c.ssn.snap.nodes.taints[n.idx()];
        for (sc, counts) in s.constraints.iter().zip(s.counts.iter_mut()) {
            if !sc.includes_node(pod, &required, c.name(n), labels, taints) {
                continue;
            }
            if let Some(count) = counts.get_mut(labels[&sc.topology_key].as_str()) {
                *count += count_matching(c, c.pods_on(n), &sc.selector, &pod.metadata.namespace);
            }
        }
    }
}

/// `Score`: Σ over the node's constraints of pods × weight + (maxSkew − 1), rounded.
fn raw_score(c: &Cluster, pod: &Pod, s: &PreScore, n: NodeId) -> i64 {
    let labels = c.labels(n);
    let mut score = 0.0;
    for ((sc, counts), weight) in s.constraints.iter().zip(&s.counts).zip(&s.weights) {
        let Some(value) = labels.get(&sc.topology_key) else {
            continue;
        };
        let count = if sc.topology_key == HOSTNAME_KEY {
            count_matching(c, c.pods_on(n), &sc.selector, &pod.metadata.namespace)
        } else {
            counts[value.as_str()]
        };
        score += count as f64 * weight + f64::from(sc.max_skew - 1);
    }
    score.round() as i64
}

/// The normalised scores of `nodes` (`None`: the scorer skips, the pod has no ScheduleAnyway
/// constraint).
pub fn scores(c: &Cluster, task: TaskId, nodes: &[NodeId]) -> Result<Option<Vec<i64>>, String> {
    // A pod without constraints (nearly every one), known from the task table.
    if c.ssn.snap.nodes.is_empty() || !c.ssn.snap.tasks.inter_pod[task.idx()] {
        return Ok(None);
    }
    let pod = c.pod(task);
    let constraints = constraints(pod, "ScheduleAnyway").map_err(|e| {
        format!("calculating preScoreState: obtaining pod's soft topology spread constraints: {e}")
    })?;
    if constraints.is_empty() {
        return Ok(None);
    }
    let mut s = pre_score(c, nodes, constraints);
    count_domains(c, pod, &mut s);
    let mut raw: Vec<i64> = nodes
        .iter()
        .zip(&s.ignored)
        .map(|(&n, &ig)| {
            if ig {
                IGNORED
            } else {
                raw_score(c, pod, &s, n)
            }
        })
        .collect();
    normalize(&mut raw, &s.ignored);
    Ok(Some(raw))
}

/// `NormalizeScore`: ignored nodes 0; otherwise `100 * (max + min - s) / max` over the others,
/// or 100 everywhere when the maximum is 0.
fn normalize(scores: &mut [i64], ignored: &[bool]) {
    let kept = || {
        scores
            .iter()
            .zip(ignored)
            .filter(|(_, ig)| !**ig)
            .map(|(s, _)| *s)
    };
    let min = kept().min().unwrap_or(i64::MAX);
    let max = kept().fold(0, i64::max);
    for (s, &ig) in scores.iter_mut().zip(ignored) {
        *s = if ig || *s == IGNORED {
            0
        } else if max == 0 {
            MAX_NODE_SCORE
        } else {
            MAX_NODE_SCORE * (max + min - *s) / max
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::k8s::ClusterView;
    use crate::plugins::testing::{JOB, all_nodes, conf, node, pod, running_pod, session, task};

    fn scores_of(constraint_key: &str, nodes: &[String]) -> Option<Vec<i64>> {
        let objects = [
            JOB.to_string(),
            nodes.concat(),
            running_pod("x1", "n1", "app: x", ""),
            pod("p", "app: x", &format!("topologySpreadConstraints: [{{maxSkew: 1, topologyKey: {constraint_key}, whenUnsatisfiable: ScheduleAnyway, labelSelector: {{matchLabels: {{app: x}}}}}}]")),
            pod("plain", "app: x", ""),
        ]
        .concat();
        let ssn = session(&conf("nodeorder", ""), &objects);
        let view = ClusterView::open(&ssn.state, true);
        let c = Cluster::new(&ssn.state, &view);
        assert_eq!(
            scores(&c, task(&ssn, "ns/plain"), &all_nodes(&ssn)),
            Ok(None),
            "no constraint: skip"
        );
        scores(&c, task(&ssn, "ns/p"), &all_nodes(&ssn)).unwrap()
    }

    #[test]
    fn a_candidate_without_the_topology_key_scores_zero() {
        let nodes = [
            node("n1", "zone: a", "pods: '10'"),
            node("n2", "zone: b", "pods: '10'"),
            node("n3", "", "pods: '10'"),
        ];
        // ln(4) per pod: n1 round(1.386) = 1, n2 0; max 1, min 0.
        assert_eq!(scores_of("zone", &nodes), Some(vec![0, 100, 0]));
    }

    #[test]
    fn hostname_domains_count_the_nodes_own_pods() {
        let nodes = [
            node("n1", "kubernetes.io/hostname: n1", "pods: '10'"),
            node("n2", "kubernetes.io/hostname: n2", "pods: '10'"),
        ];
        assert_eq!(scores_of(HOSTNAME_KEY, &nodes), Some(vec![0, 100]));
    }

    #[test]
    fn all_zero_raw_scores_give_every_node_full_marks() {
        let mut raw = vec![0, 0, 7];
        normalize(&mut raw, &[false, false, true]);
        assert_eq!(raw, vec![100, 100, 0]);
    }
}
