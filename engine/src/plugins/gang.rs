//! `gang` (Volcano: pkg/scheduler/plugins/gang/gang.go): a job is scheduled only when at least `minMember` of its tasks (and the
//! per-role and per-sub-group minimums) can be placed together; victims never break a gang.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::api::PodGroupCondition;
use crate::config::{ArgumentError, Arguments};
use crate::framework::{
    EvictionContext, GangFigures, JobConditions, JobInvalid, Plugin, SessionState, Vote,
};
use crate::model::{JobId, SubJobId, TaskId, TaskStatus};

/// The plugin (no arguments).
#[derive(Debug, Default)]
pub struct Gang;

/// Builds the plugin.
pub fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Gang))
}

/// Tasks that keep more than their gang's minimum running may be evicted, one above the
/// minimum at a time.
fn gang_victims(ssn: &SessionState, candidates: &[TaskId]) -> Vec<TaskId> {
    let mut occupied: BTreeMap<JobId, i32> = BTreeMap::new();
    let mut victims = Vec::new();
    for &c in candidates {
        let Some(j) = ssn.job_of(c) else { continue };
        let occ = occupied.entry(j).or_insert_with(|| ssn.ready_task_num(j));
        if *occ > ssn.snap.jobs.min_available[j.idx()] {
            *occ -= 1;
            victims.push(c);
        }
    }
    victims
}

impl Plugin for Gang {
    fn name(&self) -> &str {
        "gang"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn job_valid(&self, ssn: &SessionState, job: JobId) -> Option<JobInvalid> {
        if !ssn.check_task_valid(job) || !ssn.check_sub_job_valid(job) {
            return Some(JobInvalid {
                reason: "NotEnoughPodsOfTask".into(),
                message: "Not enough valid pods of each task for gang-scheduling".into(),
            });
        }
        let valid = ssn.valid_task_num(job);
        let min = ssn.snap.jobs.min_available[job.idx()];
        if valid < min {
            return Some(JobInvalid {
                reason: "NotEnoughTasks".into(),
                message: format!(
                    "Not enough valid tasks for gang-scheduling, valid: {valid}, min: {min}"
                ),
            });
        }
        None
    }

    fn preemptable(
        &self,
        ssn: &SessionState,
        _: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(gang_victims(ssn, candidates))
    }

    fn reclaimable(
        &self,
        ssn: &SessionState,
        _: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(gang_victims(ssn, candidates))
    }

    /// Every candidate: the gang actions' victim bundles already keep gangs whole or account
    /// for breaking them.
    fn unified_evictable(
        &self,
        _: &SessionState,
        _: &EvictionContext,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(candidates.to_vec())
    }

    fn job_order(&self, ssn: &SessionState, l: JobId, r: JobId) -> Ordering {
        // Not-ready jobs first.
        ssn.job_is_ready(l).cmp(&ssn.job_is_ready(r))
    }

    fn sub_job_order(&self, ssn: &SessionState, l: SubJobId, r: SubJobId) -> Ordering {
        ssn.sub_job_is_ready(l).cmp(&ssn.sub_job_is_ready(r))
    }

    fn job_ready(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        Some(ssn.check_task_ready(job) && ssn.check_sub_job_ready(job) && ssn.job_is_ready(job))
    }

    fn sub_job_ready(&self, ssn: &SessionState, _: JobId, sub_job: SubJobId) -> Option<bool> {
        Some(ssn.sub_job_is_ready(sub_job))
    }

    fn job_pipelined(&self, ssn: &SessionState, job: JobId) -> Vote {
        if ssn.check_task_pipelined(job)
            && ssn.check_sub_job_pipelined(job)
            && ssn.job_is_pipelined(job)
        {
            Vote::Permit
        } else {
            Vote::Reject
        }
    }

    fn sub_job_pipelined(&self, ssn: &SessionState, _: JobId, sub_job: SubJobId) -> Vote {
        if ssn.sub_job_is_pipelined(sub_job) {
            Vote::Permit
        } else {
            Vote::Reject
        }
    }

    fn job_starving(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        Some(ssn.job_is_starving(job))
    }

    /// Writes each job's `Scheduled` or `Unschedulable` condition for this session, and
    /// reports each job's missing tasks and the jobs not ready (Volcano:
    /// plugins/gang/gang.go, OnSessionClose).
    fn on_session_close(&mut self, ssn: &mut SessionState) {
        // Each job's condition reads only the session; they are worked out on the pool (a
        // contended cycle leaves tens of thousands of jobs with a message to format) and set in
        // job order.
        let verdicts: Vec<(JobId, JobConditions, Option<i32>)> = (0..ssn.snap.jobs.len() as u32)
            .into_par_iter()
            .filter_map(|j| {
                let j = JobId(j);
                job_condition(ssn, j)
                    .map(|(c, unready)| (j, ssn.job_conditions_with(j, c), unready))
            })
            .collect();
        // The names are shared strings all over the heap: taking a reference to each is a
        // cache miss, so they are taken on the pool too.
        let names = &ssn.snap.jobs.name;
        let figures = GangFigures {
            unready_tasks: verdicts
                .par_iter()
                .map(|(j, _, unready)| (names[j.idx()].clone(), unready.unwrap_or(0)))
                .collect(),
            retried: verdicts
                .par_iter()
                .filter(|(_, _, unready)| unready.is_some())
                .map(|(j, _, _)| names[j.idx()].clone())
                .collect(),
        };
        for (_, conditions, _) in verdicts {
            ssn.set_job_conditions(conditions);
        }
        ssn.metrics.gang = Some(figures);
    }
}

/// The condition gang's session close sets on job `j`: Unschedulable with the gang's message
/// and how many more tasks the gang needs while it is not ready, else Scheduled and `None`;
/// `None` to leave the job as it is.
fn job_condition(ssn: &SessionState, j: JobId) -> Option<(PodGroupCondition, Option<i32>)> {
    let snap = &ssn.snap;
    let tasks = &snap.jobs.tasks[j.idx()];
    if tasks.is_empty() {
        return None;
    }
    let min = snap.jobs.min_available[j.idx()];
    Some(if !ssn.job_is_ready(j) {
        let status = |t: &TaskId| ssn.tasks.status[t];
        let releasing_on_node = tasks
            .iter()
            .filter(|&t| status(t) == TaskStatus::Releasing && ssn.tasks.node[t].is_some())
            .count() as i32;
        let has_pending_or_pipelined = tasks
            .iter()
            .any(|t| matches!(status(t), TaskStatus::Pending | TaskStatus::Pipelined));
        let scheduled = tasks.iter().filter(|t| status(t).is_scheduled()).count() as i32;
        if releasing_on_node > 0
            && !has_pending_or_pipelined
            && scheduled + releasing_on_node >= min
        {
            return None;
        }
        let placed_before = tasks
            .iter()
            .filter(|&t| {
                status(t) == TaskStatus::Pending
                    && ssn.tasks.last_tx[t]
                        .map(|x| x.status)
                        .unwrap_or(status(t))
                        .is_allocated()
            })
            .count() as i32;
        let unready = min - (ssn.ready_task_num(j) + placed_before);
        let condition = PodGroupCondition {
            type_: "Unschedulable".into(),
            status: "True".into(),
            transition_id: ssn.options.uid.clone(),
            last_transition_time: Some(ssn.options.now),
            reason: "NotEnoughResources".into(),
            message: format!(
                "{unready}/{} tasks in gang unschedulable: {}",
                tasks.len(),
                ssn.job_fit_error(j)
            ),
        };
        (condition, Some(unready))
    } else {
        let condition = PodGroupCondition {
            type_: "Scheduled".into(),
            status: "True".into(),
            transition_id: ssn.options.uid.clone(),
            last_transition_time: Some(ssn.options.now),
            reason: "tasks in gang are ready to be scheduled".into(),
            message: String::new(),
        };
        (condition, None)
    })
}
