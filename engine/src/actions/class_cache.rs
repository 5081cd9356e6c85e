//! Equivalence classes for node search. Tasks with the same scheduling signature (requests,
//! node selector, node affinity, tolerations, overhead, and per container its image, host
//! ports, requests and restart policy: `TaskSignature`) rank nodes the same way when
//! every plugin says its predicate and node scores for them are node-local: they depend only on
//! the task's signature and on the node's own state. Such a class ranks all nodes once (in
//! parallel), then re-ranks only the nodes whose accounting changed since it last looked, from
//! the session's change log. The answer is the plain path's answer: idle fit before future-idle
//! fit, then the highest score, ties to the first node in table order.
//!
//! Only the nodes in every plugin's static feasible set (`Plugin::static_feasible`) are ranked up
//! front; why the others fail is worked out only when the class fits nowhere. When the predicates
//! plugin's set is exactly the nodes that pass NodeUnschedulable, NodeAffinity and TaintToleration,
//! it also spares those filters on its nodes at every re-rank. Nodes are checked and scored in
//! batches (`CHECK_BATCH`, `SCORE_BATCH`): `Plugin::predicate_nodes` answers as `predicate` does
//! node by node but lets a plugin read its shared state once a batch. A class whose batch scorer
//! refuses a node hands its tasks to the plain path. Allocate's classes are carried over to the
//! next session (`class_carryover`), which ranks again only the nodes changed since; when allocate
//! starts, the carried classes of all the pending tasks' signatures are brought up to date at once
//! on the pool (`ClassCache::revive`).

use std::collections::{HashMap, HashSet};

use fixedbitset::FixedBitSet;
use foldhash::fast::FixedState;
use rayon::prelude::*;
use smallvec::{SmallVec, smallvec};

use super::class_carryover::{Carried, CarriedClass, CarriedClasses, mostly_stale};
use super::node_search::{allocate_predicate, allocate_predicate_nodes};
use super::node_tournament::{NodeTournament, key};
use crate::framework::{FitError, FitErrors, NodeFailures, Session};
use crate::model::{DimDefault, NodeId, TaskId};
use crate::snapshot::SignatureId;

/// A node's standing for one class.
#[derive(Debug, Clone)]
enum Rank {
    Infeasible(FitError),
    /// Outside the class's static feasible set (`Session::static_feasible`): fails whatever the
    /// session does; why is worked out only when the class fits nowhere (`None`: not yet, or
    /// the node changed since).
    Deferred(Option<FitError>),
    /// `group` 0: fits idle now; 1: fits only future idle.
    Feasible {
        group: u8,
        score: f64,
    },
}

impl Rank {
    /// Why the node fails, when that is known.
    fn failure(&self) -> Option<&FitError> {
        match self {
            Rank::Infeasible(e) | Rank::Deferred(Some(e)) => Some(e),
            Rank::Feasible { .. } | Rank::Deferred(None) => None,
        }
    }

    /// Node `n`'s key in the class's order (`node_tournament::key`), when it is feasible.
    fn key(&self, n: NodeId) -> Option<u128> {
        match *self {
            Rank::Feasible { group, score } => Some(key(group, score, n)),
            Rank::Infeasible(_) | Rank::Deferred(_) => None,
        }
    }
}

/// One class: every node's rank, the feasible ones in order, and how far into the session's
/// change log the ranks are current.
#[derive(Debug)]
pub(super) struct Class {
    /// A batch scorer refused a node: the class answers no more, its tasks take the plain path.
    refused: bool,
    ranks: Vec<Rank>,
    order: NodeTournament,
    seen: usize,
    /// The failures in `ranks`, kept up to date with them (a version is handed to each task
    /// that fits nowhere).
    failures: NodeFailures,
}

/// `ClassCache::task_class` of a task not looked up yet.
const UNSEEN: u32 = u32::MAX;
/// `ClassCache::task_class` of a task that takes the plain path.
const PLAIN: u32 = u32::MAX - 1;

/// The classes of one session.
pub struct ClassCache {
    /// Classes by their signature.
    by_signature: HashMap<SignatureId, usize, FixedState>,
    /// Each task's class once looked up (`UNSEEN`, `PLAIN`, or the class's index): a column,
    /// not a map, as a contended allocate looks up 130k tasks.
    task_class: Vec<u32>,
    /// The classes, each with its signature.
    classes: Vec<(SignatureId, Class)>,
    /// The last session's classes, each taken over when its signature first comes up.
    carried: Option<Carried>,
}

/// Nodes scored by one `batch_node_order` call when a class ranks many: the plugins are
/// node-local for the class, so a node's score is the same in any batch, and one call per node
/// spent more on setting up each scorer than on scoring.
const SCORE_BATCH: usize = 256;

/// Nodes checked by one `predicate_nodes` call when a class ranks many: a predicate plugin with
/// shared state reads it once a batch.
const CHECK_BATCH: usize = 256;

/// Ranks of some nodes, in their order; one inline, as after a placement.
type Ranks = SmallVec<[Rank; 1]>;

/// The ranks of `nodes` for `t`, exactly as the plain path would see each node: predicates, then
/// the idle group and the node-order plus batch score of those that pass. Spread over the pool
/// when `parallel`; the answer does not depend on it. `None` when a batch scorer refuses a node:
/// the plain path then scores no node of the task at all, which a ranking cannot express.
fn ranks(ssn: &Session, t: TaskId, nodes: &[NodeId], parallel: bool) -> Option<Ranks> {
    if let [n] = *nodes {
        // The one node a placement dirties, without the lists below (a contended cycle
        // re-ranks 200k single nodes).
        let rank = match feasible_group(ssn, t, n) {
            Err(e) => Rank::Infeasible(e),
            Ok(group) => Rank::Feasible {
                group,
                score: ssn.node_order(t, n) + ssn.batch_node_order(t, &[n])?[0],
            },
        };
        return Some(smallvec![rank]);
    }
    let checked: Vec<Result<u8, FitError>> = if parallel {
        nodes
            .par_chunks(CHECK_BATCH)
            .flat_map_iter(|batch| feasible_groups(ssn, t, batch))
            .collect()
    } else {
        feasible_groups(ssn, t, nodes)
    };
    let feasible: Vec<NodeId> = nodes
        .iter()
        .zip(&checked)
        .filter(|(_, c)| c.is_ok())
        .map(|(&n, _)| n)
        .collect();
    let score = |batch: &[NodeId]| scores(ssn, t, batch);
    let batches: Option<Vec<Vec<f64>>> = if parallel {
        feasible.par_chunks(SCORE_BATCH).map(score).collect()
    } else {
        feasible.chunks(SCORE_BATCH).map(score).collect()
    };
    let mut scores = batches?.into_iter().flatten();
    let ranks = checked
        .into_iter()
        .map(|c| match c {
            Err(e) => Rank::Infeasible(e),
            Ok(group) => Rank::Feasible {
                group,
                score: scores.next().unwrap_or_default(),
            },
        })
        .collect();
    Some(ranks)
}

/// Node `n`'s group for `t` (0: fits idle now, 1: only future idle) when it passes the
/// predicates.
fn feasible_group(ssn: &Session, t: TaskId, n: NodeId) -> Result<u8, FitError> {
    allocate_predicate(ssn, t, n)?;
    Ok(idle_group(ssn, t, n))
}

/// `feasible_group` of each of `nodes`, in order, the predicate plugins asked all at once.
fn feasible_groups(ssn: &Session, t: TaskId, nodes: &[NodeId]) -> Vec<Result<u8, FitError>> {
    allocate_predicate_nodes(ssn, t, nodes)
        .into_iter()
        .zip(nodes)
        .map(|(passed, &n)| passed.map(|()| idle_group(ssn, t, n)))
        .collect()
}

/// 0 when `t` fits node `n`'s idle now, 1 when it fits only once releasing resources are freed.
fn idle_group(ssn: &Session, t: TaskId, n: NodeId) -> u8 {
    let fits_idle = ssn
        .state
        .resreq(t)
        .less_equal(&ssn.state.nodes.idle[n], DimDefault::Zero);
    if fits_idle { 0 } else { 1 }
}

/// Node-order plus batch score of each of `nodes` for `t`; `None` when a batch scorer refuses.
fn scores(ssn: &Session, t: TaskId, nodes: &[NodeId]) -> Option<Vec<f64>> {
    let batch = ssn.batch_node_order(t, nodes)?;
    let summed = nodes.iter().zip(batch);
    Some(summed.map(|(&n, b)| ssn.node_order(t, n) + b).collect())
}

impl Class {
    /// The class founded by `t`: every node in the static feasible set ranked (on the pool), the
    /// others deferred.
    fn new(ssn: &Session, t: TaskId) -> Class {
        let statics = ssn.static_feasible(t);
        let candidates: Vec<NodeId> = (0..ssn.state.snap.nodes.len())
            .filter(|&n| statics.as_ref().is_none_or(|s| s.contains(n)))
            .map(|n| NodeId(n as u32))
            .collect();
        let mut ranks = vec![Rank::Deferred(None); ssn.state.snap.nodes.len()];
        let candidate_ranks = self::ranks(ssn, t, &candidates, true);
        let refused = candidate_ranks.is_none();
        for (n, r) in candidates.iter().zip(candidate_ranks.into_iter().flatten()) {
            ranks[n.idx()] = r;
        }
        let ranked = || (0..).zip(&ranks).map(|(n, r)| (NodeId(n), r));
        Class {
            refused,
            order: NodeTournament::new(
                ranks
                    .iter()
                    .enumerate()
                    .map(|(n, r)| r.key(NodeId(n as u32))),
            ),
            failures: ranked()
                .filter_map(|(n, r)| Some((n, r.failure()?.clone())))
                .collect(),
            ranks,
            seen: ssn.state.nodes.changes().len(),
        }
    }

    /// A class carried over from an earlier session, brought up to date for `t`: the `stale`
    /// nodes and those this session changed so far are ranked again, the others keep their
    /// ranks. `None` when so many nodes changed that ranking all of them afresh costs less.
    fn revived(mut self, ssn: &Session, t: TaskId, mut dirty: FixedBitSet) -> Option<Class> {
        for n in ssn.state.nodes.changes() {
            dirty.insert(n.idx());
        }
        if mostly_stale(&dirty) {
            return None;
        }
        let statics = ssn.static_feasible(t);
        let (ranked, deferred): (Vec<NodeId>, Vec<NodeId>) = dirty
            .ones()
            .map(|n| NodeId(n as u32))
            .partition(|n| statics.as_ref().is_none_or(|s| s.contains(n.idx())));
        let ranks = ranks(ssn, t, &ranked, ranked.len() >= PARALLEL_RERANK)?;
        let deferred = deferred.into_iter().map(|n| (n, Rank::Deferred(None)));
        self.set_all(deferred.chain(ranked.into_iter().zip(ranks)));
        self.seen = ssn.state.nodes.changes().len();
        Some(self)
    }

    /// Works out why the deferred nodes fail (they must: the static set is a superset of the
    /// nodes that can pass; one that passes after all is ranked like any other).
    fn resolve_deferred(&mut self, ssn: &Session, t: TaskId) {
        let pending: Vec<NodeId> = (0..self.ranks.len())
            .filter(|&n| matches!(self.ranks[n], Rank::Deferred(None)))
            .map(|n| NodeId(n as u32))
            .collect();
        let Some(ranks) = ranks(ssn, t, &pending, true) else {
            self.refused = true;
            return;
        };
        self.set_all(pending.into_iter().zip(ranks).map(|(n, r)| match r {
            Rank::Infeasible(e) => (n, Rank::Deferred(Some(e))),
            feasible => (n, feasible),
        }));
    }

    /// Sets the ranks of the nodes given, in order: their failures and ranks one by one, their
    /// keys in the order at once.
    fn set_all(&mut self, ranks: impl IntoIterator<Item = (NodeId, Rank)>) {
        // A placement dirties one node: its key stays inline.
        let keys: SmallVec<[(NodeId, Option<u128>); 4]> = ranks
            .into_iter()
            .map(|(n, r)| {
                match r.failure() {
                    Some(e) => self.failures.insert(n, e.clone()),
                    None => self.failures.remove(n),
                }
                let k = r.key(n);
                self.ranks[n.idx()] = r;
                (n, k)
            })
            .collect();
        self.order.set_many(&keys);
    }
}

/// True when `t` may take a class's answer: the caches are on, node sampling and node sharding
/// are off (a shard's failures and its soft order are the plain path's), and every plugin is
/// node-local for it.
fn eligible(ssn: &Session, t: TaskId) -> bool {
    !ssn.state.options.disable_class_caches
        && ssn.state.options.node_sampling.is_none()
        && ssn.state.snap.shard.is_none()
        && ssn.node_local(t)
}

/// Dirty nodes below which a class re-ranks them on the calling thread.
const PARALLEL_RERANK: usize = 32;

impl ClassCache {
    /// The classes of a session, with those the sessions before left (`class_carryover`).
    pub fn carried_over(ssn: &Session) -> ClassCache {
        ClassCache {
            by_signature: HashMap::default(),
            task_class: vec![UNSEEN; ssn.state.snap.tasks.len()],
            classes: Vec::new(),
            carried: Carried::take(&ssn.state),
        }
    }

    /// Hands the classes over to the next session (refused ones are let go).
    pub fn leave(self, ssn: &Session) {
        let nodes = ssn.state.snap.nodes.len();
        let carried: CarriedClasses = self
            .classes
            .into_iter()
            .filter(|(_, class)| !class.refused)
            .map(|(signature, class)| {
                let stale = FixedBitSet::with_capacity(nodes);
                (signature, CarriedClass { class, stale })
            })
            .collect();
        Carried::leave(&ssn.state, carried, self.carried);
    }

    /// Brings the carried classes of `tasks`' signatures up to date, all at once on the pool.
    /// Each would otherwise be revived when its first task comes up, one after another, its
    /// re-ranked nodes written into its order on the calling thread: a steady cycle revives
    /// every class, each with thousands of nodes changed since. A signature whose first task is
    /// not eligible or fails its pre-predicates, and a class that comes back refused or mostly
    /// stale, is left to `class_of`.
    pub fn revive(&mut self, ssn: &Session, tasks: impl IntoIterator<Item = TaskId>) {
        let Some(carried) = self.carried.as_mut() else {
            return;
        };
        // Each signature is looked at once, with its first task: the rest of a signature whose
        // first task may not found its class are many (a contended cycle has 200k pending).
        let signatures = &ssn.state.snap.tasks.signature;
        let mut considered: HashSet<SignatureId, FixedState> = HashSet::default();
        let mut founders: Vec<(SignatureId, TaskId)> = Vec::new();
        for t in tasks {
            let signature = signatures[t.idx()];
            if carried.has(signature)
                && considered.insert(signature)
                && eligible(ssn, t)
                && ssn.pre_predicate(t).is_ok()
            {
                founders.push((signature, t));
            }
        }
        let taken: Vec<_> = founders
            .into_iter()
            .filter_map(|(signature, t)| {
                let (class, stale) = carried.class(signature)?;
                Some((signature, t, class, stale))
            })
            .collect();
        let revived: Vec<(SignatureId, Option<Class>)> = taken
            .into_par_iter()
            .map(|(signature, t, class, stale)| (signature, class.revived(ssn, t, stale)))
            .collect();
        for (signature, class) in revived {
            if let Some(class) = class {
                self.add(signature, class);
            }
        }
    }

    /// Adds `class` as the class of `signature`; its index.
    fn add(&mut self, signature: SignatureId, class: Class) -> usize {
        let id = self.classes.len();
        self.by_signature.insert(signature, id);
        self.classes.push((signature, class));
        id
    }

    /// The task's class, or `None` when it must take the plain path (caches disabled, node
    /// sampling on, or a plugin that is not node-local for it).
    fn class_of(&mut self, ssn: &Session, t: TaskId) -> Option<usize> {
        match self.task_class[t.idx()] {
            UNSEEN => {}
            PLAIN => return None,
            c => return Some(c as usize),
        }
        let class = eligible(ssn, t).then(|| {
            let signature = ssn.state.snap.tasks.signature[t.idx()];
            if let Some(&id) = self.by_signature.get(&signature) {
                return id;
            }
            let revived = self.carried.as_mut().and_then(|carried| {
                let (class, stale) = carried.class(signature)?;
                class.revived(ssn, t, stale)
            });
            let class = revived.unwrap_or_else(|| Class::new(ssn, t));
            self.add(signature, class)
        });
        self.task_class[t.idx()] = class.map_or(PLAIN, |c| c as u32);
        class
    }

    /// Where the plain path would place `t` among all nodes: `None` when `t` is not in a class
    /// (take the plain path), `Some(Ok(node))`, or `Some(Err(errors))` when no node fits.
    pub fn best_node(&mut self, ssn: &Session, t: TaskId) -> Option<Result<NodeId, FitErrors>> {
        let c = self.class_of(ssn, t)?;
        let class = &mut self.classes[c].1;
        if class.refused {
            return None;
        }
        let changes = &ssn.state.nodes.changes()[class.seen..];
        if !changes.is_empty() {
            // A few nodes changed since the class last looked, mostly one: kept inline.
            let mut dirty: SmallVec<[NodeId; 8]> = SmallVec::from_slice(changes);
            dirty.sort_unstable();
            dirty.dedup();
            // Nodes outside the static set stay deferred: whatever changed, they fail.
            let (deferred, ranked): (SmallVec<[NodeId; 8]>, SmallVec<[NodeId; 8]>) = dirty
                .into_iter()
                .partition(|n| matches!(class.ranks[n.idx()], Rank::Deferred(_)));
            // A placement dirties one node: fanning that out costs more than ranking it here.
            let parallel = ranked.len() >= PARALLEL_RERANK;
            match ranks(ssn, t, &ranked, parallel) {
                Some(ranks) => {
                    let deferred = deferred.into_iter().map(|n| (n, Rank::Deferred(None)));
                    class.set_all(deferred.chain(ranked.into_iter().zip(ranks)));
                }
                // A refused class answers no more: its ranks are not read again.
                None => {
                    class.refused = true;
                    return None;
                }
            }
            class.seen = ssn.state.nodes.changes().len();
        }
        if class.order.is_empty() {
            class.resolve_deferred(ssn, t);
        }
        if class.refused {
            return None;
        }
        Some(match class.order.best() {
            Some(n) => Ok(n),
            None => Err(FitErrors {
                nodes: class.failures.clone(),
                ..Default::default()
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::ClassCache;
    use crate::framework::{Carryover, FitErrors, Plugin, SessionOptions, SessionState};
    use crate::harness::Harness;
    use crate::model::{NodeId, TaskId};

    /// Node-local, with a batch scorer that refuses any batch holding node `n2`.
    struct RefusesN2;

    impl Plugin for RefusesN2 {
        fn name(&self) -> &str {
            "refuses-n2"
        }

        fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
            true
        }

        fn batch_node_order(
            &self,
            ssn: &SessionState,
            _: TaskId,
            nodes: &[NodeId],
        ) -> Option<Result<Vec<f64>, String>> {
            let names = &ssn.snap.nodes.name;
            Some(if nodes.iter().any(|n| names[n.idx()] == "n2") {
                Err("n2 refused".into())
            } else {
                Ok(vec![1.0; nodes.len()])
            })
        }
    }

    fn bound_with(options: SessionOptions) -> Vec<String> {
        let conf = "actions: allocate\ntiers:\n- plugins:\n  - name: refuses-n2\n";
        let mut ssn = Harness::new(conf)
            .with_plugin("refuses-n2", |_| Ok(Box::new(RefusesN2)))
            .queue("q", 1)
            .node("n1", "4", "8Gi", &[])
            .node("n2", "4", "8Gi", &[])
            .pod_group("ns", "pg", "q", 1)
            .pod("ns", "p", "pg", "1", "1Gi")
            .open_with(options)
            .unwrap();
        crate::actions::run(&mut ssn, crate::config::Action::Allocate);
        let nodes = &ssn.state.snap.nodes.name;
        ssn.binds
            .iter()
            .map(|&(_, n)| nodes[n.idx()].clone())
            .collect()
    }

    #[test]
    fn carried_classes_are_revived_before_their_first_task_asks_and_answer_as_a_fresh_class() {
        let conf = "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n  - name: nodeorder\n  - name: binpack\n";
        let cluster = || {
            Harness::new(conf)
                .queue("q", 1)
                .node("n1", "4", "8Gi", &[])
                .node("n2", "8", "16Gi", &[])
                .node("n3", "2", "4Gi", &[])
                .node("n4", "4", "8Gi", &[])
                .node("n5", "6", "8Gi", &[])
                .pod_group("ns", "pg", "q", 1)
                .pod("ns", "p", "pg", "1", "1Gi")
        };
        let carryover = Arc::new(Carryover::default());
        let options = || SessionOptions {
            carryover: carryover.clone(),
            ..Default::default()
        };
        let mut first = cluster().open_with(options()).unwrap();
        crate::actions::run(&mut first, crate::config::Action::Allocate);
        let serial = first.state.snap.serial;
        first.close();
        let next = cluster()
            .nodes_changed_since(serial, &["n3"])
            .open_with(options())
            .unwrap();
        let t = TaskId(0);
        let mut revived = ClassCache::carried_over(&next);
        revived.revive(&next, [t]);
        assert_eq!(revived.classes.len(), 1, "revived before the task asked");
        let mut fresh = ClassCache::carried_over(&next);
        assert!(fresh.carried.is_none(), "the classes were carried once");
        let node = |answer: Option<Result<NodeId, FitErrors>>| answer.and_then(Result::ok);
        let answer = node(revived.best_node(&next, t));
        assert!(answer.is_some());
        assert_eq!(answer, node(fresh.best_node(&next, t)));
        assert_eq!(revived.classes.len(), 1, "the task took the revived class");
    }

    #[test]
    fn a_refused_batch_score_sends_the_class_to_the_plain_path() {
        let plain = bound_with(SessionOptions {
            disable_class_caches: true,
            ..Default::default()
        });
        assert_eq!(plain, Vec::<String>::new(), "the plain path scores no node");
        assert_eq!(bound_with(SessionOptions::default()), plain);
    }
}
