//! What a queue books from its jobs in proportion and capacity: allocated, requested, reserved
//! by admitted jobs (inqueue) and held beyond the jobs' minimums (elastic).

use super::job_resources;
use crate::framework::SessionState;
use crate::model::{JobId, Resource, TaskStatus};

/// Volcano's `queueAttr` allocated / request / inqueue / elastic.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueueUsage {
    /// Σ Resreq of allocated-status tasks.
    pub allocated: Resource,
    /// `allocated` plus Σ Resreq of Pending tasks (Pipelined and Releasing are not requests).
    pub request: Resource,
    /// Reserved by admitted jobs that are not fully allocated yet.
    pub inqueue: Resource,
    /// Σ of the jobs' allocations beyond their `minResources`.
    pub elastic: Resource,
}

impl QueueUsage {
    /// What job `j` contributes at session open.
    pub fn of_job(ssn: &SessionState, j: JobId) -> QueueUsage {
        let allocated = ssn.job_allocated[j.idx()].clone();
        let mut request = allocated.clone();
        for &t in &ssn.snap.jobs.tasks[j.idx()] {
            if ssn.task_status[t.idx()] == TaskStatus::Pending {
                request.add(ssn.resreq(t));
            }
        }
        QueueUsage {
            allocated,
            request,
            inqueue: job_resources::reserved_at_open(ssn, j).unwrap_or_default(),
            elastic: job_resources::elastic(ssn, j),
        }
    }

    /// Adds another usage dimension by dimension.
    pub fn add(&mut self, other: &QueueUsage) {
        self.allocated.add(&other.allocated);
        self.request.add(&other.request);
        self.inqueue.add(&other.inqueue);
        self.elastic.add(&other.elastic);
    }

    /// `minResources + allocated + inqueue − elastic`: what the queue would hold if job
    /// `min` were admitted too.
    pub fn with_admitted(&self, min: &Resource) -> Resource {
        let mut r = min.plus(&self.allocated);
        r.add(&self.inqueue).sub(&self.elastic);
        r
    }
}
