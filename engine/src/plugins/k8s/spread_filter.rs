//! PodTopologySpread filter (`whenUnsatisfiable: DoNotSchedule`): placing the pod must not push a
//! domain more than `maxSkew` above the least loaded one.
//!
//! The PreFilter counts matching pods per domain once; like the inter-pod affinity counts, they
//! are not refreshed by later placements or evictions until the next PreFilter.

use std::collections::{BTreeMap, HashMap};

use super::cluster::Cluster;
use super::node_affinity::RequiredNodeAffinity;
use super::spread_constraint::{SpreadConstraint, constraints, count_matching, has_all_keys};
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
    let pod = c.pod(task);
    let constraints = constraints(pod, "DoNotSchedule").map_err(|e| Status {
        code: StatusCode::Error,
        reason: format!(
            "get constraints from pod: obtaining pod's hard topology spread constraints: {e}"
        ),
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
    pod_labels: &BTreeMap<String, String>,
    node_labels: &BTreeMap<String, String>,
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
