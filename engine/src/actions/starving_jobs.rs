//! The walk that reclaim and the gang-aware evictions share: queues in queue order, each
//! queue's starving jobs in job order.

use std::collections::BTreeMap;

use super::PriorityQueue;
use crate::framework::Session;
use crate::model::{JobId, QueueId};

/// Queues of the session's valid, non-pending jobs and the starving jobs of each.
pub(super) struct StarvingJobs {
    /// Every queue with such a job, to pop in queue order.
    pub queues: PriorityQueue<QueueId>,
    /// Each queue's starving jobs, to pop in job order.
    pub by_queue: BTreeMap<QueueId, PriorityQueue<JobId>>,
    /// The starving jobs, in table order.
    pub jobs: Vec<JobId>,
}

impl StarvingJobs {
    /// Collects them from the session as it is.
    pub fn of(ssn: &Session) -> StarvingJobs {
        let snap = &ssn.state.snap;
        let mut queues = PriorityQueue::new();
        let mut seen = vec![false; snap.queues.len()];
        let mut by_queue: BTreeMap<QueueId, PriorityQueue<JobId>> = BTreeMap::new();
        let mut jobs = Vec::new();
        for j in snap.jobs.ids() {
            if ssn.state.job_is_pending(j) || ssn.job_valid(j).is_some() {
                continue;
            }
            let q = snap.jobs.queue[j.idx()];
            if !seen[q.idx()] {
                seen[q.idx()] = true;
                queues.push(q, |l, r| ssn.queue_order_less(l, r));
            }
            if ssn.job_starving(j) {
                by_queue
                    .entry(q)
                    .or_default()
                    .push(j, |l, r| ssn.job_order_less(l, r));
                jobs.push(j);
            }
        }
        StarvingJobs {
            queues,
            by_queue,
            jobs,
        }
    }

    /// The next starving job of `q`, in job order.
    pub fn pop_job(&mut self, ssn: &Session, q: QueueId) -> Option<JobId> {
        self.by_queue
            .get_mut(&q)
            .and_then(|p| p.pop(|l, r| ssn.job_order_less(l, r)))
    }
}
