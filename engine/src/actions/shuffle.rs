//! `shuffle` (Volcano: pkg/scheduler/actions/shuffle/shuffle.go): evict what the VictimTasks providers name (e.g. `rescheduling`), at
//! once and without a statement.

use crate::framework::Session;
use crate::model::{TaskId, TaskStatus};

/// Runs the action.
pub fn execute(ssn: &mut Session) {
    let running: Vec<TaskId> = (0..ssn.state.snap.tasks.len() as u32)
        .map(TaskId)
        .filter(|&t| {
            ssn.state.job_of(t).is_some() && ssn.state.tasks.status[t] == TaskStatus::Running
        })
        .collect();
    for v in ssn.victim_tasks(&running) {
        let _ = ssn.evict_now(v, "shuffle");
    }
}
