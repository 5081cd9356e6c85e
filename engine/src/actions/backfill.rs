//! `backfill` (Volcano: pkg/scheduler/actions/backfill/backfill.go): place best-effort tasks (empty requests) on any node that passes the
//! predicates (under soft sharding, the scheduler's shard first); a job's allocated tasks are
//! bound as soon as the job is ready.

use crate::actions::action_arguments::{ErrorCacheArgs, lenient};
use std::collections::BTreeMap;

use super::PriorityQueue;
use super::node_search::{PredicateHelper, best_scored_node, by_shard, predicate_for_allocate};
use crate::framework::{FitErrors, Session, Statement, allocate_and_dispatch};
use crate::model::{JobId, NodeId, QueueId, TaskId, TaskStatus};

/// The best-effort tasks backfill will try, in the order it tries them: queues in queue order,
/// jobs in job order, tasks in task order. Pipelined best-effort tasks are un-pipelined first.
pub fn candidate_order(ssn: &mut Session) -> Vec<TaskId> {
    let snap = ssn.state.snap.clone();
    let mut queues: PriorityQueue<QueueId> = PriorityQueue::new();
    let mut jobs: BTreeMap<QueueId, PriorityQueue<JobId>> = BTreeMap::new();
    let mut tasks: BTreeMap<JobId, PriorityQueue<TaskId>> = BTreeMap::new();
    let best_effort = &snap.tasks.best_effort;
    for j in snap.jobs.ids() {
        // Most jobs have no best-effort task, so the task column is read first; the phase and
        // validity checks only read the session, so asking them second changes nothing.
        let job_tasks = &snap.jobs.tasks[j.idx()];
        if !job_tasks.iter().any(|t| best_effort[t.idx()])
            || ssn.state.job_is_pending(j)
            || ssn.job_valid(j).is_some()
        {
            continue;
        }
        let mut pq = PriorityQueue::new();
        for &t in job_tasks {
            if !best_effort[t.idx()] {
                continue;
            }
            match ssn.state.tasks.status[t] {
                TaskStatus::Pending if !snap.tasks.sch_gated[t.idx()] => {}
                TaskStatus::Pipelined => Statement::new().unpipeline(ssn, t),
                _ => continue,
            }
            pq.push(t, |l, r| ssn.task_order_less(l, r));
        }
        if pq.is_empty() {
            continue;
        }
        let q = snap.jobs.queue[j.idx()];
        if !jobs.contains_key(&q) {
            queues.push(q, |l, r| ssn.queue_order_less(l, r));
        }
        jobs.entry(q)
            .or_default()
            .push(j, |l, r| ssn.job_order_less(l, r));
        tasks.insert(j, pq);
    }
    let mut out = Vec::new();
    while let Some(q) = queues.pop(|l, r| ssn.queue_order_less(l, r)) {
        let Some(jq) = jobs.get_mut(&q) else { continue };
        while let Some(j) = jq.pop(|l, r| ssn.job_order_less(l, r)) {
            let Some(tq) = tasks.get_mut(&j) else {
                continue;
            };
            while let Some(t) = tq.pop(|l, r| ssn.task_order_less(l, r)) {
                out.push(t);
            }
        }
    }
    out
}

/// Runs the action.
pub fn execute(ssn: &mut Session) {
    let cache = lenient(
        &ssn.state.config.action_arguments("backfill"),
        ErrorCacheArgs::parse,
    )
    .0
    .error_cache;
    let all: Vec<NodeId> = ssn.state.snap.nodes.ids().collect();
    for t in candidate_order(ssn) {
        let Some(j) = ssn.state.job_of(t) else {
            continue;
        };
        if let Err(e) = ssn.pre_predicate(t) {
            let mut fe = FitErrors::default();
            for &n in &all {
                fe.nodes.insert(n, e.clone());
            }
            ssn.state.record_fit_errors(j, t, fe);
            continue;
        }
        let mut helper = PredicateHelper::new(cache);
        let (found, errs) = helper.predicate_nodes(ssn, t, &all, predicate_for_allocate);
        if found.is_empty() {
            ssn.state.record_fit_errors(j, t, errs);
            continue;
        }
        let [own, others] = by_shard(ssn, found);
        let Some(node) =
            best_scored_node(ssn, t, &own).or_else(|| best_scored_node(ssn, t, &others))
        else {
            continue;
        };
        match allocate_and_dispatch(ssn, t, node) {
            // Volcano: actions/backfill/backfill.go, Execute feeds the job's e2e metrics.
            Ok(()) => ssn.state.placed_jobs.push(j),
            Err(e) => {
                let mut fe = FitErrors::default();
                fe.nodes.insert(
                    node,
                    crate::framework::FitError::new(crate::framework::StatusCode::Error, e),
                );
                ssn.state.record_fit_errors(j, t, fe);
            }
        }
    }
}
