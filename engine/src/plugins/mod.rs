//! The built-in plugins, and the registry that names them.

pub mod conformance;
pub mod gang;
pub mod network_topology_aware;
pub mod priority;
pub mod resource_affinity;

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
    r.register("network-topology-aware", network_topology_aware::build);
    r.register("resource-affinity", resource_affinity::build);
    let _ = r;
}
