//! The fuzz targets' bodies, one function a target over arbitrary bytes: `fuzz/` runs them under
//! `cargo fuzz`, and `tests/tests/fuzz_corpora.rs` replays every corpus file through the same
//! function, so the two cannot drift. Each calls the entry points the binaries call; an error is
//! an answer, a panic is the defect the fuzzer looks for.

use std::sync::LazyLock;

mod config;
mod extender_wire;
mod manifest;
mod quantity;

pub use config::config;
pub use extender_wire::extender_wire;
pub use manifest::{manifest_json, manifest_yaml};
pub use quantity::quantity;

/// A target's body: any bytes in, no panic out.
pub type Target = fn(&[u8]);

/// The plugin ABI's target (`tephra_plugin_sdk::host::fuzz_entry::plugin_abi`), on one thread.
pub fn plugin_abi(data: &[u8]) {
    on_one_thread(|| tephra_plugin_sdk::host::fuzz_entry::plugin_abi(data));
}

/// Runs the body of a target that opens sessions on a pool of one worker thread. The engine's
/// parallel loops then run inline on that worker; called from the fuzzer's own thread, each
/// loop would hand its few items to the pool and wait for them, which for a cluster of a few
/// nodes costs more than the loop.
fn on_one_thread(body: impl FnOnce() + Send) {
    static POOL: LazyLock<rayon::ThreadPool> = LazyLock::new(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a fuzz process can start one thread")
    });
    POOL.install(body);
}

/// Every target by its name under `fuzz/fuzz_targets/` and `fuzz/corpus/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("config", config),
    ("quantity", quantity),
    ("manifest_yaml", manifest_yaml),
    ("manifest_json", manifest_json),
    ("plugin_abi", plugin_abi),
    ("extender_wire", extender_wire),
];
