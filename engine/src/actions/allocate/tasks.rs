//! `allocateResourcesForTasks` (Volcano: pkg/scheduler/actions/allocate/allocate.go, allocateResourcesForTasks): place a sub-job's tasks, one at a time in task
//! order, on the nodes of one hyper-node.

use std::collections::BTreeMap;

use super::NodeSearch;
use crate::actions::PriorityQueue;
use crate::actions::node_search::{
    PredicateHelper, allocate_predicate, best_scored_node, by_shard,
};
use crate::framework::{
    FitError, FitErrors, SearchStage, Session, SessionState, Statement, StatusCode,
};
use crate::model::{DimDefault, HyperNodeId, JobId, NodeId, SubJobId, TaskId, TaskStatus};

/// Places tasks of `sj` from `tasks` on `hn`'s nodes. Returns the statement when the sub-job
/// became ready or pipelined, else discards it and returns `None`.
pub fn allocate_resources_for_tasks(
    ssn: &mut Session,
    sj: SubJobId,
    tasks: &mut PriorityQueue<TaskId>,
    hn: HyperNodeId,
    search: &mut NodeSearch,
) -> Option<Statement> {
    let snap = ssn.state.snap.clone();
    let nodes: &[NodeId] = &snap.hyper_nodes.real_node_list[hn.idx()];
    if nodes.is_empty() {
        return None;
    }
    let job = snap.sub_jobs.job[sj.idx()];
    let queue = snap.jobs.queue[job.idx()];
    let top = snap.hyper_nodes.top();
    let has_topology = ssn.state.sub_jobs.topology[sj].is_some();
    let mut stmt = Statement::new();
    let mut helper = PredicateHelper::new(search.error_cache);
    let mut allocated_hn = ssn.state.sub_jobs.allocated_hyper_node[sj];
    while let Some(t) = tasks.pop(|l, r| ssn.task_order_less(l, r)) {
        if !ssn.allocatable(queue, t) || snap.tasks.sch_gated[t.idx()] {
            continue;
        }
        let role = &snap.tasks.role[t.idx()];
        if !role.is_empty() && role_has_failed(&ssn.state, job, sj, role) {
            let fe = FitErrors {
                message: format!(
                    "Task {} with role spec {role} has already predicated failed, skip",
                    snap.tasks.name[t.idx()]
                ),
                ..Default::default()
            };
            ssn.state.record_fit_errors(job, t, fe);
            continue;
        }
        if let Err(e) = ssn.pre_predicate(t) {
            let mut fe = FitErrors::default();
            for &n in nodes {
                fe.nodes.insert(n, e.clone());
            }
            ssn.state.record_fit_errors(job, t, fe);
            if need_continue_allocating(&ssn.state, sj) {
                continue;
            }
            break;
        }
        if has_topology {
            ssn.state.set_task_allocated_hyper_node(t, allocated_hn);
        }
        let mut found = Vec::new();
        let nominated = ssn.state.nominated_node_name(t);
        if !nominated.is_empty()
            && let Some(nn) = snap.nodes.id(nominated).filter(|n| nodes.contains(n))
            && ssn
                .state
                .resreq(t)
                .less_equal(&ssn.state.future_idle(nn), DimDefault::Zero)
        {
            found = helper.predicate_nodes(ssn, t, &[nn], allocate_predicate).0;
        }
        let mut chosen = None;
        if found.is_empty() {
            // Over all nodes, a task of a cached class takes its class's answer.
            // The class's answer stands for this task's predicate search.
            let cached = if hn == top {
                ssn.state
                    .timed(SearchStage::Predicate, || search.classes.best_node(ssn, t))
            } else {
                None
            };
            let outcome = match cached {
                Some(answer) => answer.map(Some),
                None => {
                    let (f, errs) = helper.predicate_nodes(ssn, t, nodes, allocate_predicate);
                    found = f;
                    if found.is_empty() {
                        Err(errs)
                    } else {
                        Ok(None)
                    }
                }
            };
            match outcome {
                Ok(node) => chosen = node,
                Err(mut errs) => {
                    if hn != top {
                        errs.hyper_node = Some(snap.hyper_nodes.name[hn.idx()].clone());
                    }
                    ssn.state.record_fit_errors(job, t, errs);
                    if need_continue_allocating(&ssn.state, sj) {
                        continue;
                    }
                    break;
                }
            }
        }
        let Some(best) = chosen.or_else(|| prioritize(ssn, t, &found)) else {
            continue;
        };
        if let Err(e) = place(ssn, &mut stmt, t, best) {
            let mut fe = FitErrors::default();
            fe.nodes.insert(best, FitError::new(StatusCode::Error, e));
            ssn.state.record_fit_errors(job, t, fe);
        }
        if has_topology && let Some(h) = snap.hyper_nodes.lowest_of_node[best.idx()] {
            allocated_hn = snap.hyper_nodes.lca(Some(h), allocated_hn);
        }
        if ssn.sub_job_ready(job, sj) {
            break;
        }
    }
    if ssn.sub_job_ready(job, sj) || ssn.sub_job_pipelined(job, sj) {
        return Some(stmt);
    }
    stmt.discard(ssn);
    None
}

/// Nodes where the task fits idle now are preferred over those where it fits only once
/// releasing resources are freed; under soft sharding each of the two comes as the shard's own
/// nodes, then the other shards' (Volcano: actions/allocate/allocate.go, prioritizeNodes).
/// Within a group the best score wins.
pub fn prioritize(ssn: &Session, t: TaskId, found: &[NodeId]) -> Option<NodeId> {
    let req = ssn.state.resreq(t);
    let (idle, future): (Vec<NodeId>, Vec<NodeId>) = found
        .iter()
        .partition(|&&n| req.less_equal(&ssn.state.nodes.idle[n], DimDefault::Zero));
    let future: Vec<NodeId> = future
        .into_iter()
        .filter(|&n| req.less_equal(&ssn.state.future_idle(n), DimDefault::Zero))
        .collect();
    let [idle_own, idle_others] = by_shard(ssn, idle);
    let [future_own, future_others] = by_shard(ssn, future);
    [idle_own, idle_others, future_own, future_others]
        .iter()
        .find_map(|group| best_scored_node(ssn, t, group))
}

/// Allocate when the task fits idle, pipeline when it fits future idle; a task placed counts
/// for its job's e2e scheduling metrics (Volcano: actions/allocate/allocate.go,
/// allocateResourcesForTask).
pub fn place(ssn: &mut Session, stmt: &mut Statement, t: TaskId, n: NodeId) -> Result<(), String> {
    let req = ssn.state.resreq(t).clone();
    let placed = if req.less_equal(&ssn.state.nodes.idle[n], DimDefault::Zero) {
        stmt.allocate(ssn, t, n)
    } else if req.less_equal(&ssn.state.future_idle(n), DimDefault::Zero) {
        stmt.pipeline(ssn, t, n, false)
    } else {
        return Ok(());
    };
    if placed.is_ok()
        && let Some(j) = ssn.state.job_of(t)
    {
        ssn.state.placed_jobs.push(j);
    }
    placed
}

/// True when some task of `role` in the sub-job already failed its predicates this session.
fn role_has_failed(st: &SessionState, job: JobId, sj: SubJobId, role: &str) -> bool {
    st.snap.sub_jobs.tasks[sj.idx()]
        .iter()
        .any(|t| &*st.snap.tasks.role[t.idx()] == role && st.jobs.fit_errors[job].contains_key(t))
}

/// `NeedContinueAllocating` (Volcano: pkg/scheduler/api/job_info.go, NeedContinueAllocating): after a task failed, is there still a way for the
/// gang to be met?
pub fn need_continue_allocating(st: &SessionState, sj: SubJobId) -> bool {
    let snap = &st.snap;
    let job = snap.sub_jobs.job[sj.idx()];
    let min = snap.jobs.min_available[job.idx()];
    if min as usize == snap.jobs.tasks[job.idx()].len() {
        return false;
    }
    if snap.sub_jobs.min_available[sj.idx()] as usize >= snap.sub_jobs.tasks[sj.idx()].len() {
        return false;
    }
    if snap.jobs.has_sub_group_policy[job.idx()] {
        return true;
    }
    let mut failed: Vec<&str> = Vec::new();
    let mut pending: BTreeMap<&str, i32> = BTreeMap::new();
    let mut allocated: BTreeMap<&str, i32> = BTreeMap::new();
    for &t in &snap.sub_jobs.tasks[sj.idx()] {
        let role = &*snap.tasks.role[t.idx()];
        let status = st.tasks.status[t];
        if st.jobs.fit_errors[job].contains_key(&t) && !failed.contains(&role) {
            failed.push(role);
        }
        if status == TaskStatus::Pending {
            *pending.entry(role).or_default() += 1;
        }
        if status.is_allocated()
            || status == TaskStatus::Succeeded
            || (status == TaskStatus::Pending && snap.tasks.resreq[t.idx()].is_empty())
        {
            *allocated.entry(role).or_default() += 1;
        }
    }
    if min < snap.jobs.task_min_available_total[job.idx()] {
        let pending_ok: i32 = pending
            .iter()
            .filter(|(r, _)| !failed.contains(r))
            .map(|(_, c)| c)
            .sum();
        return st.ready_task_num(job) + pending_ok >= min;
    }
    let mins = &snap.jobs.task_min_available[job.idx()];
    failed.iter().all(|r| {
        let m = mins.get(*r).copied().unwrap_or(0);
        m <= 0 || allocated.get(r).copied().unwrap_or(0) >= m
    })
}
