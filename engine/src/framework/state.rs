//! The mutable side of one session: statuses, node accounting and job counters, as columns
//! beside the immutable snapshot. Plugins read it; only the session and statements write it.
//!
//! The columns are grouped by the table whose rows they extend (`SessionState::tasks`, `nodes`,
//! `jobs`, `sub_jobs`). A job's PodGroup phase and conditions are read from the snapshot until the
//! session sets them, and close moves them into the statuses. Conditions a session sets say whether
//! they still equal the PodGroup's (`JobConditions`), and close compares a job's phase and task
//! counts with the job table's copy (`JobTable::pod_group_phase`, `status_counts`), so close reads
//! no PodGroup again after gang read its conditions once.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use fixedbitset::FixedBitSet;
use rayon::prelude::*;
use smallvec::SmallVec;

use super::node_accounts::{NodeAccount, NodeAccounting};
use super::tasks_on_nodes::{accounted_node, tasks_on_nodes};
use super::{
    Column, Event, FitErrors, JobColumns, JobConditions, NodeColumns, NumaBooking, SearchStage,
    SearchTimings, SessionMetrics, SessionOptions, SubJobColumns, TaskColumns, VolumeBinds,
};
use crate::api::PodGroupCondition;
use crate::config::SchedulerConfig;
use crate::model::{HyperNodeId, JobId, NodeId, QueueId, Resource, SubJobId, TaskId, TaskStatus};
use crate::snapshot::{NetworkTopology, Snapshot, TaskTable};

/// Transaction context a `Statement::discard` saved on a task (used for pod conditions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LastTransaction {
    pub status: TaskStatus,
    pub node: Option<NodeId>,
    pub eviction_occurred: bool,
}

/// The tasks accounted on one node, inline up to a node's usual load: a heap vector per node
/// was half of a steady `large` session open's allocations (50k nodes, every cycle).
pub type NodeTasks = SmallVec<[TaskId; 12]>;

/// Session-side cluster state.
#[derive(Debug)]
pub struct SessionState {
    pub snap: Arc<Snapshot>,
    pub config: Arc<SchedulerConfig>,
    pub options: SessionOptions,
    /// Each task's session columns.
    pub tasks: TaskColumns,
    /// Each node's session columns.
    pub nodes: NodeColumns,
    /// Each job's session columns.
    pub jobs: JobColumns,
    /// Each sub-job's session columns.
    pub sub_jobs: SubJobColumns,
    /// Volume work each bind needs first, by task: left by the plugin that assumed it (the
    /// predicates plugin's VolumeBinding) when the session closes.
    pub volume_binds: HashMap<TaskId, VolumeBinds>,
    /// NUMA sets plugins chose for the pods they placed, left at close for the cache.
    pub numa_bookings: Vec<NumaBooking>,
    /// Pod annotations each bind sets, by task: left by the plugins that chose them (the
    /// devices `deviceshare` assigned) when the session closes.
    pub bind_annotations: HashMap<TaskId, BTreeMap<String, String>>,
    /// The node lock each bind takes first, by task (`deviceshare.NodeLockEnable`).
    pub bind_node_locks: HashMap<TaskId, &'static str>,
    events: Mutex<Vec<Event>>,
    /// What the session reports for the metrics (plugins and actions add to it).
    pub metrics: SessionMetrics,
    /// The job of each task allocate and backfill placed, in order (for `metrics` at close).
    pub(crate) placed_jobs: Vec<JobId>,
    /// Node-search timings, recorded by searches that hold the session shared.
    search_timings: Mutex<SearchTimings>,
}

impl SessionState {
    /// Builds the session columns from a snapshot: node accounting from the tasks on nodes,
    /// job counters from task statuses.
    pub fn new(snap: Arc<Snapshot>, config: Arc<SchedulerConfig>, options: SessionOptions) -> Self {
        let (nodes, to_sum) = NodeAccounting::open(&snap, &options.carryover);
        let mut st = SessionState {
            tasks: TaskColumns::open(&snap.tasks),
            nodes: NodeColumns::open(nodes),
            jobs: JobColumns::open(&snap),
            sub_jobs: SubJobColumns::open(&snap),
            volume_binds: HashMap::new(),
            numa_bookings: Vec::new(),
            bind_annotations: HashMap::new(),
            bind_node_locks: HashMap::new(),
            events: Mutex::new(Vec::new()),
            metrics: SessionMetrics::default(),
            placed_jobs: Vec::new(),
            search_timings: Mutex::default(),
            snap,
            config,
            options,
        };
        st.account_snapshot_tasks(to_sum.as_ref());
        st
    }

    /// Adds every task the snapshot has on a node to that node's accounting, as `node_add` in
    /// task order would: the tasks are listed per node, then each node sums its own on the pool
    /// (400k sequential adds were a third of a large session's open). Only the nodes in `to_sum`
    /// are summed when it is given: the others' columns were taken over from the last session.
    fn account_snapshot_tasks(&mut self, to_sum: Option<&FixedBitSet>) {
        let (node, status) = (self.tasks.node.as_slice(), self.tasks.status.as_slice());
        let mut on_node = tasks_on_nodes(node, status, self.nodes.idle.len());
        // The status each listed task is accounted under: its own (a refused one is taken off
        // again below).
        let mut node_status: Vec<Option<TaskStatus>> = node
            .par_iter()
            .zip(status)
            .map(|(&n, &s)| accounted_node(n, s).map(|_| s))
            .collect();
        let (status, resreq) = (&self.tasks.status, &self.snap.tasks.resreq);
        // Only Binding can be refused, and snapshot tasks are never Binding; a refused one is
        // taken off its node, as the sequential adds did.
        let refused: Vec<TaskId> = on_node
            .par_iter_mut()
            .zip(self.nodes.idle.as_mut_slice())
            .zip(self.nodes.used.as_mut_slice())
            .zip(self.nodes.releasing.as_mut_slice())
            .zip(self.nodes.pipelined.as_mut_slice())
            .enumerate()
            .flat_map_iter(|(n, ((((tasks, idle), used), releasing), pipelined))| {
                let mut refused = Vec::new();
                if to_sum.is_some_and(|s| !s.contains(n)) {
                    return refused;
                }
                let mut account = NodeAccount {
                    idle,
                    used,
                    releasing,
                    pipelined,
                };
                tasks.retain(|t| {
                    let added = account.add(status[*t], &resreq[t.idx()]);
                    if !added {
                        refused.push(*t);
                    }
                    added
                });
                refused
            })
            .collect();
        for t in refused {
            self.tasks.node.set(t, None);
            node_status[t.idx()] = None;
        }
        self.tasks.node_status = Column::from(node_status);
        self.nodes.tasks = Column::from(on_node);
    }

    // ---- tasks ------------------------------------------------------------------------------

    /// The task's job, if it is in the session.
    pub fn job_of(&self, t: TaskId) -> Option<JobId> {
        self.snap.tasks.job[t.idx()]
    }

    /// The queue of the task's job.
    pub fn queue_of_task(&self, t: TaskId) -> Option<QueueId> {
        self.job_of(t).map(|j| self.snap.jobs.queue[j.idx()])
    }

    /// Resreq of a task.
    pub fn resreq(&self, t: TaskId) -> &Resource {
        &self.snap.tasks.resreq[t.idx()]
    }

    /// Σ Resreq of `tasks`.
    pub fn total_resreq(&self, tasks: &[TaskId]) -> Resource {
        let mut r = Resource::empty();
        for &t in tasks {
            r.add(self.resreq(t));
        }
        r
    }

    /// The pod's `status.nominatedNodeName` as this session sees it ("" once cleared).
    pub fn nominated_node_name(&self, t: TaskId) -> &str {
        if self.tasks.nomination_cleared[t] || !self.snap.tasks.nominated[t.idx()] {
            ""
        } else {
            &self.snap.tasks.pod[t.idx()].status.nominated_node_name
        }
    }

    /// Drops the pod's `nominatedNodeName` for the rest of the session (a stale nomination).
    pub fn clear_nomination(&mut self, t: TaskId) {
        self.tasks.nomination_cleared.set(t, true);
    }

    /// Sets `task.JobAllocatedHyperNode`, the hyper-node the task's placement is bound to.
    pub fn set_task_allocated_hyper_node(&mut self, t: TaskId, h: Option<HyperNodeId>) {
        self.tasks.allocated_hyper_node.set(t, h);
    }

    // ---- what actions record of jobs and sub-jobs ----------------------------------------

    /// Records in `job.NodesFitErrors` why task `t` could not be placed.
    pub fn record_fit_errors(&mut self, j: JobId, t: TaskId, errors: FitErrors) {
        self.jobs.fit_errors.get_mut(j).insert(t, errors);
    }

    /// Forgets why task `t` could not be placed (it was placed after all).
    pub fn forget_fit_errors(&mut self, j: JobId, t: &TaskId) {
        self.jobs.fit_errors.get_mut(j).remove(t);
    }

    /// Forgets every recorded reason of job `j`'s tasks (a new attempt starts).
    pub fn clear_fit_errors(&mut self, j: JobId) {
        self.jobs.fit_errors.get_mut(j).clear();
    }

    /// Sets `job.JobFitErrors`, the job-level message.
    pub fn set_job_fit_message(&mut self, j: JobId, message: String) {
        self.jobs.fit_message.set(j, message);
    }

    /// Sets the hyper-node a job's placements are bound to.
    pub fn set_job_allocated_hyper_node(&mut self, j: JobId, h: Option<HyperNodeId>) {
        self.jobs.allocated_hyper_node.set(j, h);
    }

    /// Sets `subJob.NominatedHyperNode`.
    pub fn set_sub_job_nominated_hyper_node(&mut self, sj: SubJobId, h: Option<HyperNodeId>) {
        self.sub_jobs.nominated_hyper_node.set(sj, h);
    }

    /// Sets the hyper-node a sub-job's placements are bound to.
    pub fn set_sub_job_allocated_hyper_node(&mut self, sj: SubJobId, h: Option<HyperNodeId>) {
        self.sub_jobs.allocated_hyper_node.set(sj, h);
    }

    /// The tasks whose status this session changed (some may have changed back), in id order,
    /// taken out for close.
    pub(super) fn take_tasks_with_status_changed(&mut self) -> Vec<TaskId> {
        let mut changed = std::mem::take(&mut self.tasks.status_changes);
        changed.sort_unstable();
        changed.dedup();
        changed
    }

    /// Changes a task's status and keeps job / sub-job counters and job allocation in step.
    pub(super) fn set_task_status(&mut self, t: TaskId, status: TaskStatus) {
        let old = self.tasks.status[t];
        if old == status {
            return;
        }
        self.tasks.status.set(t, status);
        self.tasks.status_changes.push(t);
        let best_effort = self.snap.tasks.best_effort[t.idx()];
        let count_pending = |pending: &mut u32| {
            if old == TaskStatus::Pending {
                *pending -= 1;
            } else if status == TaskStatus::Pending {
                *pending += 1;
            }
        };
        if let Some(j) = self.job_of(t) {
            let c = self.jobs.counts.get_mut(j);
            c[old.index()] -= 1;
            c[status.index()] += 1;
            if best_effort {
                count_pending(self.jobs.best_effort_pending.get_mut(j));
            }
            let r = &self.snap.tasks.resreq[t.idx()];
            if old.is_allocated() && !status.is_allocated() {
                self.jobs.allocated.get_mut(j).sub(r);
            } else if !old.is_allocated() && status.is_allocated() {
                self.jobs.allocated.get_mut(j).add(r);
            }
        }
        if let Some(s) = self.snap.tasks.sub_job[t.idx()] {
            let c = self.sub_jobs.counts.get_mut(s);
            c[old.index()] -= 1;
            c[status.index()] += 1;
            if best_effort {
                count_pending(self.sub_jobs.best_effort_pending.get_mut(s));
            }
        }
    }

    // ---- nodes ------------------------------------------------------------------------------

    /// Node `n`'s accounting columns, with the task table their arithmetic reads requests from.
    fn node_account(&mut self, n: NodeId) -> (NodeAccount<'_>, &TaskTable) {
        let account = NodeAccount {
            idle: self.nodes.idle.get_mut(n),
            used: self.nodes.used.get_mut(n),
            releasing: self.nodes.releasing.get_mut(n),
            pipelined: self.nodes.pipelined.get_mut(n),
        };
        (account, &self.snap.tasks)
    }

    /// `NodeInfo.AddTask` with the task's current status. A Binding task must fit in idle.
    pub(super) fn node_add(&mut self, n: NodeId, t: TaskId) -> Result<(), String> {
        if self.tasks.node_status[t].is_some() {
            return Err(format!("task {} already on a node", self.snap.tasks.key(t)));
        }
        let status = self.tasks.status[t];
        let (mut account, tasks) = self.node_account(n);
        if !account.add(status, &tasks.resreq[t.idx()]) {
            return Err(format!(
                "node {} has not enough idle resources for task {}",
                self.snap.nodes.name[n.idx()],
                self.snap.tasks.key(t)
            ));
        }
        self.tasks.node_status.set(t, Some(status));
        self.nodes.tasks.get_mut(n).push(t);
        self.nodes.changes.push(n);
        Ok(())
    }

    /// `NodeInfo.RemoveTask`: reverses the accounting of the status the task was added with.
    pub(super) fn node_remove(&mut self, n: NodeId, t: TaskId) {
        let Some(status) = self.tasks.node_status.get_mut(t).take() else {
            return;
        };
        let (mut account, tasks) = self.node_account(n);
        account.remove(status, &tasks.resreq[t.idx()]);
        let on_node = self.nodes.tasks.get_mut(n);
        if let Some(pos) = on_node.iter().position(|&x| x == t) {
            on_node.remove(pos);
        }
        self.nodes.changes.push(n);
    }

    /// Leaves the node accounting columns, as they are now, to the next session's open; the
    /// session has closed.
    pub(super) fn leave_node_columns(&mut self) {
        self.nodes
            .take_accounting()
            .leave(self.snap.serial, &self.options.carryover);
    }

    /// `NodeInfo.UpdateTask`: remove, then add with the current status.
    pub(super) fn node_update(&mut self, n: NodeId, t: TaskId) -> Result<(), String> {
        self.node_remove(n, t);
        self.node_add(n, t)
    }

    /// `FutureIdle() = Idle + Releasing − Pipelined`; the idle column itself on a node that
    /// releases and pipelines nothing (most nodes: node searches ask this of every node ranked).
    pub fn future_idle(&self, n: NodeId) -> Cow<'_, Resource> {
        let (releasing, pipelined) = (&self.nodes.releasing[n], &self.nodes.pipelined[n]);
        if releasing.adds_nothing() && pipelined.adds_nothing() {
            return Cow::Borrowed(&self.nodes.idle[n]);
        }
        let mut r = self.nodes.idle[n].plus(releasing);
        r.sub(pipelined);
        Cow::Owned(r)
    }

    // ---- jobs -------------------------------------------------------------------------------

    fn count(&self, j: JobId, s: TaskStatus) -> u32 {
        self.jobs.counts[j][s.index()]
    }

    /// Number of tasks of the job in `status`.
    pub fn job_status_count(&self, j: JobId, s: TaskStatus) -> u32 {
        self.count(j, s)
    }

    /// Bound + Binding + Running + Allocated + Succeeded.
    pub fn ready_task_num(&self, j: JobId) -> i32 {
        use TaskStatus::*;
        [Bound, Binding, Running, Allocated, Succeeded]
            .iter()
            .map(|&s| self.count(j, s))
            .sum::<u32>() as i32
    }

    /// Pipelined tasks.
    pub fn waiting_task_num(&self, j: JobId) -> i32 {
        self.count(j, TaskStatus::Pipelined) as i32
    }

    /// Pending best-effort tasks.
    pub fn pending_best_effort_task_num(&self, j: JobId) -> i32 {
        self.jobs.best_effort_pending[j] as i32
    }

    /// Tasks in allocated statuses, Succeeded, Pipelined or Pending.
    pub fn valid_task_num(&self, j: JobId) -> i32 {
        use TaskStatus::*;
        [
            Allocated, Binding, Bound, Running, Succeeded, Pipelined, Pending,
        ]
        .iter()
        .map(|&s| self.count(j, s))
        .sum::<u32>() as i32
    }

    /// `IsReady`.
    pub fn job_is_ready(&self, j: JobId) -> bool {
        self.ready_task_num(j) + self.pending_best_effort_task_num(j)
            >= self.snap.jobs.min_available[j.idx()]
    }

    /// `IsPipelined`.
    pub fn job_is_pipelined(&self, j: JobId) -> bool {
        self.waiting_task_num(j) + self.ready_task_num(j) + self.pending_best_effort_task_num(j)
            >= self.snap.jobs.min_available[j.idx()]
    }

    /// `IsStarving`.
    pub fn job_is_starving(&self, j: JobId) -> bool {
        self.waiting_task_num(j) + self.ready_task_num(j) < self.snap.jobs.min_available[j.idx()]
    }

    /// `IsPending`: PodGroup phase Pending or empty.
    pub fn job_is_pending(&self, j: JobId) -> bool {
        let p = self.job_phase(j);
        p.is_empty() || p == "Pending"
    }

    /// Job `j`'s PodGroup phase as this session leaves it.
    pub fn job_phase(&self, j: JobId) -> &str {
        self.jobs.phase[j].unwrap_or_else(|| self.snap.jobs.pod_group_phase(j))
    }

    /// Sets job `j`'s PodGroup phase for the rest of the session.
    pub fn set_job_phase(&mut self, j: JobId, phase: &'static str) {
        self.jobs.phase.set(j, Some(phase));
    }

    /// Job `j`'s PodGroup conditions as this session leaves them.
    pub fn job_conditions(&self, j: JobId) -> &[PodGroupCondition] {
        match &self.jobs.conditions[j] {
            Some(set) => set.list(),
            None => &self.snap.jobs.podgroup[j.idx()].status.conditions,
        }
    }

    /// `UpdatePodGroupCondition`: job `j`'s conditions with `c` in place of the first of its
    /// type, or appended (`set_job_conditions` keeps them).
    pub fn job_conditions_with(&self, j: JobId, c: PodGroupCondition) -> JobConditions {
        let pod_group = &self.snap.jobs.podgroup[j.idx()].status.conditions;
        match &self.jobs.conditions[j] {
            None => JobConditions::with(j, pod_group, c),
            // Still the PodGroup's: what changes from them changes from the PodGroup's.
            Some(set) if set.unchanged() => JobConditions::with(j, set.list(), c),
            Some(set) => JobConditions::with(j, set.list(), c).compared_with(pod_group),
        }
    }

    /// Sets a job's PodGroup conditions for the rest of the session.
    pub fn set_job_conditions(&mut self, conditions: JobConditions) {
        let j = conditions.job();
        self.jobs.conditions.set(j, Some(conditions));
    }

    /// Every job's conditions, moved out for the job status updater at close.
    pub(super) fn take_job_conditions(&mut self) -> Vec<JobConditions> {
        let set = std::mem::replace(&mut self.jobs.conditions, Column::from(Vec::new()));
        let podgroups = &self.snap.jobs.podgroup;
        set.into_vec()
            .into_par_iter()
            .zip(podgroups.par_iter())
            .enumerate()
            .map(|(j, (set, pg))| {
                set.unwrap_or_else(|| {
                    JobConditions::of_pod_group(JobId(j as u32), &pg.status.conditions)
                })
            })
            .collect()
    }

    fn role_counts(&self, j: JobId, pred: impl Fn(TaskId) -> bool) -> BTreeMap<&str, i32> {
        let mut m: BTreeMap<&str, i32> = BTreeMap::new();
        for &t in &self.snap.jobs.tasks[j.idx()] {
            if pred(t) {
                *m.entry(&*self.snap.tasks.role[t.idx()]).or_default() += 1;
            }
        }
        m
    }

    /// True when every role of `j` has its minimum of tasks that `counted` accepts. Tasks are
    /// only counted when some role has a minimum to check.
    fn check_roles(&self, j: JobId, counted: impl Fn(TaskId) -> bool) -> bool {
        let jobs = &self.snap.jobs;
        let minimums = &jobs.task_min_available[j.idx()];
        if jobs.min_available[j.idx()] < jobs.task_min_available_total[j.idx()]
            || minimums.values().all(|&min| min <= 0)
        {
            return true;
        }
        let counts = self.role_counts(j, counted);
        minimums
            .iter()
            .all(|(role, &min)| min <= 0 || counts.get(role.as_str()).copied().unwrap_or(0) >= min)
    }

    /// `CheckTaskValid`.
    pub fn check_task_valid(&self, j: JobId) -> bool {
        self.check_roles(j, |t| {
            let s = self.tasks.status[t];
            s.is_allocated()
                || matches!(
                    s,
                    TaskStatus::Succeeded | TaskStatus::Pipelined | TaskStatus::Pending
                )
        })
    }

    fn occupied_for_ready(&self, t: TaskId, with_pipelined: bool) -> bool {
        let s = self.tasks.status[t];
        s.is_allocated()
            || s == TaskStatus::Succeeded
            || (with_pipelined && s == TaskStatus::Pipelined)
            || (s == TaskStatus::Pending && self.snap.tasks.best_effort[t.idx()])
    }

    /// `CheckTaskReady`.
    pub fn check_task_ready(&self, j: JobId) -> bool {
        self.check_roles(j, |t| self.occupied_for_ready(t, false))
    }

    /// `CheckTaskPipelined`.
    pub fn check_task_pipelined(&self, j: JobId) -> bool {
        self.check_roles(j, |t| self.occupied_for_ready(t, true))
    }

    // ---- sub-jobs ---------------------------------------------------------------------------

    fn sub_count(&self, s: SubJobId, st: TaskStatus) -> u32 {
        self.sub_jobs.counts[s][st.index()]
    }

    /// Ready tasks of a sub-job.
    pub fn sub_job_ready_task_num(&self, s: SubJobId) -> i32 {
        use TaskStatus::*;
        [Bound, Binding, Running, Allocated, Succeeded]
            .iter()
            .map(|&x| self.sub_count(s, x))
            .sum::<u32>() as i32
    }

    fn sub_job_pending_best_effort(&self, s: SubJobId) -> i32 {
        self.sub_jobs.best_effort_pending[s] as i32
    }

    /// Sub-job `IsReady`.
    pub fn sub_job_is_ready(&self, s: SubJobId) -> bool {
        self.sub_job_ready_task_num(s) + self.sub_job_pending_best_effort(s)
            >= self.snap.sub_jobs.min_available[s.idx()]
    }

    /// Sub-job `IsPipelined`.
    pub fn sub_job_is_pipelined(&self, s: SubJobId) -> bool {
        self.sub_job_ready_task_num(s)
            + self.sub_count(s, TaskStatus::Pipelined) as i32
            + self.sub_job_pending_best_effort(s)
            >= self.snap.sub_jobs.min_available[s.idx()]
    }

    /// Sub-jobs per policy group id, counting those that satisfy `cond`.
    fn sub_jobs_per_gid(&self, j: JobId, cond: impl Fn(SubJobId) -> bool) -> BTreeMap<&str, i32> {
        let mut m: BTreeMap<&str, i32> = BTreeMap::new();
        for &s in &self.snap.jobs.sub_jobs[j.idx()] {
            if cond(s) {
                *m.entry(&*self.snap.sub_jobs.gid[s.idx()]).or_default() += 1;
            }
        }
        m
    }

    /// `CheckSubJobValid`: each policy group has at least `minSubGroups` sub-jobs. Sub-jobs
    /// are counted only when the job has such minimums (most have none, and allocate asks for
    /// every job).
    pub fn check_sub_job_valid(&self, j: JobId) -> bool {
        let minimums = &self.snap.jobs.min_sub_jobs[j.idx()];
        if minimums.is_empty() {
            return true;
        }
        let counts = self.sub_jobs_per_gid(j, |_| true);
        minimums
            .iter()
            .all(|(g, &min)| counts.get(g.as_str()).copied().unwrap_or(0) >= min)
    }

    fn check_sub_job_condition(&self, j: JobId, cond: impl Fn(SubJobId) -> bool) -> bool {
        if self.snap.jobs.min_sub_jobs[j.idx()].is_empty() {
            return true;
        }
        let counts = self.sub_jobs_per_gid(j, cond);
        self.snap.jobs.min_sub_jobs[j.idx()]
            .iter()
            .all(|(g, &min)| min <= 0 || counts.get(g.as_str()).copied().unwrap_or(0) >= min)
    }

    /// `CheckSubJobReady`.
    pub fn check_sub_job_ready(&self, j: JobId) -> bool {
        self.check_sub_job_condition(j, |s| self.sub_job_is_ready(s))
    }

    /// `CheckSubJobPipelined`.
    pub fn check_sub_job_pipelined(&self, j: JobId) -> bool {
        self.check_sub_job_condition(j, |s| self.sub_job_is_pipelined(s))
    }

    /// Hard topology mode with a tier limit: the limit.
    pub fn hard_tier(t: &Option<NetworkTopology>) -> Option<i32> {
        match t {
            Some(nt) if nt.mode == crate::snapshot::TopologyMode::Hard => nt.highest_tier_allowed,
            _ => None,
        }
    }

    /// `ContainsHardTopology`: the job or one of its sub-jobs is hard.
    pub fn job_contains_hard_topology(&self, j: JobId) -> bool {
        Self::hard_tier(&self.jobs.topology[j]).is_some()
            || self.snap.jobs.sub_jobs[j.idx()]
                .iter()
                .any(|s| Self::hard_tier(&self.sub_jobs.topology[s]).is_some())
    }

    /// `ContainsNetworkTopology`: the job or one of its sub-jobs has a topology.
    pub fn job_contains_network_topology(&self, j: JobId) -> bool {
        self.jobs.topology[j].is_some()
            || self.snap.jobs.sub_jobs[j.idx()]
                .iter()
                .any(|s| self.sub_jobs.topology[s].is_some())
    }

    // ---- events -----------------------------------------------------------------------------

    /// Records an event (plugins may call this from their read-only hooks).
    pub fn record_event(&self, e: Event) {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e);
    }

    /// Runs `search`, recording how long it took as one call of `stage`.
    pub fn timed<R>(&self, stage: SearchStage, search: impl FnOnce() -> R) -> R {
        let started = Instant::now();
        let result = search();
        let took = started.elapsed();
        self.search_timings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .record(stage, took);
        result
    }

    /// Takes the recorded node-search timings.
    pub fn take_search_timings(&mut self) -> SearchTimings {
        std::mem::take(
            self.search_timings
                .get_mut()
                .unwrap_or_else(|p| p.into_inner()),
        )
    }

    /// Takes the recorded events.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(self.events.get_mut().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::SessionState;
    use crate::api::{PodGroup, PodGroupCondition};
    use crate::framework::Session;
    use crate::harness::Harness;
    use crate::model::{Dim, JobId, NodeId, ResourceName, SubJobId, TaskStatus};

    #[test]
    fn pending_best_effort_tasks_are_counted_as_their_status_changes() {
        let mut ssn = Harness::new("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n")
            .queue("q", 1)
            .node("n1", "2", "4Gi", &[])
            .pod_group("ns", "pg", "q", 2)
            .pod("ns", "be", "pg", "0", "0")
            .pod("ns", "cpu", "pg", "1", "1Gi")
            .open()
            .unwrap();
        let (job, sub_job) = (JobId(0), SubJobId(0));
        let be = ssn.state.snap.task_id("ns/be").unwrap();
        let cpu = ssn.state.snap.task_id("ns/cpu").unwrap();
        let st = &mut ssn.state;
        assert_eq!(st.pending_best_effort_task_num(job), 1);
        assert!(!st.job_is_ready(job));
        st.set_task_status(cpu, TaskStatus::Allocated);
        assert!(st.job_is_ready(job) && st.sub_job_is_ready(sub_job));
        st.set_task_status(be, TaskStatus::Allocated);
        assert_eq!(st.pending_best_effort_task_num(job), 0);
        assert!(st.job_is_ready(job));
        st.set_task_status(cpu, TaskStatus::Pending);
        assert!(!st.job_is_ready(job) && !st.sub_job_is_ready(sub_job));
        st.set_task_status(be, TaskStatus::Pending);
        assert_eq!(st.pending_best_effort_task_num(job), 1);
        assert!(!st.sub_job_is_ready(sub_job));
    }

    #[test]
    fn future_idle_is_idle_plus_releasing_minus_pipelined_and_the_idle_column_when_both_are_nothing()
     {
        let mut ssn = Harness::new("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n")
            .queue("q", 1)
            .node("n1", "4", "8Gi", &[])
            .open()
            .unwrap();
        let (st, n) = (&mut ssn.state, NodeId(0));
        assert!(matches!(st.future_idle(n), Cow::Borrowed(_)));
        assert_eq!(st.future_idle(n).milli_cpu, 4000.0);
        let gpu = Dim::of("nvidia.com/gpu");
        st.nodes.releasing.get_mut(n).set(ResourceName::Cpu, 1000.0);
        st.nodes.releasing.get_mut(n).set_scalar(gpu, 0.0);
        st.nodes.pipelined.get_mut(n).set(ResourceName::Cpu, 500.0);
        let future = st.future_idle(n);
        assert!(matches!(future, Cow::Owned(_)));
        assert_eq!(future.milli_cpu, 4500.0);
        assert_eq!(future.scalar(gpu), Some(0.0));
    }

    /// A condition of `type_` with `message`, set in the session `transition`.
    fn condition(type_: &'static str, message: &str, transition: &str) -> PodGroupCondition {
        PodGroupCondition {
            type_: type_.into(),
            message: message.into(),
            transition_id: transition.into(),
            ..Default::default()
        }
    }

    /// A Running PodGroup with `conditions`.
    fn running_pod_group(conditions: Vec<PodGroupCondition>) -> PodGroup {
        let mut pg: PodGroup = Harness::parse(
            "metadata: {name: pg, namespace: ns}\nspec: {queue: q, minMember: 1}\nstatus: {phase: Running}",
        );
        pg.status.conditions = conditions;
        pg
    }

    /// A session of gang over the one job of `pg`.
    fn gang_session(pg: &PodGroup) -> Session {
        Harness::new("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n")
            .queue("q", 1)
            .pod_group_object(pg.clone())
            .open()
            .unwrap()
    }

    #[test]
    fn a_set_condition_replaces_the_first_of_its_type_and_untouched_jobs_keep_the_podgroups() {
        let cond = |type_, message| condition(type_, message, "");
        let pg = running_pod_group(vec![
            cond("Scheduled", "old"),
            cond("Unschedulable", "u"),
            cond("Scheduled", "second"),
        ]);
        let mut ssn = gang_session(&pg);
        let (st, j) = (&mut ssn.state, JobId(0));
        assert_eq!(st.job_phase(j), "Running");
        assert_eq!(st.job_conditions(j), pg.status.conditions.as_slice());
        let replaced = st.job_conditions_with(j, cond("Scheduled", "new"));
        let messages: Vec<&str> = replaced.list().iter().map(|c| c.message.as_str()).collect();
        assert_eq!(messages, ["new", "u", "second"]);
        let appended = st.job_conditions_with(j, cond("Other", "o"));
        assert_eq!(appended.list().len(), 4);
        assert_eq!(appended.list()[3].message, "o");
        st.set_job_conditions(replaced.clone());
        st.set_job_phase(j, "Inqueue");
        assert_eq!(
            (st.job_conditions(j), st.job_phase(j)),
            (replaced.list(), "Inqueue")
        );
        assert_eq!(st.take_job_conditions(), vec![replaced]);
    }

    #[test]
    fn set_conditions_know_whether_they_still_equal_the_podgroups_apart_from_transitions() {
        let pg = running_pod_group(vec![
            condition("Scheduled", "ready", "cycle-1"),
            condition("Other", "o", ""),
        ]);
        let j = JobId(0);
        let mut untouched = gang_session(&pg);
        let kept = untouched.state.take_job_conditions();
        assert_eq!(kept[0].list(), pg.status.conditions.as_slice());
        assert!(kept[0].unchanged(), "a job the session set nothing on");
        let mut ssn = gang_session(&pg);
        let st = &mut ssn.state;
        let same = |st: &SessionState, message: &str| {
            st.job_conditions_with(j, condition("Scheduled", message, "cycle-2"))
                .unchanged()
        };
        assert!(same(st, "ready"), "only the transition ID differs");
        assert!(!same(st, "not ready"));
        assert!(
            !st.job_conditions_with(j, condition("New", "", ""))
                .unchanged()
        );
        st.set_job_conditions(st.job_conditions_with(j, condition("Scheduled", "not ready", "c")));
        assert!(
            !same(st, "not ready"),
            "set conditions differ from the PodGroup's"
        );
        assert!(same(st, "ready"), "set back to the PodGroup's");
        assert!(!st.take_job_conditions()[0].unchanged());
    }
}
