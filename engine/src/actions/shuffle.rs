//! `shuffle` (Volcano: pkg/scheduler/actions/shuffle/shuffle.go): evict what the VictimTasks providers name (e.g. `rescheduling`), at
//! once and without a statement.

use crate::framework::Session;
use crate::model::{TaskId, TaskStatus};

/// Runs the action.
pub fn execute(ssn: &mut Session) {
    let mut running: Vec<TaskId> = (0..ssn.state.snap.tasks.len() as u32)
        .map(TaskId)
        .filter(|&t| {
            ssn.state.job_of(t).is_some() && ssn.state.tasks.status[t] == TaskStatus::Running
        })
        .collect();
    // Volcano gathers them from its job and task maps, in no order; a provider that takes
    // victims while a budget lasts (`pdb`) picks by that order.
    let snap = &ssn.state.snap;
    running.sort_by(|&l, &r| snap.task_walk_order(l, r));
    for v in ssn.victim_tasks(&running) {
        let _ = ssn.evict_now(v, "shuffle");
    }
}
