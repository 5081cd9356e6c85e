//! PodTopologySpread filter (`whenUnsatisfiable: DoNotSchedule`): placing the pod must not push a
//! domain more than `maxSkew` above the least loaded one.
//!
//! The PreFilter counts matching pods per domain once; like the inter-pod affinity counts, they
//! are not refreshed by later placements or evictions until the next PreFilter.

use std::collections::HashMap;

use super::cluster::Cluster;
use super::node_affinity::RequiredNodeAffinity;
use super::spread_constraint::{SpreadConstraint, constraints, count_matching, has_all_keys};
use crate::api::StringMap;
use crate::framework::{Status, StatusCode};
use crate::model::TaskId;

/// kube's reason when a placement would exceed the skew.
pub const REASON: &str = "node(s) didn't match pod topology spread constraints";
/// kube's reason when the node lacks a constraint's topology key.
pub const MISSING_LABEL_REASON: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";

/// The domain counts the filter compares against.
#[derive(Debug, Clone, PartialEq)]
pub struct SpreadFilterState {
    constraints: Vec<SpreadConstraint>,
    counts: Vec<HashMap<String, i64>>,
}

/// PreFilter: `None` (Skip) without DoNotSchedule constraints; an Error status when a
/// constraint's selector does not parse.
pub fn pre_filter(c: &Cluster, task: TaskId) -> Result<Option<SpreadFilterState>, Status> {
    // A pod without constraints (nearly every one), known from the task table.
    if !c.ssn.snap.tasks.inter_pod[task.idx()] {
        return Ok(None);
    }
    let pod = c.pod(task);
    let constraints = constraints(pod, "DoNotSchedule").map_err(|e| Status {
        code: StatusCode::Error,
        reason: format!(
            "get constraints from pod: obtaining pod's hard topology spread constraints: {e}"
        )
        .into(),
    })?;
    if constraints.is_empty() {
        return Ok(None);
    }
    let required = RequiredNodeAffinity::of(pod);
    let mut counts = vec![HashMap::new(); constraints.len()];
    let nodes = &c.ssn.snap.nodes;
    for n in c.nodes() {
        let labels = c.labels(n);
        if !has_all_keys(labels, &constraints) {
            continue;
        }
        for (i, sc) in constraints.iter().enumerate() {
            if !sc.includes_node(pod, &required, c.name(n), labels, &nodes.taints[n.idx()]) {
                continue;
            }
            let matching = count_matching(c, c.pods_on(n), &sc.selector, &pod.metadata.namespace);
            *counts[i]
                .entry(labels[&sc.topology_key].clone())
                .or_default() += matching;
        }
    }
    Ok(Some(SpreadFilterState {
        constraints,
        counts,
    }))
}

impl SpreadFilterState {
    /// `minMatchNum`: the least loaded domain, or 0 while there are fewer than minDomains domains.
    fn min_match(&self, i: usize) -> i64 {
        let domains = &self.counts[i];
        if (domains.len() as i64) < i64::from(self.constraints[i].min_domains) {
            return 0;
        }
        domains
            .values()
            .copied()
            .min()
            .unwrap_or(i64::from(i32::MAX))
    }
}

/// Filter: U&U when the node lacks a topology key, Unschedulable when the skew would exceed
/// `maxSkew`.
pub fn filter(
    s: &SpreadFilterState,
    pod_labels: &StringMap,
    node_labels: &StringMap,
) -> Result<(), Status> {
    for (i, sc) in s.constraints.iter().enumerate() {
        let Some(value) = node_labels.get(&sc.topology_key) else {
            return Err(Status {
                code: StatusCode::UnschedulableAndUnresolvable,
                reason: MISSING_LABEL_REASON.into(),
            });
        };
        let own = i64::from(sc.selector.matches(pod_labels));
        let skew = s.counts[i].get(value).copied().unwrap_or(0) + own - s.min_match(i);
        if skew > i64::from(sc.max_skew) {
            return Err(Status {
                code: StatusCode::Unschedulable,
                reason: REASON.into(),
            });
        }
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

    fn state(constraint: &str, extra_nodes: &[String]) -> (SpreadFilterState, StringMap) {
        let objects = [
            JOB.to_string(),
            node("n1", "zone: a", "pods: '10'"),
            extra_nodes.concat(),
            running_pod("x1", "n1", "app: x", ""),
            running_pod("x2", "n1", "app: x", ""),
            pod("p", "app: x", &format!("topologySpreadConstraints: [{{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: x}}}}{constraint}}}]")),
        ]
        .concat();
        let ssn = session(&conf("nodeorder", ""), &objects);
        let view = ClusterView::open(&ssn.state, true);
        let t = task(&ssn, "ns/p");
        let s = pre_filter(&Cluster::new(&ssn.state, &view), t)
            .unwrap()
            .unwrap();
        (s, ssn.state.snap.tasks.pod[t.idx()].metadata.labels.clone())
    }

    fn zone(z: &str) -> StringMap {
        StringMap::from([("zone".to_string(), z.to_string())])
    }

    #[test]
    fn the_only_domain_is_its_own_minimum() {
        let (s, labels) = state("", &[]);
        assert!(filter(&s, &labels, &zone("a")).is_ok(), "2 + 1 - 2 = 1");
    }

    #[test]
    fn fewer_domains_than_min_domains_count_the_minimum_as_zero() {
        let (s, labels) = state(", minDomains: 2", &[]);
        assert_eq!(filter(&s, &labels, &zone("a")).unwrap_err().reason, REASON);
    }

    #[test]
    fn honoured_taints_keep_a_tainted_nodes_domain_out() {
        let tainted = "- {kind: Node, metadata: {name: n2, labels: {zone: b}}, spec: {taints: [{key: k, effect: NoSchedule}]}, status: {allocatable: {pods: '10'}}}\n".to_string();
        let (ignored, labels) = state("", std::slice::from_ref(&tainted));
        assert!(
            filter(&ignored, &labels, &zone("a")).is_err(),
            "zone b counts, with 0 pods"
        );
        let (honoured, _) = state(", nodeTaintsPolicy: Honor", &[tainted]);
        assert!(
            filter(&honoured, &labels, &zone("a")).is_ok(),
            "zone b is not a domain"
        );
    }
}
