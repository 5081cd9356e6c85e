//! Finding feasible nodes and choosing one (Volcano: pkg/scheduler/util/predicate_helper.go and scheduler_helper.go), shared by the actions.
//!
//! Deterministic by design: candidates are examined in node-table order (Volcano starts at a
//! rotating global offset with 16 racing workers), and among equal best scores the node that
//! comes first in the candidate list wins (Volcano picks one at random).

use std::borrow::Cow;
use std::collections::HashMap;

use crate::framework::{FitError, FitErrors, SearchStage, Session, StatusCode};
use crate::model::{DimDefault, JobId, NodeId, ResourceName, TaskId};

/// Caches predicate failures per (job, task role) within one search scope, as Volcano's
/// `PredicateHelper` does: tasks of the same role fail on the same nodes.
#[derive(Debug, Default)]
pub struct PredicateHelper {
    enabled: bool,
    cache: HashMap<(JobId, std::sync::Arc<str>), HashMap<NodeId, FitError>>,
}

impl PredicateHelper {
    /// A helper; `enabled` is the action's `predicateErrorCacheEnable`.
    pub fn new(enabled: bool) -> Self {
        PredicateHelper {
            enabled,
            cache: HashMap::new(),
        }
    }

    /// Runs `check` over `nodes` and returns the feasible ones (in `nodes` order) and the
    /// failures. With node sampling configured, stops after `num_to_find` feasible nodes.
    /// Under hard sharding a node outside the scheduler's shard fails before `check` runs.
    /// Each call is timed as the Predicate stage.
    pub fn predicate_nodes(
        &mut self,
        ssn: &Session,
        task: TaskId,
        nodes: &[NodeId],
        check: impl Fn(&Session, TaskId, NodeId) -> Result<(), FitError>,
    ) -> (Vec<NodeId>, FitErrors) {
        ssn.state.timed(SearchStage::Predicate, || {
            self.check_nodes(ssn, task, nodes, check)
        })
    }

    fn check_nodes(
        &mut self,
        ssn: &Session,
        task: TaskId,
        nodes: &[NodeId],
        check: impl Fn(&Session, TaskId, NodeId) -> Result<(), FitError>,
    ) -> (Vec<NodeId>, FitErrors) {
        let role = &ssn.state.snap.tasks.role[task.idx()];
        let key = match ssn.state.job_of(task) {
            Some(j) if self.enabled && !role.is_empty() => Some((j, role.clone())),
            _ => None,
        };
        let limit = ssn
            .state
            .options
            .node_sampling
            .map(|s| s.num_to_find(nodes.len()))
            .unwrap_or(nodes.len());
        let mut found = Vec::new();
        let mut errs = FitErrors::default();
        for &n in nodes {
            if found.len() >= limit {
                break;
            }
            if let Some(k) = &key
                && let Some(e) = self.cache.get(k).and_then(|m| m.get(&n))
            {
                errs.nodes.insert(n, e.clone());
                continue;
            }
            let outside_shard = ssn
                .state
                .snap
                .shard
                .as_ref()
                .is_some_and(|shard| shard.excludes(n));
            let fit = if outside_shard {
                Err(not_in_shard())
            } else {
                check(ssn, task, n)
            };
            match fit {
                Ok(()) => found.push(n),
                Err(e) => {
                    if let Some(k) = &key {
                        self.cache
                            .entry(k.clone())
                            .or_default()
                            .insert(n, e.clone());
                    }
                    errs.nodes.insert(n, e);
                }
            }
        }
        (found, errs)
    }
}

/// Why hard sharding keeps a task off a node of another shard: Volcano's plain error (status
/// `Error`), remembered in the error cache like any predicate failure.
fn not_in_shard() -> FitError {
    FitError::new(StatusCode::Error, "node isn't in scheduler node shard")
}

/// `nodes`, order kept, split as soft sharding ranks them: this scheduler's shard, then the
/// other shards' nodes (Volcano: pkg/scheduler/util/predicate_helper.go,
/// GetPredicatedNodeByShard). Without soft sharding the second group is empty.
pub fn by_shard(ssn: &Session, nodes: Vec<NodeId>) -> [Vec<NodeId>; 2] {
    match &ssn.state.snap.shard {
        Some(shard) => shard.own_then_others(&nodes),
        None => [nodes, Vec::new()],
    }
}

/// allocate's predicate: the task must fit the node's future idle, then every predicate plugin.
pub fn allocate_predicate(ssn: &Session, task: TaskId, node: NodeId) -> Result<(), FitError> {
    fits_future_idle(ssn, task, node)?;
    predicate_for_allocate(ssn, task, node)
}

/// `allocate_predicate` for each of `nodes`, in order, the plugins asked a batch at a time.
pub fn allocate_predicate_nodes(
    ssn: &Session,
    task: TaskId,
    nodes: &[NodeId],
) -> Vec<Result<(), FitError>> {
    let mut results: Vec<Result<(), FitError>> = nodes
        .iter()
        .map(|&n| fits_future_idle(ssn, task, n))
        .collect();
    ssn.predicate_passing(task, nodes, &mut results);
    results
}

/// The resource part of a placement predicate: the task fits the node's future idle, else
/// "Insufficient <first missing resource>".
pub fn fits_future_idle(ssn: &Session, task: TaskId, node: NodeId) -> Result<(), FitError> {
    let req = ssn.state.resreq(task);
    req.less_equal_with_names(&ssn.state.future_idle(node), DimDefault::Zero)
        .map_err(|names| FitError::new(StatusCode::Unschedulable, insufficient(names[0])))
}

/// "Insufficient <resource>", without a copy for the two every cluster has.
fn insufficient(name: ResourceName) -> Cow<'static, str> {
    match name {
        ResourceName::Cpu => "Insufficient cpu".into(),
        ResourceName::Memory => "Insufficient memory".into(),
        other => format!("Insufficient {other}").into(),
    }
}

/// `PredicateForAllocateAction`: the plugin predicates, failing on any status code.
pub fn predicate_for_allocate(ssn: &Session, task: TaskId, node: NodeId) -> Result<(), FitError> {
    ssn.predicate(task, node)
}

/// `PrioritizeNodes` + `SelectBestNode`: node-order and batch scores summed per node; the
/// BestNode plugins may choose, else the highest score, ties to the first candidate. Scoring
/// more than one node is timed as the Scoring stage.
pub fn best_scored_node(ssn: &Session, task: TaskId, nodes: &[NodeId]) -> Option<NodeId> {
    match nodes {
        [] => None,
        [only] => Some(*only),
        _ => ssn
            .state
            .timed(SearchStage::Scoring, || score_best(ssn, task, nodes)),
    }
}

fn score_best(ssn: &Session, task: TaskId, nodes: &[NodeId]) -> Option<NodeId> {
    let batch = ssn.batch_node_order(task, nodes)?;
    let scores: Vec<(NodeId, f64)> = nodes
        .iter()
        .zip(batch)
        .map(|(&n, b)| (n, ssn.node_order(task, n) + b))
        .collect();
    if let Some(n) = ssn.best_node(task, &scores) {
        return Some(n);
    }
    let mut best = scores[0];
    for &s in &scores[1..] {
        if s.1 > best.1 {
            best = s;
        }
    }
    Some(best.0)
}

/// `PrioritizeNodes` + `SortNodes`: the nodes by score, best first; equal scores keep the
/// candidates' order. A failing batch scorer leaves no node. Timed as the Scoring stage.
pub fn best_scores_descending(ssn: &Session, task: TaskId, nodes: &[NodeId]) -> Vec<NodeId> {
    ssn.state
        .timed(SearchStage::Scoring, || scores_descending(ssn, task, nodes))
}

fn scores_descending(ssn: &Session, task: TaskId, nodes: &[NodeId]) -> Vec<NodeId> {
    let Some(batch) = ssn.batch_node_order(task, nodes) else {
        return Vec::new();
    };
    let mut scored: Vec<(NodeId, f64)> = nodes
        .iter()
        .zip(batch)
        .map(|(&n, b)| (n, ssn.node_order(task, n) + b))
        .collect();
    scored.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    scored.into_iter().map(|(n, _)| n).collect()
}
