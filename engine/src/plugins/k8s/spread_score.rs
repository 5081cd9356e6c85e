//! PodTopologySpread score (`whenUnsatisfiable: ScheduleAnyway`): nodes in less crowded domains
//! score higher. Domains are those of the candidate nodes; pods are counted on every node. A pod
//! without constraints of its own is scored by the system defaults when its Services or
//! workload select pods (see `spread_constraint`); kube-scheduler then does not require a node
//! to have every topology key (a node without a zone still spreads by hostname), and the nodes
//! without a key share the domain of the empty value.

use std::collections::HashMap;

use super::cluster::Cluster;
use super::node_affinity::RequiredNodeAffinity;
use super::normalize::MAX_NODE_SCORE;
use super::spread_constraint::{
    HOSTNAME_KEY, SpreadConstraint, constraints, count_matching, has_all_keys,
    system_default_constraints,
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
    /// Nodes must have every topology key to count or be scored (not so for the defaults).
    require_all_keys: bool,
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
    require_all_keys: bool,
) -> PreScore<'a> {
    let ignored: Vec<bool> = nodes
        .iter()
        .map(|&n| require_all_keys && !has_all_keys(c.labels(n), &constraints))
        .collect();
    let mut counts: Vec<HashMap<&'a str, i64>> = vec![HashMap::new(); constraints.len()];
    for (&n, _) in nodes.iter().zip(&ignored).filter(|(_, ig)| !**ig) {
        for (i, sc) in constraints
            .iter()
            .enumerate()
            .filter(|(_, sc)| sc.topology_key != HOSTNAME_KEY)
        {
            counts[i].entry(domain(c, n, sc)).or_insert(0);
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
        require_all_keys,
        ignored,
        counts,
        weights,
    }
}

/// The node's domain for a constraint: its value of the key, empty when it has none.
fn domain<'a>(c: &Cluster<'a>, n: NodeId, sc: &SpreadConstraint) -> &'a str {
    c.labels(n).get(&sc.topology_key).map_or("", String::as_str)
}

/// Adds the matching pods of every node (all nodes, not only candidates) to its registered
/// domain, honouring the inclusion policies.
fn count_domains(c: &Cluster, pod: &Pod, s: &mut PreScore) {
    let required = RequiredNodeAffinity::of(pod);
    for n in c.nodes() {
        let labels = c.labels(n);
        if s.require_all_keys && !has_all_keys(labels, &s.constraints) {
            continue;
        }
        let taints = &c.ssn.snap.nodes.taints[n.idx()];
        for (sc, counts) in s.constraints.iter().zip(s.counts.iter_mut()) {
            if !sc.includes_node(pod, &required, c.name(n), labels, taints) {
                continue;
            }
            if let Some(count) = counts.get_mut(domain(c, n, sc)) {
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

/// The constraints that score `task`, and whether a node must have all their keys: the pod's
/// own `ScheduleAnyway` constraints when it sets any constraint, else the system defaults.
/// `None` when there are none.
fn soft_constraints(
    c: &Cluster,
    task: TaskId,
) -> Result<Option<(Vec<SpreadConstraint>, bool)>, String> {
    let snap = &c.ssn.snap;
    // A pod without inter-pod terms (nearly every one) sets no constraint, known from the task
    // table; in a cluster without Services and workloads it has no defaults either.
    let own_terms = snap.tasks.inter_pod[task.idx()];
    if !own_terms && snap.workload_selectors.is_empty() {
        return Ok(None);
    }
    let pod = c.pod(task);
    let found = if own_terms && !pod.spec.topology_spread_constraints.is_empty() {
        let own = constraints(pod, "ScheduleAnyway").map_err(|e| {
            format!(
                "calculating preScoreState: obtaining pod's soft topology spread constraints: {e}"
            )
        })?;
        (own, true)
    } else {
        let defaults = snap
            .workload_selectors
            .default_selector(pod)
            .map(system_default_constraints);
        (defaults.unwrap_or_default(), false)
    };
    Ok((!found.0.is_empty()).then_some(found))
}

/// The normalised scores of `nodes` (`None`: the scorer skips, the pod has no ScheduleAnyway
/// constraint).
pub fn scores(c: &Cluster, task: TaskId, nodes: &[NodeId]) -> Result<Option<Vec<i64>>, String> {
    if c.ssn.snap.nodes.is_empty() {
        return Ok(None);
    }
    let Some((constraints, require_all_keys)) = soft_constraints(c, task)? else {
        return Ok(None);
    };
    let pod = c.pod(task);
    let mut s = pre_score(c, nodes, constraints, require_all_keys);
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
    use crate::harness::find::{all_nodes, task};
    use crate::harness::objects::{JOB, node, pod, running_pod};
    use crate::harness::{conf, session};
    use crate::plugins::k8s::ClusterView;

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

    /// Scores of the pending pod `p` among three nodes (`n3` without a zone) holding two
    /// `app: web` pods on `n1` and one on `n3`, with `extra` objects.
    fn default_scores(p_spec: &str, p_meta: &str, extra: &str) -> Option<Vec<i64>> {
        let objects = [
            JOB.to_string(),
            node(
                "n1",
                "kubernetes.io/hostname: n1, topology.kubernetes.io/zone: a",
                "pods: '10'",
            ),
            node(
                "n2",
                "kubernetes.io/hostname: n2, topology.kubernetes.io/zone: a",
                "pods: '10'",
            ),
            node("n3", "kubernetes.io/hostname: n3", "pods: '10'"),
            running_pod("w1", "n1", "app: web", ""),
            running_pod("w2", "n1", "app: web", ""),
            running_pod("w3", "n3", "app: web", ""),
            pod("p", "app: web", p_spec).replace("uid: p,", &format!("uid: p, {p_meta}")),
            extra.to_string(),
        ]
        .concat();
        let ssn = session(&conf("nodeorder", ""), &objects);
        let view = ClusterView::open(&ssn.state, true);
        let c = Cluster::new(&ssn.state, &view);
        scores(&c, task(&ssn, "ns/p"), &all_nodes(&ssn)).unwrap()
    }

    const WEB_SERVICE: &str =
        "- {kind: Service, metadata: {name: web, namespace: ns}, spec: {selector: {app: web}}}\n";

    #[test]
    fn a_pod_a_service_selects_is_spread_by_the_system_defaults() {
        // Hostname weight ln(5), zone weight ln(4) over the domains "a" and "" (n3's).
        // n1: 2·ln5 + 2 + 2·ln4 + 4 = 12; n2: 0 + 2 + 2·ln4 + 4 = 9; n3 has no zone, so only
        // its hostname term: ln5 + 2 = 4. Normalised: 100·(16 − s)/12.
        assert_eq!(default_scores("", "", WEB_SERVICE), Some(vec![33, 58, 100]));
        assert_eq!(
            default_scores("", "", ""),
            None,
            "nothing selects it: no defaults"
        );
    }

    #[test]
    fn a_controlling_replica_set_alone_gives_the_defaults() {
        let rs = "- {kind: ReplicaSet, metadata: {name: web-1, namespace: ns}, spec: {selector: {matchLabels: {app: web}}}}\n";
        let owner = "ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-1, controller: true}],";
        assert_eq!(default_scores("", owner, rs), Some(vec![33, 58, 100]));
    }

    #[test]
    fn a_pod_with_its_own_constraints_gets_no_defaults_even_if_none_is_soft() {
        let hard = "topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]";
        assert_eq!(default_scores(hard, "", WEB_SERVICE), None);
    }

    #[test]
    fn all_zero_raw_scores_give_every_node_full_marks() {
        let mut raw = vec![0, 0, 7];
        normalize(&mut raw, &[false, false, true]);
        assert_eq!(raw, vec![100, 100, 0]);
    }
}
