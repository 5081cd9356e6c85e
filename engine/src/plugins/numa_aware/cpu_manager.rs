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
    // The aligned take can give more than asked (it takes whole sockets); Go's negative
    // remainder then asks for nothing more.
    let rest: CpuSet = available.difference(&result).copied().collect();
    match take_by_topology(topo, &rest, request.saturating_sub(result.len())) {
        Ok(taken) => result.extend(taken),
        Err(_) => return CpuSet::new(),
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::CpuInfo;
    use crate::plugins::numa_aware::cpu_topology::{CpuDetails, CpuTopology};

    /// The node of Volcano's provider tests (cpu_mng_test.go): NUMA node 0 = socket 0 = CPUs
    /// 0-3 (cores 0, 1), NUMA node 1 = socket 1 = CPUs 4-7 (cores 2, 3), two threads a core.
    fn node() -> NodeNuma {
        let details = (0..8)
            .map(|c| {
                let info = CpuInfo {
                    numa: c / 4,
                    socket: c / 4,
                    core: c / 2,
                };
                (c, info)
            })
            .collect();
        NodeNuma {
            topology: CpuTopology::new(CpuDetails(details)),
            ..NodeNuma::default()
        }
    }

    fn container(cpus: u32) -> Container {
        serde_saphyr::from_str(&format!("resources: {{requests: {{cpu: '{cpus}'}}}}")).unwrap()
    }

    fn hint(ids: &[i32], preferred: bool) -> TopologyHint {
        TopologyHint {
            affinity: Some(NumaMask::of(ids.iter().copied())),
            preferred,
        }
    }

    /// Volcano's Test_GetTopologyHints cases, in order.
    #[test]
    fn hints_match_volcanos_provider_cases() {
        let cases: [(u32, &[i32], Vec<TopologyHint>); 6] = [
            (
                4,
                &[0, 1, 2, 3, 4, 5, 6, 7],
                vec![hint(&[0], true), hint(&[1], true), hint(&[0, 1], false)],
            ),
            (
                4,
                &[1, 2, 3, 4, 5, 6, 7],
                vec![hint(&[1], true), hint(&[0, 1], false)],
            ),
            (5, &[0, 1, 2, 3, 4, 5, 6, 7], vec![hint(&[0, 1], true)]),
            (8, &[0, 1, 2, 3, 4, 5, 6, 7], vec![hint(&[0, 1], true)]),
            (9, &[0, 1, 2, 3, 4, 5, 6, 7], vec![]),
            (4, &[2, 3, 4, 5], vec![hint(&[0, 1], false)]),
        ];
        for (i, (cpus, free, expected)) in cases.into_iter().enumerate() {
            let free: CpuSet = free.iter().copied().collect();
            assert_eq!(
                hints(&container(cpus), &node(), Some(&free)),
                Some(expected),
                "case {}",
                i + 1
            );
        }
    }

    /// A node whose NUMA node 1 spans two sockets: socket 0 = CPUs 0-3 (NUMA node 0), socket
    /// 1 = CPUs 4, 5, 7 and socket 2 = CPU 6 (both NUMA node 1), one CPU a core. Three sockets
    /// over eight CPUs count as two CPUs a socket, so a request for two takes a whole socket.
    fn uneven_node() -> NodeNuma {
        let socket = |c: i32| match c {
            0..=3 => 0,
            6 => 2,
            _ => 1,
        };
        let details = (0..8)
            .map(|c| {
                let info = CpuInfo {
                    numa: c / 4,
                    socket: socket(c),
                    core: c,
                };
                (c, info)
            })
            .collect();
        NodeNuma {
            topology: CpuTopology::new(CpuDetails(details)),
            ..NodeNuma::default()
        }
    }

    #[test]
    fn an_aligned_take_of_more_than_the_request_asks_for_nothing_more() {
        let free: CpuSet = (0..8).collect();
        let got = allocate(
            &container(2),
            &hint(&[0, 1], true),
            &uneven_node(),
            Some(&free),
        );
        assert_eq!(
            got,
            (0..4).collect(),
            "socket 0 whole, as Volcano's arithmetic takes it"
        );
    }

    /// CPU or NUMA node ids.
    type Ids = &'static [i32];

    /// Volcano's Test_Allocate cases (request, free CPUs, hint, CPUs given), in order.
    #[test]
    fn allocation_matches_volcanos_provider_cases() {
        let cases: [(u32, Ids, Ids, Ids); 5] = [
            (4, &[0, 1, 2, 3, 4, 5, 6, 7], &[0], &[0, 1, 2, 3]),
            (4, &[1, 2, 3, 4, 5, 6, 7], &[1], &[4, 5, 6, 7]),
            (5, &[0, 1, 2, 3, 4, 5, 6, 7], &[0, 1], &[0, 1, 2, 3, 4]),
            (5, &[1, 2, 3, 4, 5, 6, 7], &[0, 1], &[1, 4, 5, 6, 7]),
            (8, &[1, 2, 3, 4, 5, 6, 7], &[0, 1], &[]),
        ];
        for (i, (cpus, free, best, expected)) in cases.into_iter().enumerate() {
            let free: CpuSet = free.iter().copied().collect();
            let got = allocate(&container(cpus), &hint(best, true), &node(), Some(&free));
            assert_eq!(got, expected.iter().copied().collect(), "case {}", i + 1);
        }
    }
}
