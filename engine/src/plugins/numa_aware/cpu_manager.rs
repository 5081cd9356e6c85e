//! The CPU hint provider: which NUMA nodes could give a container its whole CPUs, and which
//! CPUs it gets once a hint is chosen (Volcano:
//! pkg/scheduler/plugins/numaaware/provider/cpumanager/cpu_mng.go).

use super::cpu_assignment::take_by_topology;
use super::cpu_set::CpuSet;
use super::node_numa::NodeNuma;
use super::numa_mask::NumaMask;
use super::policy::{ProviderHints, TopologyHint};
use crate::api::Container;

/// The container's whole CPUs: its CPU request when that is a whole number, else 0 (Volcano:
/// cpu_mng.go, guaranteedCPUs).
pub fn guaranteed_cpus(container: &Container) -> usize {
    match container.resources.requests.get("cpu") {
        Some(q) if q.value() * 1000 == q.milli_value() => q.value().max(0) as usize,
        _ => 0,
    }
}

/// The CPUs the kubelet keeps back on the node, chosen by topology among all its CPUs; none
/// when it reserves none or they cannot be chosen.
fn reserved(numa: &NodeNuma) -> CpuSet {
    numa.reserved_cpus
        .and_then(|n| take_by_topology(&numa.topology, &numa.topology.details.cpus(), n).ok())
        .unwrap_or_default()
}

/// The container's CPU hints on a node whose free CPUs are `free` (Volcano: cpu_mng.go,
/// GetTopologyHints): no preference when it asks for no whole CPUs or the node lists no CPU
/// resource; otherwise every set of NUMA nodes with enough free CPUs, the smallest sets that
/// could ever hold the request preferred.
pub fn hints(container: &Container, numa: &NodeNuma, free: Option<&CpuSet>) -> ProviderHints {
    if !container.resources.requests.contains_key("cpu") {
        return None;
    }
    let request = guaranteed_cpus(container);
    if request == 0 {
        return None;
    }
    let reserved = reserved(numa);
    let available: CpuSet = free?.difference(&reserved).copied().collect();
    let details = &numa.topology.details;
    let nodes: Vec<i32> = details.numa_nodes().into_iter().collect();
    let mut smallest = nodes.len() as u32;
    let mut hints = Vec::new();
    for mask in NumaMask::subsets(&nodes) {
        if details.cpus_in_numa_nodes(|n| mask.contains(n)).len() >= request {
            smallest = smallest.min(mask.count());
        }
        let matching = available
            .iter()
            .filter(|&&c| mask.contains(details.numa_of(c)))
            .count();
        if matching >= request {
            hints.push(TopologyHint {
                affinity: Some(mask),
                preferred: false,
            });
        }
    }
    for h in &mut hints {
        h.preferred = h.affinity.is_some_and(|m| m.count() == smallest);
    }
    Some(hints)
}

/// The CPUs the container gets on the node under hint `best` (Volcano: cpu_mng.go,
/// Allocate): as many as it can from the hint's NUMA nodes, the rest from anywhere; nothing
/// when either choice fails.
pub fn allocate(
    container: &Container,
    best: &TopologyHint,
    numa: &NodeNuma,
    free: Option<&CpuSet>,
) -> CpuSet {
    let topo = &numa.topology;
    let reserved = reserved(numa);
    let request = guaranteed_cpus(container);
    let available: CpuSet = free
        .map(|f| f.difference(&reserved).copied().collect())
        .unwrap_or_default();
    let mut result = CpuSet::new();
    if let Some(mask) = best.affinity {
        let aligned: CpuSet = available
            .iter()
            .copied()
            .filter(|&c| {
                topo.details
                    .0
                    .get(&c)
                    .is_some_and(|i| mask.contains(i.numa))
            })
            .collect();
        match take_by_topology(topo, &aligned, request.min(aligned.len())) {
            Ok(taken) => result.extend(taken),
            Err(_) => return CpuSet::new(),
        }
    }
    let rest: CpuSet = available.difference(&result).copied().collect();
    match take_by_topology(topo, &rest, request - result.len()) {
        Ok(taken) => result.extend(taken),
        Err(_) => return CpuSet::new(),
    }
    result
}
