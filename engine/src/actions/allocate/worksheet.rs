//! A job's work list for allocate: its sub-jobs in order, each with its pending tasks in order.

use std::collections::{BTreeMap, BTreeSet};

use crate::actions::PriorityQueue;
use crate::framework::Session;
use crate::model::{JobId, SubJobId, TaskId, TaskStatus};

/// The scheduling gate Volcano itself sets while a queue has no room (tasks gated only by it
/// stay in the work list).
pub const QUEUE_ALLOCATION_GATE: &str = "scheduling.volcano.sh/queue-allocation-gate";

/// Sub-jobs (required ones first) and their pending tasks.
#[derive(Debug, Clone, Default)]
pub struct Worksheet {
    sub_jobs: PriorityQueue<SubJobId>,
    required: BTreeSet<SubJobId>,
    pub tasks: BTreeMap<SubJobId, PriorityQueue<TaskId>>,
}

impl Worksheet {
    /// `organizeJobWorksheet`: sub-jobs that must become ready to meet `minSubGroups` go first;
    /// tasks are the Pending, non-best-effort ones not held by a foreign scheduling gate.
    pub fn organize(ssn: &Session, job: JobId) -> Worksheet {
        let snap = &ssn.state.snap;
        // The gates are read from the pod only when it has some (`sch_gated`): reading every
        // pending pod was a cache miss per task.
        Self::organize_where(ssn, job, |t| {
            !snap.tasks.best_effort[t.idx()]
                && (!snap.tasks.sch_gated[t.idx()]
                    || snap.tasks.pod[t.idx()]
                        .spec
                        .scheduling_gates
                        .iter()
                        .all(|g| g.name == QUEUE_ALLOCATION_GATE))
        })
    }

    /// The same ordering over the Pending tasks that `wanted` accepts (the gang eviction actions
    /// leave out every gated task).
    pub fn organize_where(ssn: &Session, job: JobId, wanted: impl Fn(TaskId) -> bool) -> Worksheet {
        // Most jobs of a busy cluster have nothing pending: their sheet is empty.
        if ssn.state.jobs.counts[job][TaskStatus::Pending.index()] == 0 {
            return Worksheet::default();
        }
        let snap = &ssn.state.snap;
        let mut ready: BTreeMap<&str, i32> = BTreeMap::new();
        let mut not_ready: Vec<SubJobId> = Vec::new();
        for &sj in &snap.jobs.sub_jobs[job.idx()] {
            if ssn.sub_job_ready(job, sj) {
                *ready.entry(&*snap.sub_jobs.gid[sj.idx()]).or_default() += 1;
            } else {
                not_ready.push(sj);
            }
        }
        not_ready.sort_by(|&a, &b| {
            if ssn.sub_job_order_less(a, b) {
                std::cmp::Ordering::Less
            } else if ssn.sub_job_order_less(b, a) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        let mut ws = Worksheet::default();
        for sj in not_ready {
            let gid = &*snap.sub_jobs.gid[sj.idx()];
            let min = snap.jobs.min_sub_jobs[job.idx()]
                .get(gid)
                .copied()
                .unwrap_or(0);
            let c = ready.entry(gid).or_default();
            if *c < min {
                ws.required.insert(sj);
                *c += 1;
            }
        }
        for &sj in &snap.jobs.sub_jobs[job.idx()] {
            let mut pq = PriorityQueue::new();
            for &t in &snap.sub_jobs.tasks[sj.idx()] {
                if ssn.state.tasks.status[t] == TaskStatus::Pending && wanted(t) {
                    pq.push(t, |l, r| ssn.task_order_less(l, r));
                }
            }
            if !pq.is_empty() {
                ws.push_sub_job(ssn, sj);
                ws.tasks.insert(sj, pq);
            }
        }
        ws
    }

    /// True when no sub-job is left.
    pub fn is_empty(&self) -> bool {
        self.sub_jobs.is_empty()
    }

    /// Pops the next sub-job.
    pub fn pop_sub_job(&mut self, ssn: &Session) -> Option<SubJobId> {
        let required = &self.required;
        self.sub_jobs.pop(|l, r| sub_job_less(required, ssn, l, r))
    }

    /// Pushes a sub-job (back).
    pub fn push_sub_job(&mut self, ssn: &Session, sj: SubJobId) {
        let required = &self.required;
        self.sub_jobs
            .push(sj, |l, r| sub_job_less(required, ssn, l, r));
    }
}

/// Required sub-jobs first, then sub-job order.
fn sub_job_less(required: &BTreeSet<SubJobId>, ssn: &Session, l: SubJobId, r: SubJobId) -> bool {
    let (rl, rr) = (required.contains(&l), required.contains(&r));
    if rl != rr {
        rl
    } else {
        ssn.sub_job_order_less(l, r)
    }
}
