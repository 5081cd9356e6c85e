//! The built-in plugins, and the registry that names them.

pub mod binpack;
pub mod capacity;
pub mod cdp;
pub mod conformance;
pub mod deviceshare;
pub mod drf;
pub mod gang;
mod job_resources;
pub mod k8s;
pub mod network_topology_aware;
pub mod nodegroup;
pub mod nodeorder;
pub mod numa_aware;
pub mod overcommit;
pub mod pdb;
pub mod predicates;
pub mod priority;
pub mod proportion;
mod queue_limits;
mod queue_usage;
pub mod rescheduling;
pub mod resource_affinity;
pub mod resource_strategy_fit;
pub mod resourcequota;
mod share_order;
pub mod sla;
pub mod task_topology;
pub mod tdm;
mod unschedulable_event;
pub mod usage;

use crate::framework::PluginRegistry;

/// A registry with every built-in plugin.
pub fn builtin_registry() -> PluginRegistry {
    let mut r = PluginRegistry::new();
    register_builtins(&mut r);
    r
}

/// Registers the built-in plugins into `r`.
pub fn register_builtins(r: &mut PluginRegistry) {
    r.register("priority", priority::build);
    r.register("gang", gang::build);
    r.register("conformance", conformance::build);
    r.register("drf", drf::build);
    r.register("proportion", proportion::build);
    r.register("capacity", capacity::build);
    r.register("overcommit", overcommit::build);
    r.register("network-topology-aware", network_topology_aware::build);
    r.register("resource-affinity", resource_affinity::build);
    r.register("sla", sla::build);
    r.register("pdb", pdb::build);
    r.register("rescheduling", rescheduling::build);
    r.register("binpack", binpack::build);
    r.register("nodeorder", nodeorder::build);
    r.register("predicates", predicates::build);
    r.register("resource-strategy-fit", resource_strategy_fit::build);
    r.register("resourcequota", resourcequota::build);
    r.register("nodegroup", nodegroup::build);
    r.register("tdm", tdm::build);
    r.register("usage", usage::build);
    r.register("cdp", cdp::build);
    r.register("task-topology", task_topology::build);
    r.register("numa-aware", numa_aware::build);
    r.register("deviceshare", deviceshare::build);
}
