//! The plugin trait of the SDK: the engine's `Plugin`, point for point, reading the session
//! through `SessionView` so the same code runs linked in or loaded from a library.

use std::cmp::Ordering;

use tephra_engine::config::{ArgumentError, Arguments};
use tephra_engine::framework::{EvictionContext, FitError, JobInvalid, SearchPurpose, Vote};
use tephra_engine::model::{HyperNodeId, JobId, NodeId, QueueId, SubJobId, TaskId};

use crate::SessionView;

/// A scheduling plugin written against the SDK. Each method is the engine `Plugin` method of
/// the same name (see `docs/plugins.md` for when each is called and how answers combine);
/// every one but `name` has a default that stays out of the decision, and `None` means "this
/// plugin does not register the point".
#[allow(
    unused_variables,
    reason = "the default methods name the arguments a plugin's own version reads"
)]
pub trait Plugin: Send + Sync {
    /// The name configured in the tiers.
    fn name(&self) -> &str;

    /// Once when the session opens: precompute per-session state here.
    fn on_session_open(&mut self, ssn: &SessionView) {}
    /// Once when the session closes.
    fn on_session_close(&mut self, ssn: &SessionView) {}

    /// JobOrder: `Less` = `l` first.
    fn job_order(&self, ssn: &SessionView, l: JobId, r: JobId) -> Ordering {
        Ordering::Equal
    }
    /// SubJobOrder.
    fn sub_job_order(&self, ssn: &SessionView, l: SubJobId, r: SubJobId) -> Ordering {
        Ordering::Equal
    }
    /// TaskOrder.
    fn task_order(&self, ssn: &SessionView, l: TaskId, r: TaskId) -> Ordering {
        Ordering::Equal
    }
    /// QueueOrder.
    fn queue_order(&self, ssn: &SessionView, l: QueueId, r: QueueId) -> Ordering {
        Ordering::Equal
    }
    /// VictimQueueOrder.
    fn victim_queue_order(
        &self,
        ssn: &SessionView,
        l: QueueId,
        r: QueueId,
        preemptor: QueueId,
    ) -> Ordering {
        Ordering::Equal
    }

    /// PrePredicate: checks on the task alone.
    fn pre_predicate(&self, ssn: &SessionView, task: TaskId) -> Result<(), FitError> {
        Ok(())
    }
    /// Predicate: may `task` go to `node`.
    fn predicate(&self, ssn: &SessionView, task: TaskId, node: NodeId) -> Result<(), FitError> {
        Ok(())
    }
    /// NodeOrder: a score for one node.
    fn node_order(
        &self,
        ssn: &SessionView,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        None
    }
    /// BatchNodeOrder: one score per node of `nodes`, same order.
    fn batch_node_order(
        &self,
        ssn: &SessionView,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Option<Result<Vec<f64>, String>> {
        None
    }
    /// BestNode: pick a node from the scored candidates.
    fn best_node(
        &self,
        ssn: &SessionView,
        task: TaskId,
        scores: &[(NodeId, f64)],
    ) -> Option<NodeId> {
        None
    }

    /// JobValid: `Some` when the job must not be scheduled.
    fn job_valid(&self, ssn: &SessionView, job: JobId) -> Option<JobInvalid> {
        None
    }
    /// JobReady.
    fn job_ready(&self, ssn: &SessionView, job: JobId) -> Option<bool> {
        None
    }
    /// SubJobReady.
    fn sub_job_ready(&self, ssn: &SessionView, job: JobId, sub_job: SubJobId) -> Option<bool> {
        None
    }
    /// JobPipelined vote.
    fn job_pipelined(&self, ssn: &SessionView, job: JobId) -> Vote {
        Vote::Abstain
    }
    /// SubJobPipelined vote.
    fn sub_job_pipelined(&self, ssn: &SessionView, job: JobId, sub_job: SubJobId) -> Vote {
        Vote::Abstain
    }
    /// JobEnqueueable vote.
    fn job_enqueueable(&self, ssn: &SessionView, job: JobId) -> Vote {
        Vote::Abstain
    }
    /// JobEnqueued: the job was admitted.
    fn job_enqueued(&mut self, ssn: &SessionView, job: JobId) {}
    /// JobStarving.
    fn job_starving(&self, ssn: &SessionView, job: JobId) -> Option<bool> {
        None
    }

    /// Preemptable: which of `candidates` `preemptor` may evict.
    fn preemptable(
        &self,
        ssn: &SessionView,
        preemptor: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        None
    }
    /// Reclaimable: which of `candidates` `reclaimer` may evict.
    fn reclaimable(
        &self,
        ssn: &SessionView,
        reclaimer: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        None
    }
    /// UnifiedEvictable: which of `candidates` the gang-aware eviction `ctx` may take.
    fn unified_evictable(
        &self,
        ssn: &SessionView,
        ctx: &EvictionContext,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        None
    }
    /// VictimTasks: tasks this plugin wants evicted.
    fn victim_tasks(&self, ssn: &SessionView, tasks: &[TaskId]) -> Option<Vec<TaskId>> {
        None
    }

    /// Allocatable: may `task` be allocated from `queue` now.
    fn allocatable(&self, ssn: &SessionView, queue: QueueId, task: TaskId) -> Option<bool> {
        None
    }
    /// Overused: is the queue over its share.
    fn overused(&self, ssn: &SessionView, queue: QueueId) -> Option<bool> {
        None
    }
    /// Preemptive: may the queue take resources for `tasks` (together) by eviction.
    fn preemptive(&self, ssn: &SessionView, queue: QueueId, tasks: &[TaskId]) -> Option<bool> {
        None
    }

    /// HyperNodeOrder: one score per hyper-node of `hyper_nodes` for a sub-job.
    fn hyper_node_order(
        &self,
        ssn: &SessionView,
        sub_job: SubJobId,
        hyper_nodes: &[HyperNodeId],
    ) -> Option<Vec<f64>> {
        None
    }
    /// HyperNodeGradientForJob: groups of hyper-nodes under `hn` to try, in order, for
    /// `purpose`.
    fn hyper_node_gradient_for_job(
        &self,
        ssn: &SessionView,
        job: JobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        None
    }
    /// HyperNodeGradientForSubJob.
    fn hyper_node_gradient_for_sub_job(
        &self,
        ssn: &SessionView,
        sub_job: SubJobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        None
    }

    /// Preemption dry run begins for `preemptor`.
    fn simulation_begin(&self, ssn: &SessionView, preemptor: TaskId) {}
    /// Preemption dry run: `task` is taken off its node in `preemptor`'s simulated view.
    fn simulate_remove_task(
        &self,
        ssn: &SessionView,
        preemptor: TaskId,
        task: TaskId,
    ) -> Result<(), String> {
        Ok(())
    }
    /// Preemption dry run: `task` is put back on its node in `preemptor`'s simulated view.
    fn simulate_add_task(
        &self,
        ssn: &SessionView,
        preemptor: TaskId,
        task: TaskId,
    ) -> Result<(), String> {
        Ok(())
    }
    /// Preemption dry run for `preemptor` ends.
    fn simulation_end(&self, ssn: &SessionView, preemptor: TaskId) {}

    /// Event handler: `task` was allocated or pipelined. An error rolls the operation back.
    fn on_allocate(&mut self, ssn: &SessionView, task: TaskId) -> Result<(), String> {
        Ok(())
    }
    /// Event handler: `task` was evicted, un-pipelined or un-allocated.
    fn on_deallocate(&mut self, ssn: &SessionView, task: TaskId) {}
}

/// Builds an SDK plugin from its arguments: what `export_plugins!` and `register_builtin` take.
pub type Builder = fn(&Arguments) -> Result<Box<dyn Plugin>, ArgumentError>;
