//! The built-in plugins, and the registry that names them.

use crate::framework::PluginRegistry;

/// A registry with every built-in plugin.
pub fn builtin_registry() -> PluginRegistry {
    let mut r = PluginRegistry::new();
    register_builtins(&mut r);
    r
}

/// Registers the built-in plugins into `r`.
pub fn register_builtins(r: &mut PluginRegistry) {
    let _ = r;
}
