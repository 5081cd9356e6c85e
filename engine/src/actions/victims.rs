//! Shared pieces of the eviction actions: the order victims are evicted in, the check that
//! enough can be freed, and which nodes are worth trying.

use super::PriorityQueue;
use crate::framework::{FitError, Session, StatusCode};
use crate::model::{DimDefault, NodeId, TaskId};

/// `BuildVictimsPriorityQueue` (Volcano: pkg/scheduler/framework/session_plugins.go, BuildVictimsPriorityQueue): the first popped is evicted first.
pub fn victim_queue(ssn: &Session, victims: &[TaskId], preemptor: TaskId) -> PriorityQueue<TaskId> {
    let mut q = PriorityQueue::new();
    for &v in victims {
        q.push(v, |l, r| victim_less(ssn, l, r, preemptor));
    }
    q
}

/// Pops the next victim of a queue built by `victim_queue`.
pub fn pop_victim(
    ssn: &Session,
    q: &mut PriorityQueue<TaskId>,
    preemptor: TaskId,
) -> Option<TaskId> {
    q.pop(|l, r| victim_less(ssn, l, r, preemptor))
}

/// The victims in eviction order.
pub fn victims_in_order(ssn: &Session, victims: &[TaskId], preemptor: TaskId) -> Vec<TaskId> {
    let mut q = victim_queue(ssn, victims, preemptor);
    std::iter::from_fn(|| pop_victim(ssn, &mut q, preemptor)).collect()
}

fn victim_less(ssn: &Session, l: TaskId, r: TaskId, preemptor: TaskId) -> bool {
    let st = &ssn.state;
    let (lj, rj) = (st.job_of(l), st.job_of(r));
    if lj == rj {
        return !ssn.task_order_less(l, r);
    }
    let (Some(lj), Some(rj)) = (lj, rj) else {
        if lj.is_none() && rj.is_none() {
            return !ssn.task_order_less(l, r);
        }
        return lj.is_none();
    };
    let jobs = &st.snap.jobs;
    let (lq, rq) = (jobs.queue[lj.idx()], jobs.queue[rj.idx()]);
    match st.job_of(preemptor) {
        Some(pj) if lq != rq => ssn.victim_queue_order_less(lq, rq, jobs.queue[pj.idx()]),
        _ => match ssn.job_order_compare(lj, rj) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => !ssn.task_order_less(l, r),
        },
    }
}

/// `ValidateVictims`: the preemptor fits in the node's future idle plus what the victims free.
pub fn victims_can_make_room(
    ssn: &Session,
    preemptor: TaskId,
    node: NodeId,
    victims: &[TaskId],
) -> bool {
    let mut room = ssn.state.future_idle(node).into_owned();
    for &v in victims {
        room.add(ssn.state.resreq(v));
    }
    ssn.state
        .resreq(preemptor)
        .less_equal(&room, DimDefault::Zero)
}

/// `PredicateForPreemptAction`: plain `Unschedulable` counts as fixable by eviction.
pub fn predicate_for_preempt(ssn: &Session, task: TaskId, node: NodeId) -> Result<(), FitError> {
    match ssn.predicate(task, node) {
        Err(e)
            if e.has_any(&[
                StatusCode::UnschedulableAndUnresolvable,
                StatusCode::Error,
                StatusCode::Skip,
                StatusCode::Wait,
            ]) =>
        {
            Err(e)
        }
        _ => Ok(()),
    }
}

/// `FilterOutUnschedulableAndUnresolvableNodesForTask`: every node except those where
/// allocate found the task unresolvably unschedulable.
pub fn nodes_worth_trying(ssn: &Session, task: TaskId) -> Vec<NodeId> {
    let all = ssn.state.snap.nodes.ids();
    let Some(errs) = ssn
        .state
        .job_of(task)
        .and_then(|j| ssn.state.jobs.fit_errors[j].get(&task))
    else {
        return all.collect();
    };
    all.filter(|n| {
        errs.nodes
            .get(*n)
            .is_none_or(|e| !e.has_any(&[StatusCode::UnschedulableAndUnresolvable]))
    })
    .collect()
}

/// `nodes` that `nodes_worth_trying` keeps, in `nodes` order (Volcano's
/// `intersectNodesByName`). When allocate found every node of the cluster unresolvable the
/// filter is empty, and an empty filter keeps all of `nodes`.
pub fn worth_trying_among(ssn: &Session, task: TaskId, nodes: &[NodeId]) -> Vec<NodeId> {
    let errs = ssn
        .state
        .job_of(task)
        .and_then(|j| ssn.state.jobs.fit_errors[j].get(&task));
    let unresolvable = |n: &NodeId| {
        errs.and_then(|e| e.nodes.get(*n))
            .is_some_and(|e| e.has_any(&[StatusCode::UnschedulableAndUnresolvable]))
    };
    if ssn.state.snap.nodes.ids().all(|n| unresolvable(&n)) {
        return nodes.to_vec();
    }
    nodes.iter().copied().filter(|n| !unresolvable(n)).collect()
}

/// Tasks accounted on `node` that pass `keep`, in walk order (`Snapshot::task_walk_order`):
/// Volcano takes them from the node's task map, in no order, and a plugin that spends a budget
/// on them as they come (`pdb`) picks its victims by that order.
pub fn node_tasks_where(ssn: &Session, node: NodeId, keep: impl Fn(TaskId) -> bool) -> Vec<TaskId> {
    let mut tasks: Vec<TaskId> = ssn.state.nodes.tasks[node]
        .iter()
        .copied()
        .filter(|&t| keep(t))
        .collect();
    let snap = &ssn.state.snap;
    tasks.sort_by(|&l, &r| snap.task_walk_order(l, r));
    tasks
}
