//! Pod topology spread constraints as the PodTopologySpread plugin reads them, shared by its
//! filter and its score.
//!
//! Volcano runs the plugin with system defaulting (pkg/scheduler/plugins/nodeorder/nodeorder.go
//! and predicates/predicates.go, `PodTopologySpreadArgs{DefaultingType: SystemDefaulting}`): a
//! pod that sets no constraint of its own gets kube-scheduler's two defaults, spread over
//! hostnames (maxSkew 3) and zones (maxSkew 5), both `ScheduleAnyway`, over the pods its
//! Services and controlling workload select (`WorkloadSelectors::default_selector`). Being
//! `ScheduleAnyway`, they only ever score; the filter never sees them.

use std::collections::BTreeMap;

use super::cluster::Cluster;
use super::node_affinity::RequiredNodeAffinity;
use super::toleration::first_untolerated;
use crate::api::{Pod, StringMap, Taint};
use crate::model::TaskId;
use crate::selector::Selector;

/// The well-known hostname label: its domains are single nodes.
pub const HOSTNAME_KEY: &str = "kubernetes.io/hostname";

/// The well-known zone label.
pub const ZONE_KEY: &str = "topology.kubernetes.io/zone";

/// One parsed constraint (`topologySpreadConstraint`).
#[derive(Debug, Clone, PartialEq)]
pub struct SpreadConstraint {
    pub max_skew: i32,
    pub topology_key: String,
    pub selector: Selector,
    pub min_domains: i32,
    pub honor_node_affinity: bool,
    pub honor_node_taints: bool,
}

/// `filterTopologySpreadConstraints`: the pod's constraints with `whenUnsatisfiable == action`;
/// `matchLabelKeys` add the pod's own values; minDomains defaults to 1, the node affinity policy
/// to Honor and the taints policy to Ignore.
pub fn constraints(pod: &Pod, action: &str) -> Result<Vec<SpreadConstraint>, String> {
    let mut out = Vec::new();
    for c in pod
        .spec
        .topology_spread_constraints
        .iter()
        .filter(|c| c.when_unsatisfiable == action)
    {
        let mut selector = Selector::from_label_selector(c.label_selector.as_ref())?;
        let own: BTreeMap<String, String> = c
            .match_label_keys
            .iter()
            .filter_map(|k| pod.metadata.labels.get(k).map(|v| (k.clone(), v.clone())))
            .collect();
        if !own.is_empty() {
            selector = selector.with_labels(&own);
        }
        out.push(SpreadConstraint {
            max_skew: c.max_skew,
            topology_key: c.topology_key.clone(),
            selector,
            min_domains: c.min_domains.unwrap_or(1),
            honor_node_affinity: c
                .node_affinity_policy
                .as_deref()
                .is_none_or(|p| p == "Honor"),
            honor_node_taints: c.node_taints_policy.as_deref() == Some("Honor"),
        });
    }
    Ok(out)
}

/// kube-scheduler's system-default constraints (podtopologyspread/plugin.go,
/// `systemDefaultConstraints`) over `selector`, with the default inclusion policies.
pub fn system_default_constraints(selector: Selector) -> Vec<SpreadConstraint> {
    [(HOSTNAME_KEY, 3), (ZONE_KEY, 5)]
        .into_iter()
        .map(|(key, max_skew)| SpreadConstraint {
            max_skew,
            topology_key: key.into(),
            selector: selector.clone(),
            min_domains: 1,
            honor_node_affinity: true,
            honor_node_taints: false,
        })
        .collect()
}

impl SpreadConstraint {
    /// `matchNodeInclusionPolicies`: whether the node's pods count towards this constraint.
    pub fn includes_node(
        &self,
        pod: &Pod,
        required: &RequiredNodeAffinity,
        node_name: &str,
        labels: &StringMap,
        taints: &[Taint],
    ) -> bool {
        if self.honor_node_affinity && !required.matches(node_name, labels) {
            return false;
        }
        !(self.honor_node_taints && first_untolerated(taints, &pod.spec.tolerations).is_some())
    }
}

/// `nodeLabelsMatchSpreadConstraints`: the node has every constraint's topology key.
pub fn has_all_keys(labels: &StringMap, constraints: &[SpreadConstraint]) -> bool {
    constraints
        .iter()
        .all(|c| labels.contains_key(&c.topology_key))
}

/// `countPodsMatchSelector`: live pods of namespace `ns` the selector matches; an empty
/// selector (`{}`) counts nothing.
pub fn count_matching(c: &Cluster, pods: &[TaskId], selector: &Selector, ns: &str) -> i64 {
    if selector.is_empty() {
        return 0;
    }
    pods.iter()
        .map(|&t| c.pod(t))
        .filter(|p| p.metadata.deletion_timestamp.is_none() && p.metadata.namespace == ns)
        .filter(|p| selector.matches(&p.metadata.labels))
        .count() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn constraints_are_filtered_by_action_and_defaulted() {
        let p = pod(concat!(
            "metadata: {labels: {app: a, rev: '2'}}\n",
            "spec:\n  topologySpreadConstraints:\n",
            "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: a}}, matchLabelKeys: [rev, missing]}\n",
            "  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, nodeTaintsPolicy: Honor, nodeAffinityPolicy: Ignore}\n",
        ));
        let hard = constraints(&p, "DoNotSchedule").unwrap();
        assert_eq!(hard.len(), 1);
        assert_eq!(hard[0].min_domains, 1);
        assert!(hard[0].honor_node_affinity && !hard[0].honor_node_taints);
        let l = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(hard[0].selector.matches(&l(&[("app", "a"), ("rev", "2")])));
        assert!(
            !hard[0].selector.matches(&l(&[("app", "a"), ("rev", "1")])),
            "matchLabelKeys pin the pod's revision"
        );
        let soft = constraints(&p, "ScheduleAnyway").unwrap();
        assert_eq!(
            soft[0].selector,
            Selector::Nothing,
            "no labelSelector selects nothing"
        );
        assert!(!soft[0].honor_node_affinity && soft[0].honor_node_taints);
    }
}
