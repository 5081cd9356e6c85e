//! `enqueue` (Volcano: pkg/scheduler/actions/enqueue/enqueue.go): admit pending PodGroups (Pending → Inqueue) queue by queue.

use std::collections::BTreeMap;

use super::PriorityQueue;
use crate::framework::Session;
use crate::model::{JobId, QueueId};

/// Runs the action.
pub fn execute(ssn: &mut Session) {
    let snap = ssn.state.snap.clone();
    let mut queues: PriorityQueue<QueueId> = PriorityQueue::new();
    let mut seen: Vec<bool> = vec![false; snap.queues.len()];
    let mut pending: BTreeMap<QueueId, PriorityQueue<JobId>> = BTreeMap::new();
    for j in snap.jobs.ids() {
        let q = snap.jobs.queue[j.idx()];
        if !seen[q.idx()] {
            seen[q.idx()] = true;
            queues.push(q, |l, r| ssn.queue_order_less(l, r));
        }
        if ssn.state.job_is_pending(j) {
            pending
                .entry(q)
                .or_default()
                .push(j, |l, r| ssn.job_order_less(l, r));
        }
    }
    while let Some(q) = queues.pop(|l, r| ssn.queue_order_less(l, r)) {
        let Some(jobs) = pending.get_mut(&q) else {
            continue;
        };
        let Some(j) = jobs.pop(|l, r| ssn.job_order_less(l, r)) else {
            continue;
        };
        if snap.jobs.min_resources[j.idx()].is_none() || ssn.job_enqueueable(j) {
            ssn.job_enqueued(j);
            ssn.state.set_job_phase(j, "Inqueue");
        }
        queues.push(q, |l, r| ssn.queue_order_less(l, r));
    }
}
