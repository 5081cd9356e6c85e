//! The fuzz targets' bodies, one function a target over arbitrary bytes: `fuzz/` runs them under
//! `cargo fuzz`, and `tests/tests/fuzz_corpora.rs` replays every corpus file through the same
//! function, so the two cannot drift. Each calls the entry points the binaries call; an error is
//! an answer, a panic is the defect the fuzzer looks for.

mod config;
mod extender_wire;
mod manifest;
mod quantity;

pub use config::config;
pub use extender_wire::extender_wire;
pub use manifest::{manifest_json, manifest_yaml};
pub use quantity::quantity;
pub use tephra_plugin_sdk::host::fuzz_entry::plugin_abi;

/// A target's body: any bytes in, no panic out.
pub type Target = fn(&[u8]);

/// Every target by its name under `fuzz/fuzz_targets/` and `fuzz/corpus/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("config", config),
    ("quantity", quantity),
    ("manifest_yaml", manifest_yaml),
    ("manifest_json", manifest_json),
    ("plugin_abi", plugin_abi),
    ("extender_wire", extender_wire),
];
