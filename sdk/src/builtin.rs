//! Linking an SDK plugin in as a built-in: the engine calls it like any other plugin and it
//! reads the session state directly, with no ABI in between.

use std::cmp::Ordering;

use tephra_engine::config::{ArgumentError, Arguments};
use tephra_engine::framework::{
    EvictionContext, FitError, JobInvalid, Plugin, PluginRegistry, SearchPurpose, SessionState,
    Vote,
};
use tephra_engine::model::{HyperNodeId, JobId, NodeId, QueueId, SubJobId, TaskId};

use crate::{Builder, SessionView};

/// Registers an SDK plugin's builder under `name`, as a built-in.
pub fn register_builtin(registry: &mut PluginRegistry, name: &str, builder: Builder) {
    registry.register(name, linked(builder));
}

/// An SDK builder as an engine builder, e.g. for `Harness::with_plugin` in a plugin's tests.
pub fn linked(
    builder: Builder,
) -> impl Fn(&Arguments) -> Result<Box<dyn Plugin>, ArgumentError> + Send + Sync + 'static {
    move |args| Ok(Box::new(Linked(builder(args)?)) as Box<dyn Plugin>)
}

/// An SDK plugin seen as an engine plugin.
struct Linked(Box<dyn crate::Plugin>);

fn view(ssn: &SessionState) -> SessionView<'_> {
    SessionView::local(ssn)
}

impl Plugin for Linked {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn on_session_open(&mut self, ssn: &SessionState) {
        self.0.on_session_open(&view(ssn))
    }
    fn on_session_close(&mut self, ssn: &mut SessionState) {
        self.0.on_session_close(&view(ssn))
    }
    fn job_order(&self, ssn: &SessionState, l: JobId, r: JobId) -> Ordering {
        self.0.job_order(&view(ssn), l, r)
    }
    fn sub_job_order(&self, ssn: &SessionState, l: SubJobId, r: SubJobId) -> Ordering {
        self.0.sub_job_order(&view(ssn), l, r)
    }
    fn task_order(&self, ssn: &SessionState, l: TaskId, r: TaskId) -> Ordering {
        self.0.task_order(&view(ssn), l, r)
    }
    fn queue_order(&self, ssn: &SessionState, l: QueueId, r: QueueId) -> Ordering {
        self.0.queue_order(&view(ssn), l, r)
    }
    fn victim_queue_order(
        &self,
        ssn: &SessionState,
        l: QueueId,
        r: QueueId,
        preemptor: QueueId,
    ) -> Ordering {
        self.0.victim_queue_order(&view(ssn), l, r, preemptor)
    }
    fn pre_predicate(&self, ssn: &SessionState, task: TaskId) -> Result<(), FitError> {
        self.0.pre_predicate(&view(ssn), task)
    }
    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        self.0.predicate(&view(ssn), task, node)
    }
    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        self.0.node_order(&view(ssn), task, node)
    }
    fn batch_node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Option<Result<Vec<f64>, String>> {
        self.0.batch_node_order(&view(ssn), task, nodes)
    }
    fn best_node(
        &self,
        ssn: &SessionState,
        task: TaskId,
        scores: &[(NodeId, f64)],
    ) -> Option<NodeId> {
        self.0.best_node(&view(ssn), task, scores)
    }
    fn job_valid(&self, ssn: &SessionState, job: JobId) -> Option<JobInvalid> {
        self.0.job_valid(&view(ssn), job)
    }
    fn job_ready(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        self.0.job_ready(&view(ssn), job)
    }
    fn sub_job_ready(&self, ssn: &SessionState, job: JobId, sub_job: SubJobId) -> Option<bool> {
        self.0.sub_job_ready(&view(ssn), job, sub_job)
    }
    fn job_pipelined(&self, ssn: &SessionState, job: JobId) -> Vote {
        self.0.job_pipelined(&view(ssn), job)
    }
    fn sub_job_pipelined(&self, ssn: &SessionState, job: JobId, sub_job: SubJobId) -> Vote {
        self.0.sub_job_pipelined(&view(ssn), job, sub_job)
    }
    fn job_enqueueable(&self, ssn: &SessionState, job: JobId) -> Vote {
        self.0.job_enqueueable(&view(ssn), job)
    }
    fn job_enqueued(&mut self, ssn: &SessionState, job: JobId) {
        self.0.job_enqueued(&view(ssn), job)
    }
    fn job_starving(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        self.0.job_starving(&view(ssn), job)
    }
    fn preemptable(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        self.0.preemptable(&view(ssn), preemptor, candidates)
    }
    fn reclaimable(
        &self,
        ssn: &SessionState,
        reclaimer: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        self.0.reclaimable(&view(ssn), reclaimer, candidates)
    }
    fn unified_evictable(
        &self,
        ssn: &SessionState,
        ctx: &EvictionContext,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        self.0.unified_evictable(&view(ssn), ctx, candidates)
    }
    fn victim_tasks(&self, ssn: &SessionState, tasks: &[TaskId]) -> Option<Vec<TaskId>> {
        self.0.victim_tasks(&view(ssn), tasks)
    }
    fn allocatable(&self, ssn: &SessionState, queue: QueueId, task: TaskId) -> Option<bool> {
        self.0.allocatable(&view(ssn), queue, task)
    }
    fn overused(&self, ssn: &SessionState, queue: QueueId) -> Option<bool> {
        self.0.overused(&view(ssn), queue)
    }
    fn preemptive(&self, ssn: &SessionState, queue: QueueId, tasks: &[TaskId]) -> Option<bool> {
        self.0.preemptive(&view(ssn), queue, tasks)
    }
    fn hyper_node_order(
        &self,
        ssn: &SessionState,
        sub_job: SubJobId,
        hyper_nodes: &[HyperNodeId],
    ) -> Option<Vec<f64>> {
        self.0.hyper_node_order(&view(ssn), sub_job, hyper_nodes)
    }
    fn hyper_node_gradient_for_job(
        &self,
        ssn: &SessionState,
        job: JobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        self.0
            .hyper_node_gradient_for_job(&view(ssn), job, hn, purpose)
    }
    fn hyper_node_gradient_for_sub_job(
        &self,
        ssn: &SessionState,
        sub_job: SubJobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        self.0
            .hyper_node_gradient_for_sub_job(&view(ssn), sub_job, hn, purpose)
    }
    fn simulation_begin(&self, ssn: &SessionState, preemptor: TaskId) {
        self.0.simulation_begin(&view(ssn), preemptor)
    }
    fn simulate_remove_task(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        task: TaskId,
    ) -> Result<(), String> {
        self.0.simulate_remove_task(&view(ssn), preemptor, task)
    }
    fn simulate_add_task(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        task: TaskId,
    ) -> Result<(), String> {
        self.0.simulate_add_task(&view(ssn), preemptor, task)
    }
    fn simulation_end(&self, ssn: &SessionState, preemptor: TaskId) {
        self.0.simulation_end(&view(ssn), preemptor)
    }
    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        self.0.on_allocate(&view(ssn), task)
    }
    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        self.0.on_deallocate(&view(ssn), task)
    }
}
