//! `tephra simulate`: run scheduling cycles offline over manifests or scenario files.

mod cycle;
mod inputs;
mod json;
mod text;

use std::path::PathBuf;

use tephra_cache::ClusterState;
use tephra_engine::framework::{PluginRegistry, Strictness};

use crate::InputError;
pub use cycle::{CycleReport, Waiting, run_cycles};
pub use inputs::{Inputs, ResolvedConf, keep_own_pods, load_inputs, load_text, resolve_conf};
pub use json::write_json;
pub use text::write_text;

/// What to simulate.
#[derive(Debug, Clone)]
pub struct SimulateOptions {
    pub files: Vec<PathBuf>,
    pub conf: Option<PathBuf>,
    pub cycles: u32,
    /// Whether a configuration part Volcano would skip refuses the run (`--strict-config`).
    pub strictness: Strictness,
    /// The pods' `schedulerName`s this run schedules (`--scheduler-name`).
    pub scheduler_names: Vec<String>,
}

/// The reports of every cycle, notes about input that was left out, and warnings about parts
/// of the configuration that were set aside.
#[derive(Debug, Clone, Default)]
pub struct Simulation {
    pub cycles: Vec<CycleReport>,
    pub notes: Vec<String>,
    pub warnings: Vec<String>,
}

/// Loads the inputs, resolves the configuration and runs the cycles.
pub fn simulate(
    options: &SimulateOptions,
    registry: &PluginRegistry,
) -> Result<Simulation, InputError> {
    simulate_inputs(load_inputs(&options.files)?, options, registry)
}

/// Resolves the configuration and runs the cycles over inputs already loaded (`options.files`
/// is not read).
pub fn simulate_inputs(
    mut inputs: Inputs,
    options: &SimulateOptions,
    registry: &PluginRegistry,
) -> Result<Simulation, InputError> {
    let others = keep_own_pods(&mut inputs.objects, &options.scheduler_names);
    inputs.notes.extend(others);
    let conf = resolve_conf(
        options.conf.as_deref(),
        inputs.scenario_conf.as_ref(),
        registry,
        options.strictness,
    )?;
    let mut state = ClusterState::from_objects(inputs.objects);
    if let Some((_, sharding)) = inputs.sharding {
        state.set_sharding(sharding);
    }
    let cycles = run_cycles(&mut state, &conf.config, registry, options.cycles)
        .map_err(|e| InputError::new("scheduler configuration", e))?;
    Ok(Simulation {
        cycles,
        notes: inputs.notes,
        warnings: conf.warnings,
    })
}
