//! `manifest_yaml` and `manifest_json`: input files as the offline commands load them, and one
//! scheduling cycle over what loads.

use std::sync::LazyLock;

use tephra_engine::framework::{PluginRegistry, Strictness};

use crate::manifest::load_reader;
use crate::simulate::{SimulateOptions, load_text, simulate_inputs};

static REGISTRY: LazyLock<PluginRegistry> = LazyLock::new(crate::plugins::registry);

/// One cycle, under the file's `schedulerConf` or else the default configuration.
fn one_cycle() -> SimulateOptions {
    SimulateOptions {
        files: Vec::new(),
        conf: None,
        cycles: 1,
        strictness: Strictness::SetAside,
        scheduler_names: vec!["volcano".into()],
    }
}

/// A file as `tephra simulate` reads it (a scenario, or YAML or JSON manifests), then a cycle.
pub fn manifest_yaml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    super::on_one_thread(|| {
        if let Ok(inputs) = load_text("fuzz.yaml", text) {
            let _ = simulate_inputs(inputs, &one_cycle(), &REGISTRY);
        }
    });
}

/// A manifest stream as `tephra bench --workload` reads a file (a JSON stream decoded as it
/// is read, else YAML), then a cycle over its objects.
pub fn manifest_json(data: &[u8]) {
    super::on_one_thread(|| {
        if let Ok(manifest) = load_reader(data, "fuzz.json") {
            let inputs = crate::simulate::Inputs {
                objects: manifest.objects,
                ..Default::default()
            };
            let _ = simulate_inputs(inputs, &one_cycle(), &REGISTRY);
        }
    });
}
