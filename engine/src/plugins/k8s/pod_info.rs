//! `framework.PodInfo`: a pod's parsed inter-pod affinity terms and its kube requests, computed
//! once per pod so the filters and scorers do not re-parse existing pods.

use super::affinity_term::{AffinityTerm, WeightedAffinityTerm, parse_terms, parse_weighted_terms};
use super::requests::PodResource;
use crate::api::Pod;
use crate::selector::join_errors;

/// A pod's processed scheduling terms. Kept for every pod of the cluster, so its lists are
/// boxed slices (most are empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodInfo {
    pub required_affinity: Box<[AffinityTerm]>,
    pub required_anti_affinity: Box<[AffinityTerm]>,
    pub preferred_affinity: Box<[WeightedAffinityTerm]>,
    pub preferred_anti_affinity: Box<[WeightedAffinityTerm]>,
    /// `podAffinity` or `podAntiAffinity` is set (kube's `PodsWithAffinity` membership).
    pub has_pod_affinity: bool,
    /// Why some term lists failed to parse; those lists are left empty, as kube leaves them nil.
    pub parse_error: Option<String>,
    pub resource: PodResource,
}

impl PodInfo {
    /// `NewPodInfo`.
    pub fn new(pod: &Pod) -> PodInfo {
        let affinity = pod.spec.affinity.as_ref();
        let pa = affinity.and_then(|a| a.pod_affinity.as_ref());
        let anti = affinity.and_then(|a| a.pod_anti_affinity.as_ref());
        let mut errs = Vec::new();
        let mut keep = |label: &str, r: Result<Vec<AffinityTerm>, String>| {
            r.unwrap_or_else(|e| {
                errs.push(format!("{label}: {e}"));
                Vec::new()
            })
        };
        let required_affinity = keep(
            "requiredAffinityTerms",
            parse_terms(
                pod,
                pa.map(|a| {
                    a.required_during_scheduling_ignored_during_execution
                        .as_slice()
                })
                .unwrap_or_default(),
            ),
        );
        let required_anti_affinity = keep(
            "requiredAntiAffinityTerms",
            parse_terms(
                pod,
                anti.map(|a| {
                    a.required_during_scheduling_ignored_during_execution
                        .as_slice()
                })
                .unwrap_or_default(),
            ),
        );
        let mut keep_weighted = |label: &str, r: Result<Vec<WeightedAffinityTerm>, String>| {
            r.unwrap_or_else(|e| {
                errs.push(format!("{label}: {e}"));
                Vec::new()
            })
        };
        let preferred_affinity = keep_weighted(
            "preferredAffinityTerms",
            parse_weighted_terms(
                pod,
                pa.map(|a| {
                    a.preferred_during_scheduling_ignored_during_execution
                        .as_slice()
                })
                .unwrap_or_default(),
            ),
        );
        let preferred_anti_affinity = keep_weighted(
            "preferredAntiAffinityTerms",
            parse_weighted_terms(
                pod,
                anti.map(|a| {
                    a.preferred_during_scheduling_ignored_during_execution
                        .as_slice()
                })
                .unwrap_or_default(),
            ),
        );
        PodInfo {
            required_affinity: required_affinity.into(),
            required_anti_affinity: required_anti_affinity.into(),
            preferred_affinity: preferred_affinity.into(),
            preferred_anti_affinity: preferred_anti_affinity.into(),
            has_pod_affinity: pa.is_some() || anti.is_some(),
            parse_error: if errs.is_empty() {
                None
            } else {
                Some(join_errors(errs))
            },
            resource: PodResource::of(pod),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_selector_empties_only_its_own_list_and_is_reported() {
        let pod: Pod = serde_saphyr::from_str(concat!(
            "metadata: {namespace: ns}\n",
            "spec:\n  affinity:\n",
            "    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n",
            "      - {labelSelector: {matchExpressions: [{key: a, operator: Bad}]}, topologyKey: zone}\n",
            "    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n",
            "      - {labelSelector: {matchLabels: {a: b}}, topologyKey: zone}\n",
        ))
        .unwrap();
        let info = PodInfo::new(&pod);
        assert!(info.required_affinity.is_empty());
        assert_eq!(info.required_anti_affinity.len(), 1);
        assert!(
            info.parse_error
                .unwrap()
                .starts_with("requiredAffinityTerms: ")
        );
        assert!(info.has_pod_affinity);
    }
}
