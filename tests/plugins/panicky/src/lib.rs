//! `panicky`: a plugin library whose predicate always panics. tephra catches the panic at the
//! library boundary, disables the plugin for the rest of the cycle and keeps scheduling.

use tephra_plugin_sdk::prelude::*;

/// The plugin.
pub struct Panicky;

/// Builds the plugin (no arguments).
pub fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Panicky))
}

impl Plugin for Panicky {
    fn name(&self) -> &str {
        "panicky"
    }

    fn predicate(&self, ssn: &SessionView, task: TaskId, _: NodeId) -> Result<(), FitError> {
        panic!("panicky refuses to look at {}", ssn.task_name(task))
    }
}

tephra_plugin_sdk::export_plugins!("panicky" => build);
