//! A task's kube `CycleState` for the session: what its last PrePredicate computed, and the
//! filters a PreFilter told to skip. A skip is never withdrawn within the session, as in Volcano.

use std::collections::BTreeSet;

use crate::plugins::k8s::inter_pod_affinity::InterPodAffinityState;
use crate::plugins::k8s::node_affinity::RequiredNodeAffinity;
use crate::plugins::k8s::node_ports::HostPort;
use crate::plugins::k8s::spread_filter::SpreadFilterState;

/// A filter with a PreFilter, in PreFilter order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PreFiltered {
    NodeAffinity,
    NodePorts,
    InterPodAffinity,
    PodTopologySpread,
}

impl PreFiltered {
    /// The kube plugin name (used in PrePredicate errors).
    pub fn name(self) -> &'static str {
        match self {
            PreFiltered::NodeAffinity => "NodeAffinity",
            PreFiltered::NodePorts => "NodePorts",
            PreFiltered::InterPodAffinity => "InterPodAffinity",
            PreFiltered::PodTopologySpread => "PodTopologySpread",
        }
    }

    /// kube's error when the filter runs without its PreFilter state.
    pub fn missing_state(self) -> String {
        match self {
            PreFiltered::InterPodAffinity => {
                "error reading \"PreFilterInterPodAffinity\" from cycleState: not found".into()
            }
            other => format!(
                "reading \"PreFilter{}\" from cycleState: not found",
                other.name()
            ),
        }
    }
}

/// The PreFilter results of one task.
#[derive(Debug, Clone, Default)]
pub struct CycleState {
    pub skip: BTreeSet<PreFiltered>,
    pub node_affinity: Option<RequiredNodeAffinity>,
    pub node_ports: Option<Vec<HostPort>>,
    pub inter_pod_affinity: Option<InterPodAffinityState>,
    pub topology_spread: Option<SpreadFilterState>,
}
