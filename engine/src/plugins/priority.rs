//! `priority` (Volcano: pkg/scheduler/plugins/priority/priority.go): order tasks, jobs and sub-jobs by priority; higher-priority work may
//! preempt lower; a job starves while not all its tasks are placed.

use std::cmp::Ordering;

use crate::config::{ArgumentError, Arguments};
use crate::framework::{EvictionContext, EvictionKind, Plugin, SessionState};
use crate::model::{JobId, SubJobId, TaskId};

/// The plugin (no arguments).
#[derive(Debug, Default)]
pub struct Priority;

/// Builds the plugin.
pub fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Priority))
}

fn sub_job_priority(ssn: &SessionState, s: SubJobId) -> i32 {
    ssn.snap.sub_jobs.tasks[s.idx()]
        .iter()
        .map(|t| ssn.snap.tasks.priority[t.idx()])
        .max()
        .unwrap_or(0)
}

impl Plugin for Priority {
    fn name(&self) -> &str {
        "priority"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn task_order(&self, ssn: &SessionState, l: TaskId, r: TaskId) -> Ordering {
        let p = &ssn.snap.tasks.priority;
        p[r.idx()].cmp(&p[l.idx()])
    }

    fn job_order(&self, ssn: &SessionState, l: JobId, r: JobId) -> Ordering {
        let p = &ssn.snap.jobs.priority;
        p[r.idx()].cmp(&p[l.idx()])
    }

    fn sub_job_order(&self, ssn: &SessionState, l: SubJobId, r: SubJobId) -> Ordering {
        sub_job_priority(ssn, r).cmp(&sub_job_priority(ssn, l))
    }

    fn preemptable(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        let Some(pj) = ssn.job_of(preemptor) else {
            return Some(Vec::new());
        };
        let jobs = &ssn.snap.jobs;
        let tasks = &ssn.snap.tasks;
        let victims = candidates
            .iter()
            .copied()
            .filter(|&c| match ssn.job_of(c) {
                None => false,
                Some(cj) if cj != pj => jobs.priority[cj.idx()] < jobs.priority[pj.idx()],
                Some(_) => tasks.priority[c.idx()] < tasks.priority[preemptor.idx()],
            })
            .collect();
        Some(victims)
    }

    /// Gang preemption takes only from jobs of lower priority than the preemptor's; reclaim is
    /// about queue fairness, so priority lets every candidate through.
    fn unified_evictable(
        &self,
        ssn: &SessionState,
        ctx: &EvictionContext,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        if ctx.kind == EvictionKind::GangReclaim {
            return Some(candidates.to_vec());
        }
        let prio = &ssn.snap.jobs.priority;
        let victims = candidates
            .iter()
            .copied()
            .filter(|&c| {
                ssn.job_of(c)
                    .is_some_and(|cj| prio[cj.idx()] < prio[ctx.job.idx()])
            })
            .collect();
        Some(victims)
    }

    fn job_starving(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        Some(
            ((ssn.ready_task_num(job) + ssn.waiting_task_num(job)) as usize)
                < ssn.snap.jobs.tasks[job.idx()].len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::framework::{EvictionContext, EvictionKind};
    use crate::harness::Harness;

    #[test]
    fn gang_preempt_may_take_only_lower_priority_jobs_gang_reclaim_any() {
        // No enable flag gates UnifiedEvictable: enablePreemptable: false changes nothing.
        let conf = "actions: gangpreempt\ntiers:\n- plugins:\n  - name: priority\n    enablePreemptable: false\n";
        let objects = "kind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n---\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 1\n---\nkind: PodGroup\nmetadata: {name: low, namespace: ns}\nspec: {queue: q, minMember: 1, priorityClassName: low}\nstatus: {phase: Running}\n---\nkind: PodGroup\nmetadata: {name: peer, namespace: ns}\nspec: {queue: q, minMember: 1, priorityClassName: high}\nstatus: {phase: Running}\n---\nkind: PodGroup\nmetadata: {name: high, namespace: ns}\nspec: {queue: q, minMember: 1, priorityClassName: high}\nstatus: {phase: Inqueue}\n";
        let ssn = Harness::new(conf)
            .queue("q", 1)
            .node("n1", "4", "8Gi", &[])
            .manifests(objects)
            .pod("ns", "low-task", "low", "1", "1Gi")
            .pod("ns", "peer-task", "peer", "1", "1Gi")
            .open()
            .unwrap();
        let snap = &ssn.state.snap;
        let candidates = [
            snap.task_id("ns/low-task").unwrap(),
            snap.task_id("ns/peer-task").unwrap(),
        ];
        let ctx = |kind| EvictionContext {
            kind,
            job: snap.job_id("ns/high").unwrap(),
        };
        assert_eq!(
            ssn.unified_evictable(&ctx(EvictionKind::GangPreempt), &candidates),
            candidates[..1]
        );
        assert_eq!(
            ssn.unified_evictable(&ctx(EvictionKind::GangReclaim), &candidates),
            candidates
        );
    }
}
