//! `allocate` (Volcano: pkg/scheduler/actions/allocate/allocate.go): queues in queue order, one job per queue pop in job order; a job's
//! tasks are placed until its gang is ready, then it is committed and, while it has pending
//! tasks, pushed back to get one more task per turn.

mod hyper_node;
mod nomination;
mod tasks;
mod worksheet;

use crate::actions::action_arguments::{ErrorCacheArgs, lenient};
use crate::config::Action;
use std::collections::BTreeMap;

use hyper_node::{Recorder, allocate_for_job};
use nomination::allocate_from_nomination;
use tasks::allocate_resources_for_tasks;
pub(super) use tasks::prioritize;
pub use worksheet::QUEUE_ALLOCATION_GATE;
pub(super) use worksheet::Worksheet;

use super::PriorityQueue;
use super::class_cache::ClassCache;
use crate::framework::Session;
use crate::model::{JobId, QueueId};

/// How allocate searches nodes: the predicate-error cache switch and the equivalence classes.
pub(super) struct NodeSearch {
    pub error_cache: bool,
    pub classes: ClassCache,
}

/// Runs the action.
pub fn execute(ssn: &mut Session) {
    let snap = ssn.state.snap.clone();
    let error_cache = lenient(
        &ssn.state.config.action_arguments("allocate"),
        ErrorCacheArgs::parse,
    )
    .0
    .error_cache;
    let enqueue_configured = ssn.action_configured(Action::Enqueue);
    let top = snap.hyper_nodes.top();
    let mut queues: PriorityQueue<QueueId> = PriorityQueue::new();
    let mut jobs: BTreeMap<QueueId, PriorityQueue<JobId>> = BTreeMap::new();
    // Each job's worksheet by job id (taken out while the job is being placed).
    let mut sheets: Vec<Option<Worksheet>> = (0..snap.jobs.len()).map(|_| None).collect();
    for j in snap.jobs.ids() {
        if ssn.state.job_is_pending(j) {
            if enqueue_configured {
                continue;
            }
            ssn.state.set_job_phase(j, "Inqueue");
        }
        if let Some(invalid) = ssn.job_valid(j) {
            ssn.state.set_job_fit_message(j, invalid.message);
            continue;
        }
        let ws = Worksheet::organize(ssn, j);
        if ws.is_empty() {
            continue;
        }
        let q = snap.jobs.queue[j.idx()];
        if !jobs.contains_key(&q) {
            queues.push(q, |l, r| ssn.queue_order_less(l, r));
        }
        jobs.entry(q)
            .or_default()
            .push(j, |l, r| ssn.job_order_less(l, r));
        sheets[j.idx()] = Some(ws);
    }
    let mut rec = Recorder::default();
    let mut search = NodeSearch {
        error_cache,
        classes: ClassCache::carried_over(ssn),
    };
    let pending = sheets.iter().flatten().flat_map(|ws| ws.tasks.values());
    search
        .classes
        .revive(ssn, pending.flat_map(|tasks| tasks.items().iter().copied()));
    while let Some(q) = queues.pop(|l, r| ssn.queue_order_less(l, r)) {
        if ssn.overused(q) {
            continue;
        }
        let Some(job) = jobs
            .get_mut(&q)
            .and_then(|pq| pq.pop(|l, r| ssn.job_order_less(l, r)))
        else {
            continue;
        };
        let Some(mut ws) = sheets[job.idx()].take() else {
            continue;
        };
        if ssn.state.job_contains_hard_topology(job) || snap.jobs.has_sub_group_policy[job.idx()] {
            if let Some(mut stmt) = allocate_for_job(ssn, job, &mut ws, top, &mut rec, &mut search)
                && ssn.job_ready(job)
            {
                stmt.commit(ssn);
                rec.apply(ssn, job);
                if !ws.is_empty() {
                    push_job(ssn, &mut jobs, q, job);
                }
            }
        } else if let Some(sj) = snap.jobs.sub_jobs[job.idx()].first().copied()
            && let Some(mut tasks) = ws.tasks.remove(&sj)
        {
            let nominated = allocate_from_nomination(ssn, sj, &mut tasks, search.error_cache);
            if let Some(mut stmt) = nominated
                .or_else(|| allocate_resources_for_tasks(ssn, sj, &mut tasks, top, &mut search))
                && ssn.job_ready(job)
            {
                stmt.commit(ssn);
                ssn.state.set_sub_job_nominated_hyper_node(sj, None);
                if !tasks.is_empty() {
                    push_job(ssn, &mut jobs, q, job);
                }
            }
            ws.tasks.insert(sj, tasks);
        }
        sheets[job.idx()] = Some(ws);
        queues.push(q, |l, r| ssn.queue_order_less(l, r));
    }
    search.classes.leave(ssn);
}

fn push_job(
    ssn: &Session,
    jobs: &mut BTreeMap<QueueId, PriorityQueue<JobId>>,
    q: QueueId,
    job: JobId,
) {
    jobs.entry(q)
        .or_default()
        .push(job, |l, r| ssn.job_order_less(l, r));
}
