//! `Statement`: a transaction over the session. Each operation is applied to the session at
//! once and recorded; `commit` turns allocations into binds and evictions into eviction
//! decisions, `discard` undoes the operations in reverse order.

use super::{EvictingAction, LastTransaction, Session};
use crate::model::{NodeId, TaskId, TaskStatus};

/// A recorded operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Allocate {
        task: TaskId,
        node: NodeId,
    },
    Pipeline {
        task: TaskId,
        node: NodeId,
        eviction_occurred: bool,
    },
    Evict {
        task: TaskId,
    },
}

impl Op {
    /// The task the operation is about.
    pub fn task(&self) -> TaskId {
        match *self {
            Op::Allocate { task, .. } | Op::Pipeline { task, .. } | Op::Evict { task } => task,
        }
    }
}

/// An ordered list of applied operations (Volcano's `Statement`).
#[derive(Debug, Default, Clone)]
pub struct Statement {
    ops: Vec<Op>,
    reasons: Vec<String>,
}

impl Statement {
    /// An empty statement.
    pub fn new() -> Self {
        Self::default()
    }

    /// The operations, in order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// True when some operation is an eviction.
    pub fn has_evictions(&self) -> bool {
        self.ops.iter().any(|o| matches!(o, Op::Evict { .. }))
    }

    /// Moves `other`'s operations to the end of this statement.
    pub fn merge(&mut self, other: &mut Statement) {
        self.ops.append(&mut other.ops);
        self.reasons.append(&mut other.reasons);
    }

    /// Allocate `task` on `node`: status Allocated, accounted on the node, allocate handlers.
    /// On any failure the session is restored and the error returned.
    pub fn allocate(
        &mut self,
        ssn: &mut Session,
        task: TaskId,
        node: NodeId,
    ) -> Result<(), String> {
        if ssn.state.job_of(task).is_none() {
            return Err(format!(
                "task {} has no job in the session",
                ssn.state.snap.tasks.key(task)
            ));
        }
        ssn.state.set_task_status(task, TaskStatus::Allocated);
        ssn.state.tasks.node.set(task, Some(node));
        if let Err(e) = ssn.state.node_add(node, task) {
            ssn.state.set_task_status(task, TaskStatus::Pending);
            ssn.state.tasks.node.set(task, None);
            return Err(e);
        }
        if let Err(e) = ssn.fire_allocate(task) {
            unplace(ssn, task);
            return Err(e);
        }
        self.ops.push(Op::Allocate { task, node });
        self.reasons.push(String::new());
        Ok(())
    }

    /// Pipeline `task` onto `node` (it will fit once releasing resources are freed).
    pub fn pipeline(
        &mut self,
        ssn: &mut Session,
        task: TaskId,
        node: NodeId,
        eviction_occurred: bool,
    ) -> Result<(), String> {
        ssn.state.set_task_status(task, TaskStatus::Pipelined);
        ssn.state.tasks.node.set(task, Some(node));
        ssn.state
            .tasks
            .eviction_occurred
            .set(task, eviction_occurred);
        if let Err(e) = ssn.state.node_add(node, task) {
            ssn.state.set_task_status(task, TaskStatus::Pending);
            ssn.state.tasks.node.set(task, None);
            return Err(e);
        }
        if let Err(e) = ssn.fire_allocate(task) {
            unplace(ssn, task);
            return Err(e);
        }
        self.ops.push(Op::Pipeline {
            task,
            node,
            eviction_occurred,
        });
        self.reasons.push(String::new());
        Ok(())
    }

    /// Evict `task`: status Releasing (its node now counts it as releasing), deallocate handlers.
    pub fn evict(&mut self, ssn: &mut Session, task: TaskId, reason: &str) -> Result<(), String> {
        let node = ssn.state.tasks.node[task]
            .ok_or_else(|| format!("task {} is on no node", ssn.state.snap.tasks.key(task)))?;
        ssn.state.set_task_status(task, TaskStatus::Releasing);
        ssn.state.node_update(node, task)?;
        ssn.fire_deallocate(task);
        self.ops.push(Op::Evict { task });
        self.reasons.push(reason.to_string());
        Ok(())
    }

    /// Un-pipeline one task now (backfill uses this for best-effort tasks).
    pub fn unpipeline(&mut self, ssn: &mut Session, task: TaskId) {
        unplace(ssn, task);
    }

    /// Undoes the operation on `task` alone (preemption dry runs give a victim back this way);
    /// false when the statement has none.
    pub fn undo(&mut self, ssn: &mut Session, task: TaskId) -> bool {
        let Some(i) = self.ops.iter().rposition(|o| o.task() == task) else {
            return false;
        };
        let op = self.ops.remove(i);
        self.reasons.remove(i);
        match op {
            Op::Allocate { .. } | Op::Pipeline { .. } => unplace(ssn, task),
            Op::Evict { .. } => unevict(ssn, task),
        }
        true
    }

    /// Undo every operation in reverse order, saving each task's transaction context first.
    pub fn discard(&mut self, ssn: &mut Session) {
        while let Some(op) = self.ops.pop() {
            self.reasons.pop();
            let t = op.task();
            ssn.state.tasks.last_tx.set(
                t,
                Some(LastTransaction {
                    status: ssn.state.tasks.status[t],
                    node: ssn.state.tasks.node[t],
                    eviction_occurred: ssn.state.tasks.eviction_occurred[t],
                }),
            );
            match op {
                Op::Allocate { .. } | Op::Pipeline { .. } => unplace(ssn, t),
                Op::Evict { .. } => unevict(ssn, t),
            }
        }
    }

    /// Send the operations out: allocations become binds (status Binding), evictions become
    /// eviction decisions; pipelines stay in-session only.
    pub fn commit(&mut self, ssn: &mut Session) {
        let ops = std::mem::take(&mut self.ops);
        let reasons = std::mem::take(&mut self.reasons);
        for (op, reason) in ops.into_iter().zip(reasons) {
            let t = op.task();
            ssn.state.tasks.last_tx.set(t, None);
            match op {
                Op::Evict { task } => ssn.evictions.push((task, reason)),
                Op::Pipeline { .. } => {}
                Op::Allocate { task, node } => dispatch(ssn, task, node),
            }
        }
    }

    /// Commits, counting the statement as one of `action`'s eviction transactions when it
    /// evicts (Volcano counts each committed statement with an eviction:
    /// metrics/metrics.go, RegisterEvictionTransaction).
    pub fn commit_for(&mut self, ssn: &mut Session, action: EvictingAction) {
        if self.has_evictions() {
            ssn.state.metrics.eviction_transaction(action);
        }
        self.commit(ssn);
    }

    /// Re-applies saved operations on this statement (Volcano's `RecoverOperations`).
    pub fn replay(&mut self, ssn: &mut Session, ops: &[Op]) -> Result<(), String> {
        for op in ops {
            match *op {
                Op::Allocate { task, node } => self.allocate(ssn, task, node)?,
                Op::Pipeline {
                    task,
                    node,
                    eviction_occurred,
                } => self.pipeline(ssn, task, node, eviction_occurred)?,
                Op::Evict { task } => self.evict(ssn, task, "")?,
            }
        }
        Ok(())
    }
}

/// Bind an Allocated task: status Binding, recorded as a bind decision.
pub(crate) fn dispatch(ssn: &mut Session, task: TaskId, node: NodeId) {
    ssn.state.set_task_status(task, TaskStatus::Binding);
    ssn.binds.push((task, node));
}

/// Un-allocate or un-pipeline: back to Pending, off the node, deallocate handlers.
fn unplace(ssn: &mut Session, t: TaskId) {
    ssn.state.set_task_status(t, TaskStatus::Pending);
    if let Some(n) = ssn.state.tasks.node[t] {
        ssn.state.node_remove(n, t);
    }
    ssn.fire_deallocate(t);
    ssn.state.tasks.node.set(t, None);
    ssn.state.tasks.allocated_hyper_node.set(t, None);
}

fn unevict(ssn: &mut Session, t: TaskId) {
    ssn.state.set_task_status(t, TaskStatus::Running);
    if let Some(n) = ssn.state.tasks.node[t] {
        let _ = ssn.state.node_update(n, t);
    }
    let _ = ssn.fire_allocate(t);
}

/// `Session.Allocate` (used by backfill): allocate `task` on `node` now; once its job is
/// ready, every Allocated task of the job is bound.
pub fn allocate_and_dispatch(ssn: &mut Session, task: TaskId, node: NodeId) -> Result<(), String> {
    Statement::new().allocate(ssn, task, node)?;
    let Some(job) = ssn.state.job_of(task) else {
        return Ok(());
    };
    if ssn.job_ready(job) {
        let snap = ssn.state.snap.clone();
        for &t in &snap.jobs.tasks[job.idx()] {
            if ssn.state.tasks.status[t] == TaskStatus::Allocated
                && let Some(n) = ssn.state.tasks.node[t]
            {
                dispatch(ssn, t, n);
            }
        }
    }
    Ok(())
}

impl Session {
    /// `Session.Evict` (used by shuffle): evict now, outside any statement.
    pub fn evict_now(&mut self, task: TaskId, reason: &str) -> Result<(), String> {
        let mut st = Statement::new();
        st.evict(self, task, reason)?;
        st.commit(self);
        Ok(())
    }
}
