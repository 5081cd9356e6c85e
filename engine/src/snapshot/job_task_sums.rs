//! What each job's tasks add up to as the snapshot has them: tasks per status, pending
//! best-effort tasks, and the requests of all and of the allocated ones. A session opens its job
//! columns from these (`JobColumns::open`).
//!
//! They are a function of the job's task rows alone, and a job whose pods are the very versions
//! the earlier snapshot had, in the same order, has the very same rows (`Reuse::Whole`): its sums
//! are taken from the earlier job table, and only the jobs that changed are summed again. A
//! steady large cluster changes one job in ten between two cycles, and summing all 60k jobs
//! over their 430k tasks at every open was a pass over the whole cluster.

use rayon::prelude::*;

use super::{JobTable, TaskTable};
use crate::model::{Resource, StatusCounts, TaskId, TaskStatus};

/// The sums of one job's tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct JobTaskSums {
    /// Tasks per status (`TaskStatus::index`).
    pub counts: StatusCounts,
    /// Pending tasks that request nothing.
    pub best_effort_pending: u32,
    /// Σ request of the tasks whose status is allocated (`TaskStatus::is_allocated`).
    pub allocated: Resource,
    /// Σ request of all the tasks.
    pub total_request: Resource,
}

impl JobTaskSums {
    /// The sums of tasks `ts` of `tasks`, added in the order given (the order a session adds
    /// them in, so a float sum comes out the same to the last bit).
    pub fn of(tasks: &TaskTable, ts: &[TaskId]) -> JobTaskSums {
        let mut sums = JobTaskSums {
            counts: [0; 10],
            best_effort_pending: 0,
            allocated: Resource::empty(),
            total_request: Resource::empty(),
        };
        for t in ts {
            let (status, request) = (tasks.status[t.idx()], &tasks.resreq[t.idx()]);
            sums.counts[status.index()] += 1;
            if status == TaskStatus::Pending && tasks.best_effort[t.idx()] {
                sums.best_effort_pending += 1;
            }
            sums.total_request.add(request);
            if status.is_allocated() {
                sums.allocated.add(request);
            }
        }
        sums
    }
}

/// Every job's sums: `carried[j]`, an earlier job whose rows job `j`'s are, lends its sums from
/// `earlier`; the other jobs are summed over their tasks in `tasks`.
pub(super) fn job_task_sums(
    jobs: &JobTable,
    tasks: &TaskTable,
    carried: &[Option<usize>],
    earlier: Option<&JobTable>,
) -> Vec<JobTaskSums> {
    (0..jobs.len())
        .into_par_iter()
        .map(|j| {
            let lent = carried.get(j).copied().flatten();
            match lent.and_then(|e| earlier?.task_sums.get(e)) {
                Some(sums) => sums.clone(),
                None => JobTaskSums::of(tasks, &jobs.tasks[j]),
            }
        })
        .collect()
}

impl JobTable {
    /// The first job whose sums are not what its tasks in `tasks` add up to, with both; `None`
    /// when every job's are (the checking mode asks this of each snapshot it checks).
    pub fn stale_task_sums(&self, tasks: &TaskTable) -> Option<String> {
        (0..self.len()).into_par_iter().find_map_first(|j| {
            let fresh = JobTaskSums::of(tasks, &self.tasks[j]);
            let kept = self.task_sums.get(j);
            (kept != Some(&fresh)).then(|| {
                format!(
                    "job {} has task sums {kept:?} where its tasks add up to {fresh:?}",
                    self.uid[j]
                )
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::JobId;
    use crate::snapshot::IdLists;

    /// Four tasks: pending best-effort, pending, running, succeeded.
    fn table() -> TaskTable {
        let cpu = |m: f64| Resource::cpu_mem(m, 0.0);
        TaskTable {
            status: vec![
                TaskStatus::Pending,
                TaskStatus::Pending,
                TaskStatus::Running,
                TaskStatus::Succeeded,
            ],
            resreq: vec![Resource::empty(), cpu(100.0), cpu(250.0), cpu(1000.0)],
            best_effort: vec![true, false, false, false],
            job: vec![Some(JobId(0)); 4],
            ..TaskTable::default()
        }
    }

    #[test]
    fn a_jobs_sums_count_its_statuses_and_add_all_and_allocated_requests() {
        let tasks = table();
        let ids: Vec<TaskId> = (0..4).map(TaskId).collect();
        let sums = JobTaskSums::of(&tasks, &ids);
        assert_eq!(sums.counts[TaskStatus::Pending.index()], 2);
        assert_eq!(sums.counts[TaskStatus::Running.index()], 1);
        assert_eq!(sums.counts[TaskStatus::Succeeded.index()], 1);
        assert_eq!(sums.best_effort_pending, 1);
        assert_eq!(sums.total_request.milli_cpu, 1350.0);
        assert_eq!(sums.allocated.milli_cpu, 250.0, "only the running task");
    }

    #[test]
    fn carried_sums_are_lent_from_the_earlier_job_and_the_others_summed_again() {
        let tasks = table();
        let mut jobs = JobTable {
            uid: vec!["ns/a".into(), "ns/b".into()],
            ..JobTable::default()
        };
        jobs.tasks = IdLists::from_lengths([2, 2], (0..4).map(TaskId).collect());
        let mut earlier = JobTable::default();
        let mut marked = JobTaskSums::of(&tasks, &[]);
        marked.best_effort_pending = 7;
        earlier.task_sums = vec![marked.clone()];
        let sums = job_task_sums(&jobs, &tasks, &[None, Some(0)], Some(&earlier));
        assert_eq!(sums[0], JobTaskSums::of(&tasks, &[TaskId(0), TaskId(1)]));
        assert_eq!(sums[1], marked, "job b's sums are the earlier job's");
        jobs.task_sums = sums;
        let stale = jobs
            .stale_task_sums(&tasks)
            .expect("b's sums are not its tasks'");
        assert!(stale.starts_with("job ns/b has task sums"), "{stale}");
        jobs.task_sums[1] = JobTaskSums::of(&tasks, &[TaskId(2), TaskId(3)]);
        assert_eq!(jobs.stale_task_sums(&tasks), None);
    }
}
