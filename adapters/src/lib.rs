//! tephra's adapters: Kubernetes manifests and conformance scenario files in, the `tephra`
//! command line (`simulate`, `conformance`, `gen`, `bench`, `bench-history`, `dashboard`) out,
//! and the plugins that need I/O (libraries loaded at run time, the HTTP extender).

pub mod bench;
pub mod cli;
pub mod conformance;
pub mod dashboard;
pub mod freed_memory;
#[doc(hidden)]
pub mod fuzz_entry;
pub mod history;
pub mod huge_pages;
mod input_error;
pub mod manifest;
pub mod offline;
pub mod plugins;
pub mod profiling;
mod progress;
pub mod scenario;
pub mod simulate;
#[cfg(test)]
mod test_dir;
pub mod workload;

pub use input_error::InputError;
