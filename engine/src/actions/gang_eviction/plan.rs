//! The dry run behind a gang eviction (Volcano's `BuildNominationPlanInDomain`): evict the
//! chosen victims, then pipeline the starving job's pending sub-jobs into the domain one after
//! the other; keep the result only when the job becomes pipelined. The session is left as it
//! was; the plan is replayed into the job's statement by the caller.

use super::eviction_worksheet;
use crate::actions::PriorityQueue;
use crate::actions::allocate::prioritize;
use crate::actions::node_search::{PredicateHelper, fits_future_idle};
use crate::actions::victims::{predicate_for_preempt, worth_trying_among};
use crate::framework::{FitError, Op, SearchPurpose, Session, Statement};
use crate::model::{DimDefault, HyperNodeId, JobId, NodeId, QueueId, SubJobId, TaskId};

/// Evictions and placements that make the job pipelined, and where each placed sub-job went.
#[derive(Debug)]
pub struct Plan {
    victims: Vec<TaskId>,
    placements: Vec<Op>,
    pub nominations: Vec<(SubJobId, HyperNodeId)>,
}

impl Plan {
    /// Replays the plan into `stmt` (Volcano's `RecoverOperations`): the evictions with the
    /// action's `reason`, then the pipelined placements. On an error the operations applied so
    /// far stay in `stmt`, as in Volcano.
    pub fn apply(
        &self,
        ssn: &mut Session,
        stmt: &mut Statement,
        reason: &str,
    ) -> Result<(), String> {
        for &v in &self.victims {
            stmt.evict(ssn, v, reason)?;
        }
        stmt.replay(ssn, &self.placements)
    }
}

/// What every trial of one dry run shares.
#[derive(Debug, Clone, Copy)]
pub struct DryRun {
    pub queue: QueueId,
    pub job: JobId,
    /// The job's domain: the hyper-node whose nodes the victims were chosen in.
    pub domain: HyperNodeId,
    pub error_cache: bool,
}

/// Evicts `victims` and places the job's pending sub-jobs in the domain: each sub-job in
/// worksheet order on the first hyper-node (of its eviction gradient under the domain when the
/// job has a hard topology, else the domain itself) where all its tasks can be pipelined. A job
/// that was ready already needs one sub-job placed; a starting one stops as soon as it is
/// pipelined. `None` when some sub-job finds no place or the job never becomes pipelined.
pub fn dry_run(ssn: &mut Session, dr: DryRun, victims: &[TaskId], reason: &str) -> Option<Plan> {
    if ssn.state.snap.hyper_nodes.real_node_list[dr.domain.idx()].is_empty() {
        return None;
    }
    let mut ws = eviction_worksheet(ssn, dr.job);
    if ws.is_empty() {
        return None;
    }
    let was_ready = ssn.job_ready(dr.job);
    let mut evictions = Statement::new();
    let evicted: Vec<TaskId> = victims
        .iter()
        .copied()
        .filter(|&v| evictions.evict(ssn, v, reason).is_ok())
        .collect();
    let victims_present = !victims.is_empty();
    let hard = ssn.state.job_contains_hard_topology(dr.job);
    let mut trials: Vec<Statement> = Vec::new();
    let mut nominations = Vec::new();
    let mut pipelined = false;
    while let Some(sj) = ws.pop_sub_job(ssn) {
        let Some(tasks) = ws.tasks.get(&sj).filter(|t| !t.is_empty()) else {
            continue;
        };
        let hyper_nodes = if hard {
            ssn.hyper_node_gradient_for_sub_job(sj, dr.domain, SearchPurpose::Evict)
                .concat()
        } else {
            vec![dr.domain]
        };
        let mut winner = None;
        for hn in hyper_nodes {
            if let Some(st) = trial(ssn, dr, sj, tasks, hn, victims_present) {
                winner = Some((hn, st));
                break;
            }
        }
        let Some((hn, st)) = winner else {
            pipelined = false;
            break;
        };
        trials.push(st);
        nominations.push((sj, hn));
        pipelined = ssn.job_pipelined(dr.job);
        if was_ready || pipelined {
            break;
        }
    }
    let plan = pipelined.then(|| Plan {
        victims: evicted,
        placements: trials.iter().flat_map(|s| s.ops().to_vec()).collect(),
        nominations,
    });
    for mut st in trials.into_iter().rev() {
        st.discard(ssn);
    }
    evictions.discard(ssn);
    plan
}

/// `runSimulateTrialAtHyperNode`: pipelines every task of `tasks` (task order) onto `hn`'s
/// nodes; the statement stays applied when the sub-job ends up ready or pipelined, else it is
/// discarded. Any task that cannot be placed fails the trial.
fn trial(
    ssn: &mut Session,
    dr: DryRun,
    sj: SubJobId,
    tasks: &PriorityQueue<TaskId>,
    hn: HyperNodeId,
    eviction_occurred: bool,
) -> Option<Statement> {
    let snap = ssn.state.snap.clone();
    let nodes = &snap.hyper_nodes.real_node_list[hn.idx()];
    if nodes.is_empty() {
        return None;
    }
    let mut st = Statement::new();
    let mut helper = PredicateHelper::new(dr.error_cache);
    let mut tasks = tasks.clone();
    let mut all_placed = true;
    while let Some(t) = tasks.pop(|l, r| ssn.task_order_less(l, r)) {
        let Some(node) = pipeline_target(ssn, dr, &mut helper, nodes, t) else {
            all_placed = false;
            break;
        };
        if st.pipeline(ssn, t, node, eviction_occurred).is_err() {
            all_placed = false;
            break;
        }
    }
    let done = all_placed
        && !st.is_empty()
        && (ssn.sub_job_ready(dr.job, sj) || ssn.sub_job_pipelined(dr.job, sj));
    if done {
        Some(st)
    } else {
        st.discard(ssn);
        None
    }
}

/// The node of `nodes` that `t` would be pipelined on: allocatable in the queue, a node allocate
/// did not find unresolvable, pre-predicates and the preempt-style predicates passed, the best
/// as allocate scores them, with room in its future idle.
fn pipeline_target(
    ssn: &Session,
    dr: DryRun,
    helper: &mut PredicateHelper,
    nodes: &[NodeId],
    t: TaskId,
) -> Option<NodeId> {
    if !ssn.allocatable(dr.queue, t) {
        return None;
    }
    let worth = worth_trying_among(ssn, t, nodes);
    if worth.is_empty() || ssn.pre_predicate(t).is_err() {
        return None;
    }
    let (found, _) = helper.predicate_nodes(ssn, t, &worth, dry_run_predicate);
    let best = prioritize(ssn, t, &found)?;
    ssn.state
        .resreq(t)
        .less_equal(&ssn.state.future_idle(best), DimDefault::Zero)
        .then_some(best)
}

/// The task fits the node's future idle (victims' resources count as released) and the
/// predicates pass, plain `Unschedulable` counting as fixable.
fn dry_run_predicate(ssn: &Session, t: TaskId, n: NodeId) -> Result<(), FitError> {
    fits_future_idle(ssn, t, n)?;
    predicate_for_preempt(ssn, t, n)
}
