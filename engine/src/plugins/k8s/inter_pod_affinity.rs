//! InterPodAffinity filter: the pod's required affinity and anti-affinity, and the required
//! anti-affinity of the pods already placed.
//!
//! The PreFilter counts matching pods per topology pair once; the counts are not refreshed by
//! later placements or evictions until the next PreFilter, as in Volcano. Existing pods'
//! anti-affinity is looked up only on the nodes that had such pods at session open.

use std::collections::HashMap;

use super::affinity_term::{AffinityTerm, matches_all};
use super::cluster::Cluster;
use crate::api::StringMap;
use crate::framework::{Status, StatusCode};
use crate::model::TaskId;

/// kube's reason when the pod's required affinity finds no peer in the node's topology.
pub const AFFINITY_REASON: &str = "node(s) didn't match pod affinity rules";
/// kube's reason when the pod's required anti-affinity meets a peer.
pub const ANTI_AFFINITY_REASON: &str = "node(s) didn't match pod anti-affinity rules";
/// kube's reason when an existing pod's required anti-affinity rejects the pod.
pub const EXISTING_ANTI_AFFINITY_REASON: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";

/// Matching pods per `(topology key, value)`.
type TopologyCounts = HashMap<(String, String), i64>;

fn bump(counts: &mut TopologyCounts, labels: &StringMap, key: &str) {
    if let Some(v) = labels.get(key) {
        *counts.entry((key.to_string(), v.clone())).or_default() += 1;
    }
}

/// What the filter needs, computed by the PreFilter.
#[derive(Debug, Clone, PartialEq)]
pub struct InterPodAffinityState {
    existing_anti_affinity: TopologyCounts,
    affinity: TopologyCounts,
    anti_affinity: TopologyCounts,
    required_affinity: Vec<AffinityTerm>,
    required_anti_affinity: Vec<AffinityTerm>,
    matches_own_affinity: bool,
}

/// PreFilter: `None` (Skip) when no existing pod's anti-affinity matches the pod and the pod has
/// no required terms; U&U when the pod's terms do not parse.
pub fn pre_filter(c: &Cluster, task: TaskId) -> Result<Option<InterPodAffinityState>, Status> {
    // Nearly every pod: no terms of its own (so none to parse either) and no existing pod's
    // required anti-affinity to meet. Known from the task table, without reading the pod.
    if !c.ssn.snap.tasks.inter_pod[task.idx()]
        && c.view.nodes_with_required_anti_affinity().is_empty()
    {
        return Ok(None);
    }
    let pod = c.pod(task);
    let info = c.info(task);
    let namespaces = c.namespaces();
    if let Some(e) = &info.parse_error {
        return Err(Status {
            code: StatusCode::UnschedulableAndUnresolvable,
            reason: format!("parsing pod: {e}").into(),
        });
    }
    let mut existing_anti_affinity = TopologyCounts::new();
    for &n in c.view.nodes_with_required_anti_affinity() {
        let labels = c.labels(n);
        for &e in c.pods_on(n) {
            for term in c
                .info(e)
                .required_anti_affinity
                .iter()
                .filter(|t| t.matches(pod, namespaces))
            {
                bump(&mut existing_anti_affinity, labels, &term.topology_key);
            }
        }
    }
    let mut affinity = TopologyCounts::new();
    let mut anti_affinity = TopologyCounts::new();
    if !info.required_affinity.is_empty() || !info.required_anti_affinity.is_empty() {
        for n in c.nodes() {
            let labels = c.labels(n);
            for &e in c.pods_on(n) {
                let other = c.pod(e);
                if matches_all(&info.required_affinity, other, namespaces) {
                    for term in &info.required_affinity {
                        bump(&mut affinity, labels, &term.topology_key);
                    }
                }
                for term in info
                    .required_anti_affinity
                    .iter()
                    .filter(|t| t.matches(other, namespaces))
                {
                    bump(&mut anti_affinity, labels, &term.topology_key);
                }
            }
        }
    }
    if existing_anti_affinity.is_empty()
        && info.required_affinity.is_empty()
        && info.required_anti_affinity.is_empty()
    {
        return Ok(None);
    }
    Ok(Some(InterPodAffinityState {
        existing_anti_affinity,
        affinity,
        anti_affinity,
        required_affinity: info.required_affinity.to_vec(),
        required_anti_affinity: info.required_anti_affinity.to_vec(),
        matches_own_affinity: matches_all(&info.required_affinity, pod, namespaces),
    }))
}

/// Adds `delta` for the node's value of `key`, dropping entries that reach zero (kube keeps no
/// zero counts, and an empty map means "nothing to check").
fn add(counts: &mut TopologyCounts, labels: &StringMap, key: &str, delta: i64) {
    if let Some(v) = labels.get(key) {
        let k = (key.to_string(), v.clone());
        let c = counts.entry(k.clone()).or_default();
        *c += delta;
        if *c == 0 {
            counts.remove(&k);
        }
    }
}

/// kube's `updateWithPod`: the state as if `other` (on a node with `labels`) were added
/// (`delta = 1`) or removed (`delta = -1`). Used by preemption dry runs.
pub fn update_with_pod(
    s: &mut InterPodAffinityState,
    c: &Cluster,
    preemptor: TaskId,
    other: TaskId,
    labels: &StringMap,
    delta: i64,
) {
    let namespaces = c.namespaces();
    let pod = c.pod(preemptor);
    for term in c
        .info(other)
        .required_anti_affinity
        .iter()
        .filter(|t| t.matches(pod, namespaces))
    {
        add(
            &mut s.existing_anti_affinity,
            labels,
            &term.topology_key,
            delta,
        );
    }
    let other_pod = c.pod(other);
    if matches_all(&s.required_affinity, other_pod, namespaces) {
        for term in &s.required_affinity {
            add(&mut s.affinity, labels, &term.topology_key, delta);
        }
    }
    for term in s
        .required_anti_affinity
        .iter()
        .filter(|t| t.matches(other_pod, namespaces))
    {
        add(&mut s.anti_affinity, labels, &term.topology_key, delta);
    }
}

fn count(counts: &TopologyCounts, key: &str, value: &str) -> i64 {
    counts
        .get(&(key.to_string(), value.to_string()))
        .copied()
        .unwrap_or(0)
}

/// The node has every affinity topology key and a peer in each; the first pod of a group (no
/// peer anywhere, and it matches its own terms) may go anywhere with the keys.
fn satisfies_affinity(s: &InterPodAffinityState, labels: &StringMap) -> bool {
    let mut pods_exist = true;
    for term in &s.required_affinity {
        let Some(v) = labels.get(&term.topology_key) else {
            return false;
        };
        if count(&s.affinity, &term.topology_key, v) <= 0 {
            pods_exist = false;
        }
    }
    pods_exist || (s.affinity.is_empty() && s.matches_own_affinity)
}

fn satisfies_anti_affinity(s: &InterPodAffinityState, labels: &StringMap) -> bool {
    s.anti_affinity.is_empty()
        || s.required_anti_affinity.iter().all(|t| {
            labels
                .get(&t.topology_key)
                .is_none_or(|v| count(&s.anti_affinity, &t.topology_key, v) <= 0)
        })
}

fn satisfies_existing_anti_affinity(s: &InterPodAffinityState, labels: &StringMap) -> bool {
    s.existing_anti_affinity.is_empty()
        || labels
            .iter()
            .all(|(k, v)| count(&s.existing_anti_affinity, k, v) <= 0)
}

/// Filter: affinity (U&U), then the pod's anti-affinity, then existing pods' anti-affinity
/// (both Unschedulable).
pub fn filter(s: &InterPodAffinityState, labels: &StringMap) -> Result<(), Status> {
    let fail = |code, reason: &'static str| {
        Err(Status {
            code,
            reason: reason.into(),
        })
    };
    if !satisfies_affinity(s, labels) {
        return fail(StatusCode::UnschedulableAndUnresolvable, AFFINITY_REASON);
    }
    if !satisfies_anti_affinity(s, labels) {
        return fail(StatusCode::Unschedulable, ANTI_AFFINITY_REASON);
    }
    if !satisfies_existing_anti_affinity(s, labels) {
        return fail(StatusCode::Unschedulable, EXISTING_ANTI_AFFINITY_REASON);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::find::task;
    use crate::harness::objects::{JOB, node, pod, running_pod};
    use crate::harness::{conf, session};
    use crate::plugins::k8s::ClusterView;

    fn pre(objects: &[String], p: &str) -> Result<Option<InterPodAffinityState>, Status> {
        let ssn = session(
            &conf("nodeorder", ""),
            &[JOB.to_string(), objects.concat()].concat(),
        );
        let view = ClusterView::open(&ssn.state, true);
        pre_filter(
            &Cluster::new(&ssn.state, &view),
            task(&ssn, &format!("ns/{p}")),
        )
    }

    fn zone(z: &str) -> StringMap {
        StringMap::from([("zone".to_string(), z.to_string())])
    }

    const ANTI: &str = "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: x}}, topologyKey: zone}]}}";

    #[test]
    fn nothing_to_check_is_a_skip() {
        let objects = [
            node("n1", "zone: a", "pods: '10'"),
            running_pod("x", "n1", "app: x", ""),
            pod("p", "", ""),
        ];
        assert_eq!(pre(&objects, "p"), Ok(None));
    }

    #[test]
    fn anti_affinity_blocks_only_the_peers_domain() {
        let objects = [
            node("n1", "zone: a", "pods: '10'"),
            node("n2", "zone: b", "pods: '10'"),
            running_pod("x", "n1", "app: x", ""),
            pod("p", "", ANTI),
        ];
        let s = pre(&objects, "p").unwrap().unwrap();
        assert_eq!(
            filter(&s, &zone("a")).unwrap_err().reason,
            ANTI_AFFINITY_REASON
        );
        assert!(filter(&s, &zone("b")).is_ok());
        assert!(
            filter(&s, &StringMap::new()).is_ok(),
            "a node without the key has no peer"
        );
    }

    #[test]
    fn an_unparsable_term_is_unresolvable() {
        let bad = "affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {'bad key': v}}, topologyKey: zone}]}}";
        let err = pre(
            &[node("n1", "zone: a", "pods: '10'"), pod("p", "", bad)],
            "p",
        )
        .unwrap_err();
        assert_eq!(err.code, StatusCode::UnschedulableAndUnresolvable);
        assert!(
            err.reason
                .starts_with("parsing pod: requiredAffinityTerms: "),
            "{}",
            err.reason
        );
    }
}
