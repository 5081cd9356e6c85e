//! tephra's scheduling core: Volcano's semantics on a columnar snapshot. No I/O, no threads of
//! its own: a `Snapshot` and a configuration go in, `Decisions` come out.

pub mod actions;
pub mod api;
pub mod arrival;
pub mod config;
pub mod framework;
pub mod harness;
pub mod model;
pub mod plugins;
pub mod selector;
pub mod snapshot;
