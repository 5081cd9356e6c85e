//! A node's NUMA view as the plugin reads it from the node's `Numatopology` (Volcano:
//! pkg/scheduler/cache/event_handlers.go, getNumaInfo, and pkg/scheduler/api/numa_info.go).

use std::collections::BTreeMap;

use super::cpu_set::parse_cpu_list;
use super::cpu_topology::{CpuDetails, CpuTopology};
use crate::api::Numatopology;
use crate::model::Quantity;

/// Free sets per resource name (only `cpu` is placed).
pub use crate::api::NumaSets as ResourceSets;

/// One node's policies, CPU topology, reserved CPUs and allocatable sets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeNuma {
    /// The kubelet's `CPUManagerPolicy` (`static` lets pods own CPUs).
    pub cpu_manager_policy: String,
    /// The kubelet's `TopologyManagerPolicy`.
    pub topology_policy: String,
    pub topology: CpuTopology,
    /// How many CPUs the kubelet reserves: its reserved CPU quantity rounded up.
    pub reserved_cpus: Option<usize>,
    /// Per resource, the allocatable set the node reported.
    pub allocatable: ResourceSets,
}

impl NodeNuma {
    /// Reads a Numatopology the way Volcano's cache does: an allocatable list that does not
    /// parse is empty, a CPU id that is not a number is CPU 0, and reserved resources are all
    /// dropped when one of them is not a quantity.
    pub fn from_object(topo: &Numatopology) -> NodeNuma {
        let spec = &topo.spec;
        let policy = |name: &str| spec.policies.get(name).cloned().unwrap_or_default();
        let details = spec
            .cpu_detail
            .iter()
            .map(|(id, info)| (id.parse().unwrap_or(0), *info))
            .collect();
        let reserved: Option<BTreeMap<&str, Quantity>> = spec
            .res_reserved
            .iter()
            .map(|(k, v)| Quantity::parse(v).ok().map(|q| (k.as_str(), q)))
            .collect();
        let reserved_cpus = reserved.and_then(|r| {
            r.get("cpu")
                .map(|q| (q.milli_value().max(0) as usize).div_ceil(1000))
        });
        NodeNuma {
            cpu_manager_policy: policy("CPUManagerPolicy"),
            topology_policy: policy("TopologyManagerPolicy"),
            topology: CpuTopology::new(CpuDetails(details)),
            reserved_cpus,
            allocatable: spec
                .numa_res_map
                .iter()
                .map(|(name, info)| (name.clone(), parse_cpu_list(&info.allocatable)))
                .collect(),
        }
    }

    /// Its NUMA node ids, ascending.
    pub fn numa_nodes(&self) -> Vec<i32> {
        self.topology.details.numa_nodes().into_iter().collect()
    }
}
