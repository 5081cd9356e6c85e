//! The built-in plugins, and the registry that names them.

pub mod binpack;
pub mod k8s;
pub mod nodeorder;
pub mod predicates;

#[cfg(test)]
pub(crate) mod testing;

use crate::framework::PluginRegistry;

/// A registry with every built-in plugin.
pub fn builtin_registry() -> PluginRegistry {
    let mut r = PluginRegistry::new();
    register_builtins(&mut r);
    r
}

/// Registers the built-in plugins into `r`.
pub fn register_builtins(r: &mut PluginRegistry) {
    r.register("binpack", binpack::build);
    r.register("nodeorder", nodeorder::build);
    r.register("predicates", predicates::build);
}
