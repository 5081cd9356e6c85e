//! Plugin builders by name.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::{Plugin, PluginBuilder};
use crate::config::{ArgumentError, Arguments};

/// Name → builder. `PluginRegistry::builtin()` has every plugin tephra ships.
#[derive(Clone, Default)]
pub struct PluginRegistry {
    builders: BTreeMap<String, PluginBuilder>,
}

impl fmt::Debug for PluginRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl PluginRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers (or replaces) a builder: a `fn` such as a plugin module's `build`, or a closure.
    pub fn register(
        &mut self,
        name: &str,
        builder: impl Fn(&Arguments) -> Result<Box<dyn Plugin>, ArgumentError> + Send + Sync + 'static,
    ) {
        self.builders.insert(name.to_string(), Arc::new(builder));
    }

    /// The builder for `name`.
    pub fn get(&self, name: &str) -> Option<&PluginBuilder> {
        self.builders.get(name)
    }

    /// Registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.builders.keys().map(|s| s.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named(String);

    impl Plugin for Named {
        fn name(&self) -> &str {
            &self.0
        }
    }

    #[test]
    fn a_closure_builder_keeps_what_it_captured() {
        let origin = Arc::new("libx.so".to_string());
        let mut r = PluginRegistry::new();
        r.register("x", move |_| Ok(Box::new(Named(origin.to_string()))));
        let plugin = r.get("x").unwrap()(&Arguments::default()).unwrap();
        assert_eq!(plugin.name(), "libx.so");
        assert_eq!(format!("{r:?}"), "[\"x\"]");
    }
}
