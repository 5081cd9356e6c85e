//! Where each CPU of a node sits (NUMA node, socket, core), with the queries the kubelet's CPU
//! manager asks of it (`k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology`).

use std::collections::{BTreeMap, BTreeSet};

use super::cpu_set::CpuSet;
use crate::api::CpuInfo;

/// Per CPU id, its place.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuDetails(pub BTreeMap<i32, CpuInfo>);

impl CpuDetails {
    /// Every CPU.
    pub fn cpus(&self) -> CpuSet {
        self.0.keys().copied().collect()
    }

    fn ids_of(&self, f: impl Fn(&CpuInfo) -> i32) -> BTreeSet<i32> {
        self.0.values().map(f).collect()
    }

    fn cpus_where(&self, f: impl Fn(&CpuInfo) -> bool) -> CpuSet {
        self.0
            .iter()
            .filter(|(_, c)| f(c))
            .map(|(&id, _)| id)
            .collect()
    }

    /// The NUMA nodes with a CPU.
    pub fn numa_nodes(&self) -> BTreeSet<i32> {
        self.ids_of(|c| c.numa)
    }

    /// The sockets with a CPU.
    pub fn sockets(&self) -> BTreeSet<i32> {
        self.ids_of(|c| c.socket)
    }

    /// The core ids.
    pub fn cores(&self) -> BTreeSet<i32> {
        self.ids_of(|c| c.core)
    }

    /// The CPUs on any of `numa` nodes.
    pub fn cpus_in_numa_nodes(&self, numa: impl Fn(i32) -> bool) -> CpuSet {
        self.cpus_where(|c| numa(c.numa))
    }

    /// The CPUs on `socket`.
    pub fn cpus_in_socket(&self, socket: i32) -> CpuSet {
        self.cpus_where(|c| c.socket == socket)
    }

    /// The CPUs of `core`.
    pub fn cpus_in_core(&self, core: i32) -> CpuSet {
        self.cpus_where(|c| c.core == core)
    }

    /// The core ids on `socket`.
    pub fn cores_in_socket(&self, socket: i32) -> BTreeSet<i32> {
        self.0
            .values()
            .filter(|c| c.socket == socket)
            .map(|c| c.core)
            .collect()
    }

    /// Only the CPUs in `cpus`.
    pub fn keep_only(&self, cpus: &CpuSet) -> CpuDetails {
        CpuDetails(
            self.0
                .iter()
                .filter(|(id, _)| cpus.contains(id))
                .map(|(&id, &c)| (id, c))
                .collect(),
        )
    }

    /// The NUMA node of `cpu`; 0 for a CPU it does not list, as Go reads a missing map entry.
    pub fn numa_of(&self, cpu: i32) -> i32 {
        self.0.get(&cpu).map_or(0, |c| c.numa)
    }
}

/// A node's CPU topology: its details and counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTopology {
    pub details: CpuDetails,
    pub num_cpus: usize,
    /// Physical cores: distinct (socket, core) pairs (Volcano: cpu_mng.go, getPhysicalCoresNum).
    pub num_cores: usize,
    pub num_sockets: usize,
}

impl CpuTopology {
    /// The topology of `details`.
    pub fn new(details: CpuDetails) -> CpuTopology {
        let cores: BTreeSet<(i32, i32)> = details.0.values().map(|c| (c.socket, c.core)).collect();
        CpuTopology {
            num_cpus: details.0.len(),
            num_cores: cores.len(),
            num_sockets: details.sockets().len(),
            details,
        }
    }

    /// CPUs per socket (0 without sockets).
    pub fn cpus_per_socket(&self) -> usize {
        self.num_cpus.checked_div(self.num_sockets).unwrap_or(0)
    }

    /// CPUs per core (0 without cores).
    pub fn cpus_per_core(&self) -> usize {
        self.num_cpus.checked_div(self.num_cores).unwrap_or(0)
    }
}
