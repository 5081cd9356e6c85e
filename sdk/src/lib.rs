//! tephra's plugin SDK: write a scheduling plugin once, then link it into tephra as a built-in
//! (`register_builtin`) or ship it as a library that `--plugins-dir` loads at run time
//! (`export_plugins!`). The guide is `docs/plugins.md`; `examples/myplugin` is a complete plugin.
//!
//! ```
//! use tephra_plugin_sdk::prelude::*;
//!
//! struct Mine;
//! impl Plugin for Mine {
//!     fn name(&self) -> &str { "mine" }
//! }
//! fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> { Ok(Box::new(Mine)) }
//!
//! tephra_plugin_sdk::export_plugins!("mine" => build);
//! ```
//!
//! A library talks to tephra only through the `#[repr(C)]` types of `abi`, versioned by
//! `abi::ABI_VERSION`, so it need not be built by the same compiler or against the same crate
//! versions as the tephra that loads it.

// The ABI's two sides are the only places that need `unsafe`: raw pointers and `extern "C"`
// functions shared with another binary.
#[allow(unsafe_code, reason = "the C ABI shared with plugin libraries")]
pub mod abi;
mod builtin;
#[doc(hidden)]
#[allow(unsafe_code, reason = "the library side of the C ABI")]
pub mod guest;
#[allow(unsafe_code, reason = "the host side of the C ABI")]
pub mod host;
mod plugin;
mod read;
#[allow(
    unsafe_code,
    reason = "reads the session the host lends through the C ABI"
)]
mod view;
#[allow(
    unsafe_code,
    reason = "reads and writes the C forms of the ABI's arguments and answers"
)]
pub mod wire;

pub use builtin::{linked, register_builtin};
pub use plugin::{Builder, Plugin};
pub use tephra_engine::config::{ArgumentError, Arguments};
pub use tephra_engine::framework::{
    EvictionContext, EvictionKind, FitError, JobInvalid, PluginRegistry, SearchPurpose, StatusCode,
    Vote,
};
pub use tephra_engine::model::{HyperNodeId, JobId, NodeId, QueueId, SubJobId, TaskId, TaskStatus};
pub use view::SessionView;

/// Everything a plugin file usually needs.
pub mod prelude {
    pub use crate::{
        ArgumentError, Arguments, EvictionContext, EvictionKind, FitError, HyperNodeId, JobId,
        JobInvalid, NodeId, Plugin, QueueId, SearchPurpose, SessionView, StatusCode, SubJobId,
        TaskId, TaskStatus, Vote,
    };
    pub use std::cmp::Ordering;
}

/// Exports plugins from a library crate (`crate-type = ["cdylib", ...]`): each `name =>
/// builder` pair becomes a plugin tephra's `--plugins-dir` can load and the tiers can name.
/// Expands to the `tephra_plugin_entry` symbol, so use it once per library.
#[macro_export]
macro_rules! export_plugins {
    ($($name:expr => $builder:expr),+ $(,)?) => {
        /// The entry point tephra's plugin loader looks up.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn tephra_plugin_entry() -> *const $crate::abi::Library {
            static EXPORTS: $crate::guest::Exports = $crate::guest::Exports::new(
                &[$($crate::abi::Str::new($name)),+],
                &[$($builder as $crate::Builder),+],
            );
            EXPORTS.library()
        }
    };
}
