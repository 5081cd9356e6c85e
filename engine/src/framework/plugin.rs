//! The `Plugin` trait: one method per extension point, each with a neutral default.
//!
//! A method that returns `Option` answers `None` for "this plugin does not register this point";
//! that matters where Volcano's combination rule distinguishes a missing function from an empty
//! answer (victims, JobStarving, ...). Hooks take `&self` and a read-only `SessionState`, so the
//! framework may call them from several threads; only session open/close, `job_enqueued` and the
//! allocate/deallocate event handlers get `&mut self`.

use std::cmp::Ordering;
use std::sync::Arc;

use fixedbitset::FixedBitSet;

use super::{EvictionContext, FitError, JobInvalid, SearchPurpose, SessionState, Vote};

use crate::config::{ArgumentError, Arguments};
use crate::model::{HyperNodeId, JobId, NodeId, QueueId, SubJobId, TaskId};

/// A scheduling plugin. Every method but `name` has a default that stays out of the decision.
#[allow(
    unused_variables,
    reason = "the default methods name the arguments a plugin's own version reads"
)]
pub trait Plugin: Send + Sync {
    /// The name configured in the tiers.
    fn name(&self) -> &str;

    /// Called once when the session opens, in tier order: precompute per-session state here.
    fn on_session_open(&mut self, ssn: &SessionState) {}
    /// Called once when the session closes, before the job status updater runs.
    fn on_session_close(&mut self, ssn: &mut SessionState) {}

    /// JobOrder: `Less` = `l` first. First non-`Equal` answer across tiers wins.
    fn job_order(&self, ssn: &SessionState, l: JobId, r: JobId) -> Ordering {
        Ordering::Equal
    }
    /// SubJobOrder.
    fn sub_job_order(&self, ssn: &SessionState, l: SubJobId, r: SubJobId) -> Ordering {
        Ordering::Equal
    }
    /// TaskOrder.
    fn task_order(&self, ssn: &SessionState, l: TaskId, r: TaskId) -> Ordering {
        Ordering::Equal
    }
    /// QueueOrder.
    fn queue_order(&self, ssn: &SessionState, l: QueueId, r: QueueId) -> Ordering {
        Ordering::Equal
    }
    /// VictimQueueOrder: which queue's victims go first for `preemptor`'s queue.
    fn victim_queue_order(
        &self,
        ssn: &SessionState,
        l: QueueId,
        r: QueueId,
        preemptor: QueueId,
    ) -> Ordering {
        Ordering::Equal
    }

    /// PrePredicate: checks on the task alone.
    fn pre_predicate(&self, ssn: &SessionState, task: TaskId) -> Result<(), FitError> {
        Ok(())
    }
    /// Predicate: may `task` go to `node`.
    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        Ok(())
    }
    /// Predicate over a batch of nodes, one answer per node in order: a scan of many nodes asks
    /// in batches, so a plugin whose predicate reads shared state may read it once a batch
    /// (threads scanning together would otherwise contend on it node by node). Must answer
    /// exactly as `predicate` does node by node, which the default asks.
    fn predicate_nodes(
        &self,
        ssn: &SessionState,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Vec<Result<(), FitError>> {
        nodes
            .iter()
            .map(|&n| self.predicate(ssn, task, n))
            .collect()
    }
    /// NodeOrder: a score for one node (`None`: not registered).
    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        None
    }
    /// BatchNodeOrder: one score per node of `nodes`, same order (`None`: not registered).
    fn batch_node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Option<Result<Vec<f64>, String>> {
        None
    }
    /// BestNode: pick a node from the scored candidates.
    fn best_node(
        &self,
        ssn: &SessionState,
        task: TaskId,
        scores: &[(NodeId, f64)],
    ) -> Option<NodeId> {
        None
    }

    /// JobValid: `Some` when the job must not be scheduled.
    fn job_valid(&self, ssn: &SessionState, job: JobId) -> Option<JobInvalid> {
        None
    }
    /// JobReady.
    fn job_ready(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        None
    }
    /// SubJobReady.
    fn sub_job_ready(&self, ssn: &SessionState, job: JobId, sub_job: SubJobId) -> Option<bool> {
        None
    }
    /// JobPipelined vote.
    fn job_pipelined(&self, ssn: &SessionState, job: JobId) -> Vote {
        Vote::Abstain
    }
    /// SubJobPipelined vote.
    fn sub_job_pipelined(&self, ssn: &SessionState, job: JobId, sub_job: SubJobId) -> Vote {
        Vote::Abstain
    }
    /// JobEnqueueable vote.
    fn job_enqueueable(&self, ssn: &SessionState, job: JobId) -> Vote {
        Vote::Abstain
    }
    /// JobEnqueued: the job was admitted; book its resources.
    fn job_enqueued(&mut self, ssn: &SessionState, job: JobId) {}
    /// JobStarving.
    fn job_starving(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        None
    }

    /// Preemptable: which of `candidates` `preemptor` may evict.
    fn preemptable(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        None
    }
    /// Reclaimable: which of `candidates` `reclaimer` may evict.
    fn reclaimable(
        &self,
        ssn: &SessionState,
        reclaimer: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        None
    }
    /// UnifiedEvictable: which of `candidates` the gang-aware eviction described by `ctx` may
    /// take (candidates come in the order the action would evict them).
    fn unified_evictable(
        &self,
        ssn: &SessionState,
        ctx: &EvictionContext,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        None
    }
    /// VictimTasks: tasks this plugin wants evicted.
    fn victim_tasks(&self, ssn: &SessionState, tasks: &[TaskId]) -> Option<Vec<TaskId>> {
        None
    }

    /// Allocatable: may `task` be allocated from `queue` now.
    fn allocatable(&self, ssn: &SessionState, queue: QueueId, task: TaskId) -> Option<bool> {
        None
    }
    /// Overused: is the queue over its share.
    fn overused(&self, ssn: &SessionState, queue: QueueId) -> Option<bool> {
        None
    }
    /// Preemptive: may the queue take resources for `tasks` (together) by eviction.
    fn preemptive(&self, ssn: &SessionState, queue: QueueId, tasks: &[TaskId]) -> Option<bool> {
        None
    }

    /// HyperNodeOrder: one score per hyper-node of `hyper_nodes` for a sub-job.
    fn hyper_node_order(
        &self,
        ssn: &SessionState,
        sub_job: SubJobId,
        hyper_nodes: &[HyperNodeId],
    ) -> Option<Vec<f64>> {
        None
    }
    /// HyperNodeGradientForJob: groups of hyper-nodes under `hn` to try, in order, for
    /// `purpose`.
    fn hyper_node_gradient_for_job(
        &self,
        ssn: &SessionState,
        job: JobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        None
    }
    /// HyperNodeGradientForSubJob.
    fn hyper_node_gradient_for_sub_job(
        &self,
        ssn: &SessionState,
        sub_job: SubJobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        None
    }

    /// Whether this plugin's predicate and node scores for `task` are node-local: they depend
    /// only on the task's scheduling signature (requests, node selector, node affinity,
    /// tolerations, overhead, and per container its image, host ports, requests and restart
    /// policy: `snapshot::TaskSignature`) and on each node's own state, so a change on one node
    /// changes nothing on another. Then tasks of one signature share a cached node ranking
    /// (`actions::class_cache`), which the next session keeps for the nodes that did not
    /// change: the answers must not depend on anything else that may differ between sessions
    /// (the configuration aside). The safe default is `false`; plugins without predicate or
    /// score hooks answer `true`.
    fn node_local(&self, ssn: &SessionState, task: TaskId) -> bool {
        false
    }

    /// Nodes that can pass this plugin's predicate for `task` in this snapshot, from what a
    /// session never changes (labels, taints, schedulability): every node outside the set fails
    /// the predicate whatever the session does. A superset is fine; `None` (the default) says
    /// nothing. A class ranks only these nodes up front and works out the failures of the
    /// others when they are needed.
    fn static_feasible(&self, ssn: &SessionState, task: TaskId) -> Option<FixedBitSet> {
        None
    }

    /// Preemption dry run: `preemptor`'s simulated view starts here; `simulate_*_task` change
    /// it and `simulation_end` drops the changes (Volcano works on a copy of the cycle state).
    fn simulation_begin(&self, ssn: &SessionState, preemptor: TaskId) {}
    /// Preemption dry run: `task` is taken off its node in `preemptor`'s simulated view.
    fn simulate_remove_task(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        task: TaskId,
    ) -> Result<(), String> {
        Ok(())
    }
    /// Preemption dry run: `task` is put back on its node in `preemptor`'s simulated view.
    fn simulate_add_task(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        task: TaskId,
    ) -> Result<(), String> {
        Ok(())
    }
    /// Preemption dry run ends: `preemptor`'s view returns to what it was at `simulation_begin`.
    fn simulation_end(&self, ssn: &SessionState, preemptor: TaskId) {}

    /// Event handler: `task` was allocated or pipelined (or un-evicted). An error rolls the
    /// statement operation back.
    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        Ok(())
    }
    /// Event handler: `task` was evicted, un-pipelined or un-allocated.
    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {}
}

/// Builds a plugin from its arguments; a bad argument is refused. A shared closure rather than a
/// `fn` pointer so a builder can hold what it needs, such as the library an external plugin was
/// loaded from.
pub type PluginBuilder =
    Arc<dyn Fn(&Arguments) -> Result<Box<dyn Plugin>, ArgumentError> + Send + Sync>;
