//! NodeAffinity: the filter (`spec.nodeSelector` and required node affinity) with its PreFilter,
//! and the preferred-term score. Volcano adds no scheduler-enforced affinity.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::node_selector::{ParsedTerm, is_empty_term};
use super::normalize::default_normalize;
use crate::api::{NodeSelector, Pod, StringMap};
use crate::framework::{Status, StatusCode};
use crate::selector::{Selector, join_errors};

/// kube's reason for a node the pod's affinity or selector rejects.
pub const REASON: &str = "node(s) didn't match Pod's node affinity/selector";
/// kube's PreFilter reason when the required terms name no node at all.
pub const CONFLICT_REASON: &str = "pod affinity terms conflict";

fn required_selector(pod: &Pod) -> Option<&NodeSelector> {
    pod.spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()
}

/// `RequiredNodeAffinity`: the nodeSelector, then the ORed non-empty required terms.
#[derive(Debug, Clone, PartialEq)]
pub struct RequiredNodeAffinity {
    node_selector: Option<Selector>,
    terms: Option<Vec<ParsedTerm>>,
}

impl RequiredNodeAffinity {
    /// `GetRequiredNodeAffinity`.
    pub fn of(pod: &Pod) -> RequiredNodeAffinity {
        let node_selector = (!pod.spec.node_selector.is_empty())
            .then(|| Selector::from_set(&pod.spec.node_selector));
        let terms = required_selector(pod).map(|ns| {
            ns.node_selector_terms
                .iter()
                .filter(|t| !is_empty_term(t))
                .map(ParsedTerm::parse)
                .collect()
        });
        RequiredNodeAffinity {
            node_selector,
            terms,
        }
    }

    /// `Match`: a required list with no (non-empty) term matches no node.
    pub fn matches(&self, node_name: &str, labels: &StringMap) -> bool {
        if self
            .node_selector
            .as_ref()
            .is_some_and(|s| !s.matches(labels))
        {
            return false;
        }
        match &self.terms {
            None => true,
            Some(terms) => terms.iter().any(|t| t.matches(node_name, labels)),
        }
    }
}

/// PreFilter: `None` (Skip) without a nodeSelector and required affinity; U&U when every required
/// term pins `metadata.name` and the pinned sets leave no node.
pub fn pre_filter(pod: &Pod) -> Result<Option<RequiredNodeAffinity>, Status> {
    let required = required_selector(pod);
    if required.is_none() && pod.spec.node_selector.is_empty() {
        return Ok(None);
    }
    let state = RequiredNodeAffinity::of(pod);
    let Some(required) = required.filter(|r| !r.node_selector_terms.is_empty()) else {
        return Ok(Some(state));
    };
    let mut union: BTreeSet<&str> = BTreeSet::new();
    for term in &required.node_selector_terms {
        let mut names: Option<BTreeSet<&str>> = None;
        for r in term
            .match_fields
            .iter()
            .filter(|r| r.key == "metadata.name" && r.operator == "In")
        {
            let set: BTreeSet<&str> = r.values.iter().map(String::as_str).collect();
            names = Some(match names {
                None => set,
                Some(prev) => prev.intersection(&set).copied().collect(),
            });
        }
        let Some(names) = names else {
            return Ok(Some(state));
        };
        union.extend(names);
    }
    if union.is_empty() {
        return Err(Status {
            code: StatusCode::UnschedulableAndUnresolvable,
            reason: CONFLICT_REASON.into(),
        });
    }
    Ok(Some(state))
}

/// PreFilter's answer: the requirement to check, `None` when there is none (Skip).
pub type PreFilterAnswer = Result<Option<Arc<RequiredNodeAffinity>>, Status>;

/// PreFilter's answer for one version of a pod, kept in the pod's memo.
struct PreFilterMemo(PreFilterAnswer);

/// `pre_filter`, worked out once per version of the pod: every cycle runs it for each pending
/// task, and parsing the selector and terms was a tenth of a contended allocate.
pub fn pre_filter_memoised(pod: &Pod) -> PreFilterAnswer {
    let make = || PreFilterMemo(pre_filter(pod).map(|r| r.map(Arc::new)));
    match pod.memo.get_or_init_ref(make) {
        Some(memo) => memo.0.clone(),
        None => make().0,
    }
}

/// True when the pod's required node affinity is its `nodeSelector` alone (no required terms):
/// a label index then answers the filter exactly.
pub fn selector_only(pod: &Pod) -> bool {
    required_selector(pod).is_none()
}

/// Filter: U&U when the node fails the nodeSelector or every required term.
pub fn filter(
    state: &RequiredNodeAffinity,
    node_name: &str,
    labels: &StringMap,
) -> Result<(), Status> {
    if state.matches(node_name, labels) {
        Ok(())
    } else {
        Err(Status {
            code: StatusCode::UnschedulableAndUnresolvable,
            reason: REASON.into(),
        })
    }
}

/// The parsed preferred terms: those with a weight and a non-empty preference.
#[derive(Debug, Clone, PartialEq)]
pub struct PreferredNodeAffinity {
    terms: Vec<(ParsedTerm, i64)>,
}

impl PreferredNodeAffinity {
    /// PreScore: `None` (Skip) without preferred terms; a term that fails to parse fails the score.
    pub fn of(pod: &Pod) -> Result<Option<PreferredNodeAffinity>, String> {
        let Some(na) = pod
            .spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
        else {
            return Ok(None);
        };
        let preferred = &na.preferred_during_scheduling_ignored_during_execution;
        if preferred.is_empty() {
            return Ok(None);
        }
        let mut terms = Vec::new();
        let mut errs = Vec::new();
        for (i, t) in preferred.iter().enumerate() {
            if t.weight == 0 || is_empty_term(&t.preference) {
                continue;
            }
            let parsed = ParsedTerm::parse(&t.preference);
            match parsed.error() {
                Some(e) => errs.push(format!("[{i}].{e}")),
                None => terms.push((parsed, i64::from(t.weight))),
            }
        }
        if errs.is_empty() {
            Ok(Some(PreferredNodeAffinity { terms }))
        } else {
            Err(join_errors(errs))
        }
    }

    /// Σ weight of the matching terms.
    pub fn score(&self, node_name: &str, labels: &StringMap) -> i64 {
        self.terms
            .iter()
            .filter(|(t, _)| t.matches(node_name, labels))
            .map(|(_, w)| w)
            .sum()
    }
}

/// The normalised preferred-affinity scores of `nodes` (`None`: the scorer skips).
pub fn preferred_scores<'n>(
    pod: &Pod,
    nodes: impl Iterator<Item = (&'n str, &'n StringMap)>,
) -> Result<Option<Vec<i64>>, String> {
    let Some(pref) = PreferredNodeAffinity::of(pod)? else {
        return Ok(None);
    };
    let mut scores: Vec<i64> = nodes
        .map(|(name, labels)| pref.score(name, labels))
        .collect();
    default_normalize(&mut scores, false);
    Ok(Some(scores))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_saphyr::from_str(yaml).unwrap()
    }

    fn labels(p: &[(&str, &str)]) -> StringMap {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn required(terms: &str) -> Pod {
        pod(&format!(
            "spec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms: {terms}\n"
        ))
    }

    #[test]
    fn pre_filter_skips_a_pod_without_selector_or_required_affinity() {
        assert_eq!(pre_filter(&pod("{}")), Ok(None));
        assert!(
            pre_filter(&pod("spec: {nodeSelector: {a: b}}"))
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn node_selector_needs_every_label() {
        let s = pre_filter(&pod("spec: {nodeSelector: {a: b, c: d}}"))
            .unwrap()
            .unwrap();
        assert!(filter(&s, "n", &labels(&[("a", "b"), ("c", "d")])).is_ok());
        let err = filter(&s, "n", &labels(&[("a", "b")])).unwrap_err();
        assert_eq!(err.code, StatusCode::UnschedulableAndUnresolvable);
        assert_eq!(
            err.reason,
            "node(s) didn't match Pod's node affinity/selector"
        );
    }

    #[test]
    fn required_terms_are_ored_and_empty_terms_match_nothing() {
        let p = required(
            "[{matchExpressions: [{key: zone, operator: In, values: [a]}]}, {matchExpressions: [{key: zone, operator: In, values: [b]}]}]",
        );
        let s = pre_filter(&p).unwrap().unwrap();
        assert!(filter(&s, "n", &labels(&[("zone", "b")])).is_ok());
        assert!(filter(&s, "n", &labels(&[("zone", "c")])).is_err());
        let empty = pre_filter(&required("[{}]")).unwrap().unwrap();
        assert!(
            filter(&empty, "n", &labels(&[])).is_err(),
            "the only term is empty, so nothing matches"
        );
    }

    #[test]
    fn pinned_node_names_that_cannot_meet_conflict_in_pre_filter() {
        let p = required(
            "[{matchFields: [{key: metadata.name, operator: In, values: [a]}, {key: metadata.name, operator: In, values: [b]}]}]",
        );
        let err = pre_filter(&p).unwrap_err();
        assert_eq!(err.reason, "pod affinity terms conflict");
        let unpinned = required(
            "[{matchFields: [{key: metadata.name, operator: In, values: [a]}]}, {matchExpressions: [{key: z, operator: Exists}]}]",
        );
        assert!(
            pre_filter(&unpinned).is_ok(),
            "a term without a name pin lifts the restriction"
        );
    }

    #[test]
    fn preferred_scores_are_normalised_to_the_best_node() {
        let p = pod(concat!(
            "spec:\n  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n",
            "      - {weight: 100, preference: {matchExpressions: [{key: zone, operator: In, values: [zone1]}]}}\n",
            "      - {weight: 50, preference: {matchExpressions: [{key: disk, operator: Exists}]}}\n",
            "      - {weight: 0, preference: {matchExpressions: [{key: zone, operator: Exists}]}}\n",
        ));
        let l1 = labels(&[("zone", "zone1")]);
        let l2 = labels(&[("zone", "zone2"), ("disk", "ssd")]);
        let l3 = labels(&[]);
        let scores = preferred_scores(&p, [("n1", &l1), ("n2", &l2), ("n3", &l3)].into_iter())
            .unwrap()
            .unwrap();
        assert_eq!(scores, vec![100, 50, 0]);
    }

    #[test]
    fn preferred_scoring_skips_without_terms_and_fails_on_a_bad_term() {
        assert_eq!(preferred_scores(&pod("{}"), std::iter::empty()), Ok(None));
        let bad = pod(concat!(
            "spec:\n  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n",
            "      - {weight: 1, preference: {matchExpressions: [{key: zone, operator: Near}]}}\n",
        ));
        assert!(preferred_scores(&bad, std::iter::empty()).is_err());
    }
}
