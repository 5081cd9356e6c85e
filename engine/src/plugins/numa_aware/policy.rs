//! The node's topology-manager policy judging a container's NUMA hints, as Volcano's copy of
//! the kubelet's policies does (Volcano: pkg/scheduler/plugins/numaaware/policy).

use super::numa_mask::NumaMask;

/// A set of NUMA nodes a resource could come from, and whether it is a narrowest one.
/// `affinity: None` stands for "any node".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopologyHint {
    pub affinity: Option<NumaMask>,
    pub preferred: bool,
}

/// One provider's hints for its resource: `None` when it has no preference (no CPU to place),
/// otherwise the possible hints (empty when nothing fits).
pub type ProviderHints = Option<Vec<TopologyHint>>;

/// The kubelet's topology-manager policies, by their `TopologyManagerPolicy` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `none`, and any name Volcano does not know.
    None,
    BestEffort,
    Restricted,
    SingleNumaNode,
}

impl Policy {
    /// The policy a node's `TopologyManagerPolicy` names (Volcano: policy/factory.go,
    /// GetPolicy).
    pub fn named(name: &str) -> Policy {
        match name {
            "best-effort" => Policy::BestEffort,
            "restricted" => Policy::Restricted,
            "single-numa-node" => Policy::SingleNumaNode,
            _ => Policy::None,
        }
    }

    /// The best hint among the providers' and whether the container is admitted.
    pub fn admit(self, numa_nodes: &[i32], providers: &[ProviderHints]) -> (TopologyHint, bool) {
        let lists = || providers.iter().map(per_resource).collect::<Vec<_>>();
        match self {
            Policy::None => (
                TopologyHint {
                    affinity: None,
                    preferred: false,
                },
                true,
            ),
            Policy::BestEffort => (merge(numa_nodes, &lists()), true),
            Policy::Restricted => {
                let best = merge(numa_nodes, &lists());
                (best, best.preferred)
            }
            Policy::SingleNumaNode => {
                let single: Vec<Vec<TopologyHint>> = lists()
                    .into_iter()
                    .map(|hints| {
                        hints
                            .into_iter()
                            .filter(|h| h.preferred && h.affinity.is_none_or(|m| m.count() == 1))
                            .collect()
                    })
                    .collect();
                let best = merge(numa_nodes, &single);
                (best, best.preferred)
            }
        }
    }
}

/// A provider's hints as the merge reads them: no preference is one preferred "any node"
/// hint, no possible hint one non-preferred "any node" hint (Volcano: policy/policy.go,
/// filterProvidersHints).
fn per_resource(hints: &ProviderHints) -> Vec<TopologyHint> {
    let any = |preferred| TopologyHint {
        affinity: None,
        preferred,
    };
    match hints {
        None => vec![any(true)],
        Some(h) if h.is_empty() => vec![any(false)],
        Some(h) => h.clone(),
    }
}

/// The best of every combination of one hint per list: preferred beats not preferred, then
/// the narrowest; combinations with no node in common are passed over. Starts from "every
/// node, not preferred" (Volcano: policy/policy.go, mergeFilteredHints).
fn merge(numa_nodes: &[i32], lists: &[Vec<TopologyHint>]) -> TopologyHint {
    let all = NumaMask::of(numa_nodes.iter().copied());
    let mut best = TopologyHint {
        affinity: Some(all),
        preferred: false,
    };
    let mut picks = vec![0usize; lists.len()];
    if lists.iter().any(Vec::is_empty) {
        return best;
    }
    loop {
        let mut mask = all;
        let mut preferred = true;
        for (list, &i) in lists.iter().zip(&picks) {
            let h = list[i];
            mask = mask.and(h.affinity.unwrap_or(all));
            preferred &= h.preferred;
        }
        let current = best.affinity.unwrap_or(all);
        let better = mask.count() != 0
            && match (preferred, best.preferred) {
                (true, false) => true,
                (false, true) => false,
                _ => mask.is_narrower_than(current),
            };
        if better {
            best = TopologyHint {
                affinity: Some(mask),
                preferred,
            };
        }
        // The next combination, the last list turning fastest.
        let mut k = lists.len();
        loop {
            if k == 0 {
                return best;
            }
            k -= 1;
            picks[k] += 1;
            if picks[k] < lists[k].len() {
                break;
            }
            picks[k] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(mask: u64, preferred: bool) -> TopologyHint {
        TopologyHint {
            affinity: Some(NumaMask(mask)),
            preferred,
        }
    }

    /// `"01- 0+"`: hints over NUMA nodes 0 and 1 not preferred, over node 0 preferred.
    fn parse(text: &str) -> Vec<TopologyHint> {
        text.split_whitespace()
            .map(|h| {
                let (ids, mark) = h.split_at(h.len() - 1);
                let ids = ids.chars().map(|c| c.to_digit(10).unwrap() as i32);
                hint(NumaMask::of(ids).0, mark == "+")
            })
            .collect()
    }

    /// The cases of Volcano's policy tests (policy_single_numa_node_test.go,
    /// policy_best_effort_test.go, policy_restricted_test.go): two providers' hints on a node
    /// of NUMA nodes 0 and 1, and the best hint each policy settles on.
    #[test]
    fn best_hints_match_volcanos_policy_cases() {
        let cases = [
            (Policy::SingleNumaNode, "01- 0+ | 01- 0+", "0+"),
            (Policy::SingleNumaNode, "01- 1+ | 01- 1+", "1+"),
            (Policy::SingleNumaNode, "01- 0+ 1+ | 01- 0+ 1+", "0+"),
            (Policy::SingleNumaNode, "01- 0+ | 01- 1+", "01-"),
            (Policy::SingleNumaNode, "01- 0+ | 01+", "01-"),
            (Policy::BestEffort, "01- 0+ | 01- 0+", "0+"),
            (Policy::BestEffort, "01- 1+ | 01- 1+", "1+"),
            (Policy::BestEffort, "01- 0+ 1+ | 01- 0+ 1+", "0+"),
            (Policy::BestEffort, "01- 0+ | 01- 1+", "0-"),
            (Policy::BestEffort, "01- 0+ | 01+", "0+"),
            (Policy::BestEffort, "01+ | 01+", "01+"),
            (Policy::Restricted, "01- 0+ | 01- 0+", "0+"),
            (Policy::Restricted, "01- 1+ | 01- 1+", "1+"),
            (Policy::Restricted, "01- 0+ 1+ | 01- 0+ 1+", "0+"),
            (Policy::Restricted, "01- 0+ | 01- 1+", "0-"),
            (Policy::Restricted, "01- 0+ | 01+", "0+"),
            (Policy::Restricted, "01+ | 01+", "01+"),
        ];
        for (policy, providers, expected) in cases {
            let hints: Vec<ProviderHints> = providers.split('|').map(|p| Some(parse(p))).collect();
            let (best, _) = policy.admit(&[0, 1], &hints);
            assert_eq!(best, parse(expected)[0], "{policy:?} {providers}");
        }
    }

    #[test]
    fn the_narrowest_preferred_hint_wins() {
        let hints = Some(vec![hint(0b10, true), hint(0b01, true), hint(0b11, false)]);
        let (best, admit) = Policy::Restricted.admit(&[0, 1], &[hints]);
        assert_eq!((best, admit), (hint(0b01, true), true));
    }

    #[test]
    fn restricted_refuses_and_best_effort_admits_without_a_preferred_hint() {
        let hints = Some(vec![hint(0b11, false)]);
        assert!(
            !Policy::Restricted
                .admit(&[0, 1], std::slice::from_ref(&hints))
                .1
        );
        assert_eq!(
            Policy::BestEffort.admit(&[0, 1], &[hints]),
            (hint(0b11, false), true)
        );
    }

    #[test]
    fn single_numa_node_keeps_only_one_node_hints() {
        let hints = Some(vec![hint(0b11, true)]);
        assert!(!Policy::SingleNumaNode.admit(&[0, 1], &[hints]).1);
        assert!(
            Policy::SingleNumaNode.admit(&[0, 1], &[None]).1,
            "no preference"
        );
    }
}
