//! Plugins beyond the engine's built-ins: libraries loaded at run time from `--plugins-dir`,
//! and (with I/O, so outside the engine) Volcano's HTTP `extender`.

mod dylib;
pub mod extender;
mod library_file;
mod ownership;

pub use dylib::{LoadError, LoadedLibrary, load_plugins_dir};

use tephra_engine::framework::PluginRegistry;

/// Every plugin a tephra binary ships: the engine's built-ins and the extender.
pub fn registry() -> PluginRegistry {
    let mut r = tephra_engine::plugins::builtin_registry();
    r.register(extender::NAME, extender::build);
    r
}
