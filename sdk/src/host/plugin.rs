//! A library's plugin run as an engine plugin. Every call lends the session, collects the
//! answer, and maps it back to engine types. A plugin that panics is disabled for the rest of
//! its session (one cycle) with one log line; while disabled it answers like a plugin that
//! registers nothing, so the cycle goes on without it.

use std::cmp::Ordering;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering as Atomic};

use tephra_engine::framework::{
    EvictionContext, EvictionKind, FitError, JobInvalid, Plugin, SearchPurpose, SessionState,
    Status as FitStatus, StatusCode, Vote,
};
use tephra_engine::model::{HyperNodeId, JobId, NodeId, QueueId, SubJobId, TaskId};

use super::PluginLibrary;
use super::session::lend;
use super::texts::{IdLists, Texts};
use crate::abi::{
    self, FAILED, Instance, NOT_REGISTERED, OK, PANICKED, PluginVTable, Status, TextOut, Tri,
    eviction_kind, fit_code, purpose,
};

/// One instance of a library's plugin, for one session.
pub(super) struct ExternalPlugin {
    library: Arc<PluginLibrary>,
    name: String,
    instance: Instance,
    disabled: AtomicBool,
}

// SAFETY: instances are the SDK's `Box<dyn sdk::Plugin>`, which is `Send + Sync`; `&self` points
// only ever take a shared reference inside the library.
unsafe impl Send for ExternalPlugin {}
// SAFETY: as for `Send`.
unsafe impl Sync for ExternalPlugin {}

impl Drop for ExternalPlugin {
    fn drop(&mut self) {
        // SAFETY: the instance came from this library's `build` and is dropped once, here.
        unsafe { (self.vtable().drop)(self.instance) };
    }
}

/// An answer that came back (the call did not panic and the plugin is enabled).
struct Reply {
    status: Status,
    texts: Texts,
}

impl Reply {
    fn registered(&self) -> bool {
        self.status != NOT_REGISTERED
    }
}

fn ordering(t: Tri) -> Ordering {
    t.cmp(&0)
}

fn vote(t: Tri) -> Vote {
    match t.signum() {
        1 => Vote::Permit,
        -1 => Vote::Reject,
        _ => Vote::Abstain,
    }
}

fn status_code(code: u32) -> StatusCode {
    match code {
        fit_code::UNSCHEDULABLE => StatusCode::Unschedulable,
        fit_code::UNSCHEDULABLE_AND_UNRESOLVABLE => StatusCode::UnschedulableAndUnresolvable,
        fit_code::WAIT => StatusCode::Wait,
        fit_code::SKIP => StatusCode::Skip,
        _ => StatusCode::Error,
    }
}

fn purpose_code(p: SearchPurpose) -> u32 {
    match p {
        SearchPurpose::Allocate => purpose::ALLOCATE,
        SearchPurpose::Evict => purpose::EVICT,
    }
}

fn raw<T>(ids: &[T], id: impl Fn(&T) -> u32) -> Vec<u32> {
    ids.iter().map(id).collect()
}

impl ExternalPlugin {
    pub(super) fn new(library: Arc<PluginLibrary>, name: String, instance: Instance) -> Self {
        ExternalPlugin {
            library,
            name,
            instance,
            disabled: AtomicBool::new(false),
        }
    }

    fn vtable(&self) -> &PluginVTable {
        &self.library.exports().vtable
    }

    /// Calls into the library unless the plugin is disabled. `None` when disabled or when the
    /// call panicked (which disables the plugin and logs why).
    fn call(
        &self,
        point: &str,
        ssn: &SessionState,
        f: impl FnOnce(&PluginVTable, Instance, &abi::Session, &TextOut) -> Status,
    ) -> Option<Reply> {
        if self.disabled.load(Atomic::Relaxed) {
            return None;
        }
        let session = lend(ssn);
        let mut texts = Texts::default();
        let status = f(self.vtable(), self.instance, &session, &texts.out());
        if status == PANICKED {
            self.disable(point, texts.get(0));
            return None;
        }
        Some(Reply { status, texts })
    }

    fn disable(&self, point: &str, message: &str) {
        if !self.disabled.swap(true, Atomic::Relaxed) {
            eprintln!(
                "tephra: plugin {} ({}) panicked in {point}: {message}; disabled for the rest of this cycle",
                self.name,
                self.library.origin()
            );
        }
    }

    fn order(
        &self,
        point: &str,
        ssn: &SessionState,
        f: impl FnOnce(&PluginVTable, Instance, &abi::Session, &mut Tri, &TextOut) -> Status,
    ) -> Ordering {
        let mut out = 0;
        match self.call(point, ssn, |v, i, s, m| f(v, i, s, &mut out, m)) {
            Some(r) if r.status == OK => ordering(out),
            _ => Ordering::Equal,
        }
    }

    fn vote(
        &self,
        point: &str,
        ssn: &SessionState,
        f: impl FnOnce(&PluginVTable, Instance, &abi::Session, &mut Tri, &TextOut) -> Status,
    ) -> Vote {
        let mut out = 0;
        match self.call(point, ssn, |v, i, s, m| f(v, i, s, &mut out, m)) {
            Some(r) if r.status == OK => vote(out),
            _ => Vote::Abstain,
        }
    }

    fn flag(
        &self,
        point: &str,
        ssn: &SessionState,
        f: impl FnOnce(&PluginVTable, Instance, &abi::Session, &mut u8, &TextOut) -> Status,
    ) -> Option<bool> {
        let mut out = 0;
        match self.call(point, ssn, |v, i, s, m| f(v, i, s, &mut out, m)) {
            Some(r) if r.status == OK => Some(out != 0),
            _ => None,
        }
    }

    /// An error the plugin returned (event handlers, dry-run steps); none when disabled.
    fn outcome(reply: Option<Reply>) -> Result<(), String> {
        match reply {
            Some(r) if r.status == FAILED => Err(r.texts.get(0).to_string()),
            _ => Ok(()),
        }
    }

    fn fit(reply: Option<Reply>) -> Result<(), FitError> {
        match reply {
            Some(r) if r.status == FAILED => Err(FitError {
                statuses: r
                    .texts
                    .0
                    .into_iter()
                    .map(|(code, reason)| FitStatus {
                        code: status_code(code),
                        reason: reason.into(),
                    })
                    .collect(),
            }),
            _ => Ok(()),
        }
    }

    fn tasks(
        &self,
        point: &str,
        ssn: &SessionState,
        f: impl FnOnce(&PluginVTable, Instance, &abi::Session, &abi::IdsOut, &TextOut) -> Status,
    ) -> Option<Vec<TaskId>> {
        let mut lists = IdLists::default();
        let reply = self.call(point, ssn, |v, i, s, m| f(v, i, s, &lists.out(), m))?;
        reply
            .registered()
            .then(|| lists.0.into_iter().flatten().map(TaskId).collect())
    }

    fn gradient(
        &self,
        point: &str,
        ssn: &SessionState,
        f: impl FnOnce(&PluginVTable, Instance, &abi::Session, &abi::IdsOut, &TextOut) -> Status,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        let mut lists = IdLists::default();
        let reply = self.call(point, ssn, |v, i, s, m| f(v, i, s, &lists.out(), m))?;
        reply.registered().then(|| {
            lists
                .0
                .into_iter()
                .map(|g| g.into_iter().map(HyperNodeId).collect())
                .collect()
        })
    }
}

/// Calls function `$f` of the library's vtable `$v` (as `call` and its wrappers lend it).
macro_rules! library_call {
    ($v:ident . $f:ident ( $($arg:expr),* $(,)? )) => {
        // SAFETY: `call` lends this library's own vtable, an instance its `build` made and `drop`
        // has not freed (the `&mut self` points hold it exclusively), and a session and `TextOut`
        // valid for the call; ids, slices and buffers are the host's for the call's duration.
        unsafe { ($v.$f)($($arg),*) }
    };
}

impl Plugin for ExternalPlugin {
    fn name(&self) -> &str {
        &self.name
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        self.call("on_session_open", ssn, |v, i, s, m| {
            library_call!(v.on_session_open(i, s, m))
        });
    }

    fn on_session_close(&mut self, ssn: &mut SessionState) {
        self.call("on_session_close", ssn, |v, i, s, m| {
            library_call!(v.on_session_close(i, s, m))
        });
    }

    fn job_order(&self, ssn: &SessionState, l: JobId, r: JobId) -> Ordering {
        self.order("job_order", ssn, |v, i, s, o, m| {
            library_call!(v.job_order(i, s, l.0, r.0, o, m))
        })
    }

    fn sub_job_order(&self, ssn: &SessionState, l: SubJobId, r: SubJobId) -> Ordering {
        self.order("sub_job_order", ssn, |v, i, s, o, m| {
            library_call!(v.sub_job_order(i, s, l.0, r.0, o, m))
        })
    }

    fn task_order(&self, ssn: &SessionState, l: TaskId, r: TaskId) -> Ordering {
        self.order("task_order", ssn, |v, i, s, o, m| {
            library_call!(v.task_order(i, s, l.0, r.0, o, m))
        })
    }

    fn queue_order(&self, ssn: &SessionState, l: QueueId, r: QueueId) -> Ordering {
        self.order("queue_order", ssn, |v, i, s, o, m| {
            library_call!(v.queue_order(i, s, l.0, r.0, o, m))
        })
    }

    fn victim_queue_order(
        &self,
        ssn: &SessionState,
        l: QueueId,
        r: QueueId,
        preemptor: QueueId,
    ) -> Ordering {
        self.order("victim_queue_order", ssn, |v, i, s, o, m| {
            library_call!(v.victim_queue_order(i, s, l.0, r.0, preemptor.0, o, m))
        })
    }

    fn pre_predicate(&self, ssn: &SessionState, task: TaskId) -> Result<(), FitError> {
        Self::fit(self.call("pre_predicate", ssn, |v, i, s, m| {
            library_call!(v.pre_predicate(i, s, task.0, m))
        }))
    }

    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        Self::fit(self.call("predicate", ssn, |v, i, s, m| {
            library_call!(v.predicate(i, s, task.0, node.0, m))
        }))
    }

    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        let mut score = 0.0;
        let r = self.call("node_order", ssn, |v, i, s, m| {
            library_call!(v.node_order(i, s, task.0, node.0, &mut score, m))
        })?;
        match r.status {
            OK => Some(Ok(score)),
            FAILED => Some(Err(r.texts.get(0).to_string())),
            _ => None,
        }
    }

    fn batch_node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Option<Result<Vec<f64>, String>> {
        let ids = raw(nodes, |n| n.0);
        let mut scores = vec![0.0; ids.len()];
        let r = self.call("batch_node_order", ssn, |v, i, s, m| {
            library_call!(v.batch_node_order(
                i,
                s,
                task.0,
                ids.as_ptr(),
                ids.len(),
                scores.as_mut_ptr(),
                m,
            ))
        })?;
        match r.status {
            OK => Some(Ok(scores)),
            FAILED => Some(Err(r.texts.get(0).to_string())),
            _ => None,
        }
    }

    fn best_node(
        &self,
        ssn: &SessionState,
        task: TaskId,
        scores: &[(NodeId, f64)],
    ) -> Option<NodeId> {
        let ids = raw(scores, |(n, _)| n.0);
        let values: Vec<f64> = scores.iter().map(|(_, s)| *s).collect();
        let mut chosen = abi::NO_ID;
        let r = self.call("best_node", ssn, |v, i, s, m| {
            library_call!(v.best_node(
                i,
                s,
                task.0,
                ids.as_ptr(),
                values.as_ptr(),
                ids.len(),
                &mut chosen,
                m,
            ))
        })?;
        (r.status == OK && chosen != abi::NO_ID).then_some(NodeId(chosen))
    }

    fn job_valid(&self, ssn: &SessionState, job: JobId) -> Option<JobInvalid> {
        let r = self.call("job_valid", ssn, |v, i, s, m| {
            library_call!(v.job_valid(i, s, job.0, m))
        })?;
        (r.status == FAILED).then(|| JobInvalid {
            reason: r.texts.get(0).to_string(),
            message: r.texts.get(1).to_string(),
        })
    }

    fn job_ready(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        self.flag("job_ready", ssn, |v, i, s, o, m| {
            library_call!(v.job_ready(i, s, job.0, o, m))
        })
    }

    fn sub_job_ready(&self, ssn: &SessionState, job: JobId, sub_job: SubJobId) -> Option<bool> {
        self.flag("sub_job_ready", ssn, |v, i, s, o, m| {
            library_call!(v.sub_job_ready(i, s, job.0, sub_job.0, o, m))
        })
    }

    fn job_pipelined(&self, ssn: &SessionState, job: JobId) -> Vote {
        self.vote("job_pipelined", ssn, |v, i, s, o, m| {
            library_call!(v.job_pipelined(i, s, job.0, o, m))
        })
    }

    fn sub_job_pipelined(&self, ssn: &SessionState, job: JobId, sub_job: SubJobId) -> Vote {
        self.vote("sub_job_pipelined", ssn, |v, i, s, o, m| {
            library_call!(v.sub_job_pipelined(i, s, job.0, sub_job.0, o, m))
        })
    }

    fn job_enqueueable(&self, ssn: &SessionState, job: JobId) -> Vote {
        self.vote("job_enqueueable", ssn, |v, i, s, o, m| {
            library_call!(v.job_enqueueable(i, s, job.0, o, m))
        })
    }

    fn job_enqueued(&mut self, ssn: &SessionState, job: JobId) {
        self.call("job_enqueued", ssn, |v, i, s, m| {
            library_call!(v.job_enqueued(i, s, job.0, m))
        });
    }

    fn job_starving(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        self.flag("job_starving", ssn, |v, i, s, o, m| {
            library_call!(v.job_starving(i, s, job.0, o, m))
        })
    }

    fn preemptable(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        let ids = raw(candidates, |t| t.0);
        self.tasks("preemptable", ssn, |v, i, s, o, m| {
            library_call!(v.preemptable(i, s, preemptor.0, ids.as_ptr(), ids.len(), o, m))
        })
    }

    fn reclaimable(
        &self,
        ssn: &SessionState,
        reclaimer: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        let ids = raw(candidates, |t| t.0);
        self.tasks("reclaimable", ssn, |v, i, s, o, m| {
            library_call!(v.reclaimable(i, s, reclaimer.0, ids.as_ptr(), ids.len(), o, m))
        })
    }

    fn unified_evictable(
        &self,
        ssn: &SessionState,
        ctx: &EvictionContext,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        let ids = raw(candidates, |t| t.0);
        let kind = match ctx.kind {
            EvictionKind::GangPreempt => eviction_kind::GANG_PREEMPT,
            EvictionKind::GangReclaim => eviction_kind::GANG_RECLAIM,
        };
        self.tasks("unified_evictable", ssn, |v, i, s, o, m| {
            library_call!(v.unified_evictable(i, s, kind, ctx.job.0, ids.as_ptr(), ids.len(), o, m))
        })
    }

    fn victim_tasks(&self, ssn: &SessionState, tasks: &[TaskId]) -> Option<Vec<TaskId>> {
        let ids = raw(tasks, |t| t.0);
        self.tasks("victim_tasks", ssn, |v, i, s, o, m| {
            library_call!(v.victim_tasks(i, s, ids.as_ptr(), ids.len(), o, m))
        })
    }

    fn allocatable(&self, ssn: &SessionState, queue: QueueId, task: TaskId) -> Option<bool> {
        self.flag("allocatable", ssn, |v, i, s, o, m| {
            library_call!(v.allocatable(i, s, queue.0, task.0, o, m))
        })
    }

    fn overused(&self, ssn: &SessionState, queue: QueueId) -> Option<bool> {
        self.flag("overused", ssn, |v, i, s, o, m| {
            library_call!(v.overused(i, s, queue.0, o, m))
        })
    }

    fn preemptive(&self, ssn: &SessionState, queue: QueueId, tasks: &[TaskId]) -> Option<bool> {
        let ids = raw(tasks, |t| t.0);
        self.flag("preemptive", ssn, |v, i, s, o, m| {
            library_call!(v.preemptive(i, s, queue.0, ids.as_ptr(), ids.len(), o, m))
        })
    }

    fn hyper_node_order(
        &self,
        ssn: &SessionState,
        sub_job: SubJobId,
        hyper_nodes: &[HyperNodeId],
    ) -> Option<Vec<f64>> {
        let ids = raw(hyper_nodes, |h| h.0);
        let mut scores = vec![0.0; ids.len()];
        let r = self.call("hyper_node_order", ssn, |v, i, s, m| {
            library_call!(v.hyper_node_order(
                i,
                s,
                sub_job.0,
                ids.as_ptr(),
                ids.len(),
                scores.as_mut_ptr(),
                m,
            ))
        })?;
        (r.status == OK).then_some(scores)
    }

    fn hyper_node_gradient_for_job(
        &self,
        ssn: &SessionState,
        job: JobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        let p = purpose_code(purpose);
        self.gradient("hyper_node_gradient_for_job", ssn, |v, i, s, o, m| {
            library_call!(v.hyper_node_gradient_for_job(i, s, job.0, hn.0, p, o, m))
        })
    }

    fn hyper_node_gradient_for_sub_job(
        &self,
        ssn: &SessionState,
        sub_job: SubJobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        let p = purpose_code(purpose);
        self.gradient("hyper_node_gradient_for_sub_job", ssn, |v, i, s, o, m| {
            library_call!(v.hyper_node_gradient_for_sub_job(i, s, sub_job.0, hn.0, p, o, m))
        })
    }

    fn simulation_begin(&self, ssn: &SessionState, preemptor: TaskId) {
        self.call("simulation_begin", ssn, |v, i, s, m| {
            library_call!(v.simulation_begin(i, s, preemptor.0, m))
        });
    }

    fn simulate_remove_task(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        task: TaskId,
    ) -> Result<(), String> {
        Self::outcome(self.call("simulate_remove_task", ssn, |v, i, s, m| {
            library_call!(v.simulate_remove_task(i, s, preemptor.0, task.0, m))
        }))
    }

    fn simulate_add_task(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        task: TaskId,
    ) -> Result<(), String> {
        Self::outcome(self.call("simulate_add_task", ssn, |v, i, s, m| {
            library_call!(v.simulate_add_task(i, s, preemptor.0, task.0, m))
        }))
    }

    fn simulation_end(&self, ssn: &SessionState, preemptor: TaskId) {
        self.call("simulation_end", ssn, |v, i, s, m| {
            library_call!(v.simulation_end(i, s, preemptor.0, m))
        });
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        Self::outcome(self.call("on_allocate", ssn, |v, i, s, m| {
            library_call!(v.on_allocate(i, s, task.0, m))
        }))
    }

    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        self.call("on_deallocate", ssn, |v, i, s, m| {
            library_call!(v.on_deallocate(i, s, task.0, m))
        });
    }
}
