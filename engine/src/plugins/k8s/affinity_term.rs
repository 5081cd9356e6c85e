//! Inter-pod affinity terms as kube-scheduler processes them (`fwk.AffinityTerm`): a label
//! selector, the namespaces it applies to, and a topology key.
//!
//! A `namespaceSelector` is matched against the labels of the candidate pod's namespace, from
//! the snapshot's Namespaces; a namespace the cluster does not list has none. kube resolves the
//! incoming pod's own selectors into namespace names by listing the namespaces
//! (`mergeAffinityTermNamespacesIfNotEmpty`) and matches existing pods' terms against the
//! incoming pod's namespace labels (`AffinityTerm.Matches`); both come to this test.

use std::collections::BTreeSet;

use crate::api::{Pod, PodAffinityTerm, WeightedPodAffinityTerm};
use crate::selector::Selector;
use crate::snapshot::NamespaceTable;

/// A processed `PodAffinityTerm`.
#[derive(Debug, Clone, PartialEq)]
pub struct AffinityTerm {
    pub namespaces: BTreeSet<String>,
    pub selector: Selector,
    pub topology_key: String,
    pub namespace_selector: Selector,
}

/// A processed `WeightedPodAffinityTerm`.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedAffinityTerm {
    pub term: AffinityTerm,
    pub weight: i32,
}

impl AffinityTerm {
    /// `newAffinityTerm`: with neither `namespaces` nor a `namespaceSelector`, the term applies to
    /// the owning pod's namespace.
    pub fn new(owner: &Pod, term: &PodAffinityTerm) -> Result<AffinityTerm, String> {
        let selector = Selector::from_label_selector(term.label_selector.as_ref())?;
        let namespaces = if term.namespaces.is_empty() && term.namespace_selector.is_none() {
            BTreeSet::from([owner.metadata.namespace.clone()])
        } else {
            term.namespaces.iter().cloned().collect()
        };
        let namespace_selector = Selector::from_label_selector(term.namespace_selector.as_ref())?;
        Ok(AffinityTerm {
            namespaces,
            selector,
            topology_key: term.topology_key.clone(),
            namespace_selector,
        })
    }

    /// `AffinityTerm.Matches`: the pod is in one of the term's namespaces, or in one whose
    /// labels the term's namespace selector selects, and carries the term's labels.
    pub fn matches(&self, pod: &Pod, namespaces: &NamespaceTable) -> bool {
        let ns = &pod.metadata.namespace;
        let in_namespace =
            self.namespaces.contains(ns) || self.namespace_selector.matches(namespaces.labels(ns));
        in_namespace && self.selector.matches(&pod.metadata.labels)
    }
}

/// `GetAffinityTerms`: any error drops the whole list.
pub fn parse_terms(owner: &Pod, terms: &[PodAffinityTerm]) -> Result<Vec<AffinityTerm>, String> {
    terms.iter().map(|t| AffinityTerm::new(owner, t)).collect()
}

/// `GetWeightedAffinityTerms`: any error drops the whole list.
pub fn parse_weighted_terms(
    owner: &Pod,
    terms: &[WeightedPodAffinityTerm],
) -> Result<Vec<WeightedAffinityTerm>, String> {
    terms
        .iter()
        .map(|t| {
            Ok(WeightedAffinityTerm {
                term: AffinityTerm::new(owner, &t.pod_affinity_term)?,
                weight: t.weight,
            })
        })
        .collect()
}

/// `podMatchesAllAffinityTerms`: false for an empty list.
pub fn matches_all(terms: &[AffinityTerm], pod: &Pod, namespaces: &NamespaceTable) -> bool {
    !terms.is_empty() && terms.iter().all(|t| t.matches(pod, namespaces))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_saphyr::from_str(yaml).unwrap()
    }

    fn none() -> NamespaceTable {
        NamespaceTable::default()
    }

    fn term(yaml: &str) -> PodAffinityTerm {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn a_term_without_namespaces_applies_to_the_owners_namespace() {
        let owner = pod("metadata: {namespace: ns1}");
        let t = AffinityTerm::new(
            &owner,
            &term("labelSelector: {matchLabels: {app: a}}\ntopologyKey: zone"),
        )
        .unwrap();
        assert!(t.matches(
            &pod("metadata: {namespace: ns1, labels: {app: a}}"),
            &none()
        ));
        assert!(!t.matches(
            &pod("metadata: {namespace: ns2, labels: {app: a}}"),
            &none()
        ));
    }

    #[test]
    fn an_empty_namespace_selector_selects_every_namespace() {
        let owner = pod("metadata: {namespace: ns1}");
        let t = AffinityTerm::new(
            &owner,
            &term("labelSelector: {}\nnamespaceSelector: {}\ntopologyKey: zone"),
        )
        .unwrap();
        assert!(t.matches(&pod("metadata: {namespace: other}"), &none()));
        let labelled = AffinityTerm::new(
            &owner,
            &term(
                "labelSelector: {}\nnamespaceSelector: {matchLabels: {team: x}}\ntopologyKey: zone",
            ),
        )
        .unwrap();
        assert!(
            !labelled.matches(&pod("metadata: {namespace: ns1}"), &none()),
            "listed namespaces replace the owner's"
        );
    }

    #[test]
    fn a_namespace_selector_matches_the_labels_of_the_pods_namespace() {
        let owner = pod("metadata: {namespace: ns1}");
        let t = AffinityTerm::new(
            &owner,
            &term(
                "labelSelector: {}\nnamespaceSelector: {matchLabels: {team: x}}\ntopologyKey: zone",
            ),
        )
        .unwrap();
        let mut namespaces = NamespaceTable::default();
        let mut team_x = crate::api::Namespace::default();
        team_x.metadata.name = "x-1".into();
        team_x.metadata.labels.insert("team".into(), "x".into());
        namespaces.insert(&std::sync::Arc::new(team_x));
        assert!(t.matches(&pod("metadata: {namespace: x-1}"), &namespaces));
        assert!(!t.matches(&pod("metadata: {namespace: y-1}"), &namespaces));
        assert!(
            !t.matches(&pod("metadata: {namespace: x-1}"), &none()),
            "an unlisted namespace has no labels"
        );
    }

    #[test]
    fn a_nil_label_selector_matches_no_pod() {
        let owner = pod("metadata: {namespace: ns1}");
        let t = AffinityTerm::new(&owner, &term("topologyKey: zone")).unwrap();
        assert!(!t.matches(&pod("metadata: {namespace: ns1}"), &none()));
        assert!(!matches_all(&[], &owner, &none()));
    }
}
