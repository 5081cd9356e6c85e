//! Plugin builders by name.

use std::collections::BTreeMap;

use super::PluginBuilder;

/// Name → builder. `PluginRegistry::builtin()` has every plugin tephra ships.
#[derive(Debug, Clone, Default)]
pub struct PluginRegistry {
    builders: BTreeMap<String, PluginBuilder>,
}

impl PluginRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers (or replaces) a builder.
    pub fn register(&mut self, name: &str, builder: PluginBuilder) {
        self.builders.insert(name.to_string(), builder);
    }

    /// The builder for `name`.
    pub fn get(&self, name: &str) -> Option<PluginBuilder> {
        self.builders.get(name).copied()
    }

    /// Registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.builders.keys().map(|s| s.as_str())
    }
}
