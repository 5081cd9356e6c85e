//! `nodeinfo.volcano.sh/v1alpha1 Numatopology`: one node's CPU topology and NUMA resources as
//! Volcano's resource exporter reports them, named after the node. The `numa-aware` plugin
//! reads it; the strings are parsed there, as Volcano's cache does (Volcano:
//! pkg/scheduler/cache/event_handlers.go, getNumaInfo).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ObjectMeta;

/// NUMA resource sets: CPU ids by resource name.
pub type NumaSets = BTreeMap<String, std::collections::BTreeSet<i32>>;

/// The object, stripped to what scheduling reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Numatopology {
    pub metadata: ObjectMeta,
    pub spec: NumatopoSpec,
}

/// What the node reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NumatopoSpec {
    /// The kubelet's `CPUManagerPolicy` and `TopologyManagerPolicy`.
    pub policies: BTreeMap<String, String>,
    /// Resources the kubelet keeps back, as quantities (`cpu: "2"`).
    pub res_reserved: BTreeMap<String, String>,
    /// Per resource, what is allocatable (for `cpu`, a CPU list such as `0-3,8`).
    #[serde(rename = "numares")]
    pub numa_res_map: BTreeMap<String, NumaResourceInfo>,
    /// Per CPU id (a decimal string), where it sits.
    pub cpu_detail: BTreeMap<String, CpuInfo>,
    /// The pods the kubelet has given NUMA resources (their per-container allocations left
    /// out): until a pod bound with CPUs the scheduler chose shows up here, the cache keeps
    /// those CPUs taken.
    pub pod_allocations: Vec<PodAllocation>,
}

/// A pod the node reports as allocated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodAllocation {
    pub uid: String,
    pub name: String,
    pub namespace: String,
}

/// One resource's allocatable set and capacity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NumaResourceInfo {
    pub allocatable: String,
    pub capacity: i64,
}

/// One CPU's NUMA node, socket and core.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuInfo {
    pub numa: i32,
    pub socket: i32,
    pub core: i32,
}
