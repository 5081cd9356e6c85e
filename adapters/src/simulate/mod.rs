//! `tephra simulate`: run scheduling cycles offline over manifests or scenario files.

mod cycle;
mod inputs;
mod json;
mod text;

use std::path::PathBuf;

use tephra_cache::ClusterState;
use tephra_engine::framework::PluginRegistry;

use crate::InputError;
pub use cycle::{CycleReport, Waiting, run_cycles};
pub use inputs::{Inputs, load_inputs, resolve_conf};
pub use json::write_json;
pub use text::write_text;

/// What to simulate.
#[derive(Debug, Clone)]
pub struct SimulateOptions {
    pub files: Vec<PathBuf>,
    pub conf: Option<PathBuf>,
    pub cycles: u32,
}

/// The reports of every cycle, and notes about input that was left out.
#[derive(Debug, Clone, Default)]
pub struct Simulation {
    pub cycles: Vec<CycleReport>,
    pub notes: Vec<String>,
}

/// Loads the inputs, resolves the configuration and runs the cycles.
pub fn simulate(
    options: &SimulateOptions,
    registry: &PluginRegistry,
) -> Result<Simulation, InputError> {
    let inputs = load_inputs(&options.files)?;
    let conf = resolve_conf(
        options.conf.as_deref(),
        inputs.scenario_conf.as_ref(),
        registry,
    )?;
    let mut state = ClusterState::from_objects(inputs.objects);
    let cycles = run_cycles(&mut state, &conf, registry, options.cycles)
        .map_err(|e| InputError::new("scheduler configuration", e))?;
    Ok(Simulation {
        cycles,
        notes: inputs.notes,
    })
}
