//! A task's kube `CycleState` for the session: what its last PrePredicate computed, and the
//! filters a PreFilter told to skip. A skip is never withdrawn within the session, as in Volcano.

use std::sync::Arc;

use crate::plugins::k8s::inter_pod_affinity::InterPodAffinityState;
use crate::plugins::k8s::node_affinity::RequiredNodeAffinity;
use crate::plugins::k8s::node_ports::HostPort;
use crate::plugins::k8s::spread_filter::SpreadFilterState;
use crate::plugins::k8s::volume_binding::PodClaims;
use crate::plugins::k8s::volume_zone::VolumeTopology;

/// A filter with a PreFilter, in PreFilter order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PreFiltered {
    NodeAffinity,
    NodePorts,
    InterPodAffinity,
    NodeVolumeLimits,
    VolumeZone,
    PodTopologySpread,
    VolumeBinding,
}

impl PreFiltered {
    /// The kube plugin name (used in PrePredicate errors).
    pub fn name(self) -> &'static str {
        match self {
            PreFiltered::NodeAffinity => "NodeAffinity",
            PreFiltered::NodePorts => "NodePorts",
            PreFiltered::InterPodAffinity => "InterPodAffinity",
            PreFiltered::NodeVolumeLimits => "NodeVolumeLimits",
            PreFiltered::VolumeZone => "VolumeZone",
            PreFiltered::PodTopologySpread => "PodTopologySpread",
            PreFiltered::VolumeBinding => "VolumeBinding",
        }
    }

    /// kube's error when the filter runs without its PreFilter state.
    pub fn missing_state(self) -> String {
        match self {
            PreFiltered::InterPodAffinity => {
                "error reading \"PreFilterInterPodAffinity\" from cycleState: not found".into()
            }
            // VolumeBinding keeps its state under its own name.
            PreFiltered::VolumeBinding => {
                "reading \"VolumeBinding\" from cycleState: not found".into()
            }
            other => format!(
                "reading \"PreFilter{}\" from cycleState: not found",
                other.name()
            ),
        }
    }
}

/// Filters a PreFilter told to skip: one bit per `PreFiltered` (every pending task has some, so
/// a set that allocates would cost one allocation per task and session).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SkipSet(u8);

impl SkipSet {
    /// Number of distinct sets.
    pub const COUNT: usize = 1 << 7;

    /// The set as a number below `COUNT`.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    pub fn insert(&mut self, f: PreFiltered) {
        self.0 |= 1 << f as u8;
    }

    pub fn contains(&self, f: PreFiltered) -> bool {
        self.0 & (1 << f as u8) != 0
    }
}

/// The PreFilter results of one task.
#[derive(Debug, Clone, Default)]
pub struct CycleState {
    pub skip: SkipSet,
    /// Shared with the pod's memo (`node_affinity::pre_filter_memoised`).
    pub node_affinity: Option<Arc<RequiredNodeAffinity>>,
    pub node_ports: Option<Vec<HostPort>>,
    pub inter_pod_affinity: Option<InterPodAffinityState>,
    pub topology_spread: Option<SpreadFilterState>,
    pub volume_zone: Option<Arc<Vec<VolumeTopology>>>,
    pub volume_binding: Option<Arc<PodClaims>>,
}

impl CycleState {
    /// The skip set, when the state holds nothing else.
    pub fn skips_only(&self) -> Option<SkipSet> {
        let empty = self.node_affinity.is_none()
            && self.node_ports.is_none()
            && self.inter_pod_affinity.is_none()
            && self.topology_spread.is_none()
            && self.volume_zone.is_none()
            && self.volume_binding.is_none();
        empty.then_some(self.skip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_sets_are_distinct_per_filter_and_index_below_count() {
        let mut s = SkipSet::default();
        s.insert(PreFiltered::NodePorts);
        s.insert(PreFiltered::PodTopologySpread);
        assert!(s.contains(PreFiltered::NodePorts) && s.contains(PreFiltered::PodTopologySpread));
        assert!(!s.contains(PreFiltered::NodeAffinity));
        assert!(!s.contains(PreFiltered::InterPodAffinity));
        let mut all = SkipSet::default();
        for f in [
            PreFiltered::NodeAffinity,
            PreFiltered::NodePorts,
            PreFiltered::InterPodAffinity,
            PreFiltered::NodeVolumeLimits,
            PreFiltered::VolumeZone,
            PreFiltered::PodTopologySpread,
            PreFiltered::VolumeBinding,
        ] {
            all.insert(f);
        }
        assert_eq!(all.index(), SkipSet::COUNT - 1);
    }

    #[test]
    fn only_a_state_without_prefilter_data_counts_as_skips_only() {
        let mut state = CycleState::default();
        state.skip.insert(PreFiltered::NodeAffinity);
        assert_eq!(state.skips_only(), Some(state.skip));
        state.node_ports = Some(Vec::new());
        assert_eq!(state.skips_only(), None);
    }
}
