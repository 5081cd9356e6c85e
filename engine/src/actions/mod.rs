//! Actions: the steps of a scheduling cycle, run in the configured order. Each reads the
//! session through its dispatch functions and changes it through statements.

mod allocate;
mod backfill;
mod enqueue;
mod node_search;
mod priority_queue;

pub use allocate::QUEUE_ALLOCATION_GATE;
pub use backfill::candidate_order as backfill_candidate_order;
pub use priority_queue::PriorityQueue;

use crate::config::{ConfigError, SchedulerConfig};
use crate::framework::Session;

/// Actions tephra implements.
pub const IMPLEMENTED: [&str; 3] = ["enqueue", "allocate", "backfill"];

/// Refuses a configuration that names an action tephra does not run yet.
pub fn check_supported(config: &SchedulerConfig) -> Result<(), ConfigError> {
    match config
        .actions
        .iter()
        .find(|a| !IMPLEMENTED.contains(&a.as_str()))
    {
        Some(a) => Err(ConfigError::UnsupportedAction(a.clone())),
        None => Ok(()),
    }
}

/// Runs one action by name. Names are checked by `check_supported`; others do nothing.
pub fn run(ssn: &mut Session, name: &str) {
    match name {
        "enqueue" => enqueue::execute(ssn),
        "allocate" => allocate::execute(ssn),
        "backfill" => backfill::execute(ssn),
        _ => {}
    }
}

/// Runs every configured action once, in order.
pub fn run_all(ssn: &mut Session) {
    let actions = ssn.state.config.actions.clone();
    for a in &actions {
        run(ssn, a);
    }
}
