//! The session's columns of job and sub-job rows.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::{Column, FitErrors, JobConditions, StatusCounts};
use crate::model::{HyperNodeId, JobId, Resource, SubJobId, TaskId};
use crate::snapshot::{JobTaskSums, NetworkTopology, Snapshot};

/// What a session knows of each job beyond the snapshot. Read by anyone; written by the
/// framework only (`SessionState`), which keeps the counters and sums in step with the
/// task statuses.
#[derive(Debug)]
pub struct JobColumns {
    /// Tasks per status.
    pub counts: Column<JobId, StatusCounts>,
    /// Pending best-effort tasks, kept with the counts (gang's job order asks on every
    /// comparison, and counting walked the job's tasks each time).
    pub(super) best_effort_pending: Column<JobId, u32>,
    /// Σ Resreq of allocated-status tasks.
    pub allocated: Column<JobId, Resource>,
    /// Σ Resreq of all tasks.
    pub total_request: Column<JobId, Resource>,
    /// The PodGroup phases this session set (`set_job_phase`); the others are the snapshot's,
    /// so a session need not copy every job's phase and conditions at open.
    pub(super) phase: Column<JobId, Option<&'static str>>,
    /// The PodGroup conditions this session set (`set_job_conditions`).
    pub(super) conditions: Column<JobId, Option<JobConditions>>,
    /// `job.NodesFitErrors`: per task, why it could not be placed this session.
    pub fit_errors: Column<JobId, BTreeMap<TaskId, FitErrors>>,
    /// `job.JobFitErrors`: a job-level message.
    pub fit_message: Column<JobId, String>,
    pub allocated_hyper_node: Column<JobId, Option<HyperNodeId>>,
    /// Network topology after session-open adjustment (tier names resolved, soft made hard).
    pub topology: Column<JobId, Option<NetworkTopology>>,
}

/// What a session knows of each sub-job beyond the snapshot; written by the framework only.
#[derive(Debug)]
pub struct SubJobColumns {
    /// Tasks per status.
    pub counts: Column<SubJobId, StatusCounts>,
    pub(super) best_effort_pending: Column<SubJobId, u32>,
    pub allocated_hyper_node: Column<SubJobId, Option<HyperNodeId>>,
    /// `subJob.NominatedHyperNode`: where gangpreempt / gangreclaim made room for the sub-job;
    /// allocate tries its tasks' nominated nodes there first (Volcano:
    /// pkg/scheduler/actions/allocate/allocate.go, the nominated hyper-node path). Lives for
    /// the session.
    pub nominated_hyper_node: Column<SubJobId, Option<HyperNodeId>>,
    /// Network topology after session-open adjustment.
    pub topology: Column<SubJobId, Option<NetworkTopology>>,
}

impl JobColumns {
    /// The columns of a session opening on `snap`: each job's sums over its own tasks, as the
    /// snapshot has them (`JobTaskSums`).
    pub(super) fn open(snap: &Snapshot) -> Self {
        let jobs = snap.jobs.len();
        let sums = &snap.jobs.task_sums;
        let (counts, best_effort_pending): (Vec<_>, Vec<_>) = sums
            .par_iter()
            .map(|s| (s.counts, s.best_effort_pending))
            .unzip();
        let (total_request, allocated): (Vec<_>, Vec<_>) = sums
            .par_iter()
            .map(|s| (s.total_request.clone(), s.allocated.clone()))
            .unzip();
        JobColumns {
            counts: Column::from(counts),
            best_effort_pending: Column::from(best_effort_pending),
            allocated: Column::from(allocated),
            total_request: Column::from(total_request),
            phase: Column::filled(jobs, None),
            conditions: Column::filled(jobs, None),
            fit_errors: Column::filled(jobs, BTreeMap::new()),
            fit_message: Column::filled(jobs, String::new()),
            allocated_hyper_node: Column::filled(jobs, None),
            topology: Column::from(snap.jobs.network_topology.clone()),
        }
    }
}

impl SubJobColumns {
    /// The columns of a session opening on `snap`.
    pub(super) fn open(snap: &Snapshot) -> Self {
        let tasks = &snap.tasks;
        let sub_jobs = snap.sub_jobs.len();
        // A sub-job with every task of its job (a job's default one, nearly always) has the
        // job's counts.
        let (counts, best_effort_pending): (Vec<_>, Vec<_>) = snap
            .sub_jobs
            .tasks
            .par_iter()
            .zip(&snap.sub_jobs.job)
            .map(|(ts, j)| {
                if ts.len() == snap.jobs.tasks[j.idx()].len() {
                    let job = &snap.jobs.task_sums[j.idx()];
                    (job.counts, job.best_effort_pending)
                } else {
                    let own = JobTaskSums::of(tasks, ts);
                    (own.counts, own.best_effort_pending)
                }
            })
            .unzip();
        SubJobColumns {
            counts: Column::from(counts),
            best_effort_pending: Column::from(best_effort_pending),
            allocated_hyper_node: Column::filled(sub_jobs, None),
            nominated_hyper_node: Column::filled(sub_jobs, None),
            topology: Column::from(snap.sub_jobs.network_topology.clone()),
        }
    }
}
