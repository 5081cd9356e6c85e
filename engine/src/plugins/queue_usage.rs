//! What a queue books from its jobs in proportion and capacity: allocated, requested, reserved
//! by admitted jobs (inqueue) and held beyond the jobs' minimums (elastic).

use rayon::prelude::*;

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
    /// Every queue's usage at session open, by queue id (`None` for a queue without a job in
    /// the session): each queue sums its jobs in job order, as one pass over all jobs would, and
    /// the queues are summed on the pool (a large session has 60k jobs to look at).
    pub fn per_queue(ssn: &SessionState) -> Vec<Option<QueueUsage>> {
        let jobs = &ssn.snap.jobs;
        let mut jobs_of: Vec<Vec<JobId>> = vec![Vec::new(); ssn.snap.queues.len()];
        for j in jobs.ids() {
            jobs_of[jobs.queue[j.idx()].idx()].push(j);
        }
        jobs_of
            .par_iter()
            .map(|queue_jobs| {
                (!queue_jobs.is_empty()).then(|| {
                    let mut usage = QueueUsage::default();
                    for &j in queue_jobs {
                        usage.add_job(ssn, j);
                    }
                    usage
                })
            })
            .collect()
    }

    /// What job `j` contributes at session open.
    pub fn of_job(ssn: &SessionState, j: JobId) -> QueueUsage {
        let allocated = &ssn.jobs.allocated[j];
        QueueUsage {
            allocated: allocated.clone(),
            request: request_with_pending(ssn, j).unwrap_or_else(|| allocated.clone()),
            inqueue: job_resources::reserved_at_open(ssn, j).unwrap_or_default(),
            elastic: job_resources::elastic(ssn, j),
        }
    }

    /// Adds what job `j` contributes at session open (`of_job`) without building it: the same
    /// sums, added in the same order (a large session adds 60k jobs, most of them only their
    /// allocation).
    fn add_job(&mut self, ssn: &SessionState, j: JobId) {
        let allocated = &ssn.jobs.allocated[j];
        self.allocated.add(allocated);
        match request_with_pending(ssn, j) {
            Some(request) => self.request.add(&request),
            None => self.request.add(allocated),
        };
        if let Some(inqueue) = job_resources::reserved_at_open(ssn, j) {
            self.inqueue.add(&inqueue);
        }
        job_resources::add_elastic(ssn, j, &mut self.elastic);
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

/// Job `j`'s allocation plus its Pending tasks' requests; `None` when it has no Pending task (its
/// request is then its allocation), as the job's counts tell for most jobs.
fn request_with_pending(ssn: &SessionState, j: JobId) -> Option<Resource> {
    if ssn.job_status_count(j, TaskStatus::Pending) == 0 {
        return None;
    }
    let mut request = ssn.jobs.allocated[j].clone();
    for &t in &ssn.snap.jobs.tasks[j.idx()] {
        if ssn.tasks.status[t] == TaskStatus::Pending {
            request.add(ssn.resreq(t));
        }
    }
    Some(request)
}
