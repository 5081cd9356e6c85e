//! `preempt` (Volcano: pkg/scheduler/actions/preempt/preempt.go): starving jobs take resources from lower-priority work of their own
//! queue, first between jobs, then between tasks of one job. Evictions are committed only when
//! the preemptor job becomes pipelined.

use std::collections::BTreeMap;

use super::PriorityQueue;
use super::action_arguments::{PreemptArgs, lenient};
use super::node_search::{PredicateHelper, best_scores_descending, by_shard};
use super::victims::{
    node_tasks_where, nodes_worth_trying, pop_victim, predicate_for_preempt, victim_queue,
    victims_can_make_room,
};
use crate::api::Pod;
use crate::framework::{EvictingAction, Session, Statement};
use crate::model::{DimDefault, JobId, NodeId, QueueId, TaskId, TaskStatus};

/// Runs the action.
pub fn execute(ssn: &mut Session) {
    let args = lenient(
        &ssn.state.config.action_arguments("preempt"),
        PreemptArgs::parse,
    )
    .0;
    let snap = ssn.state.snap.clone();
    let mut preemptors: BTreeMap<QueueId, PriorityQueue<JobId>> = BTreeMap::new();
    let mut under_request: BTreeMap<QueueId, Vec<JobId>> = BTreeMap::new();
    let mut tasks: BTreeMap<JobId, PriorityQueue<TaskId>> = BTreeMap::new();
    for j in snap.jobs.ids() {
        if ssn.state.job_is_pending(j)
            || ssn.job_valid(j).is_some()
            || !ssn.job_starving(j)
            || ssn.state.job_contains_network_topology(j)
        {
            continue;
        }
        let q = snap.jobs.queue[j.idx()];
        preemptors
            .entry(q)
            .or_default()
            .push(j, |l, r| ssn.job_order_less(l, r));
        under_request.entry(q).or_default().push(j);
        tasks.insert(j, pending_tasks(ssn, j));
    }
    // Volcano gathers them from its job map, in no order, and lets them preempt within
    // themselves in that order.
    for jobs in under_request.values_mut() {
        jobs.sort_by(|&l, &r| snap.job_walk_order(l, r));
    }
    let mut queues: PriorityQueue<QueueId> = PriorityQueue::new();
    for &q in preemptors.keys() {
        queues.push(q, |l, r| ssn.queue_order_less(l, r));
    }
    let mut helper = PredicateHelper::new(args.error_cache);
    while let Some(q) = queues.pop(|l, r| ssn.queue_order_less(l, r)) {
        // Between jobs of the queue.
        while let Some(pj) = preemptors
            .get_mut(&q)
            .and_then(|p| p.pop(|l, r| ssn.job_order_less(l, r)))
        {
            let mut stmt = Statement::new();
            while ssn.job_starving(pj) {
                let Some(t) = tasks
                    .get_mut(&pj)
                    .and_then(|p| p.pop(|l, r| ssn.task_order_less(l, r)))
                else {
                    break;
                };
                let filter = |ssn: &Session, v: TaskId| {
                    basic_victim(ssn, t, v)
                        && ssn.state.job_of(v).is_some_and(|vj| {
                            snap.jobs.queue[vj.idx()] == snap.jobs.queue[pj.idx()] && vj != pj
                        })
                };
                preempt(ssn, &mut stmt, t, &filter, &mut helper, args);
            }
            if ssn.job_pipelined(pj) {
                stmt.commit_for(ssn, EvictingAction::Preempt);
            } else {
                stmt.discard(ssn);
            }
        }
        // Between tasks of one job.
        for &job in under_request.get(&q).map(Vec::as_slice).unwrap_or_default() {
            let mut intra = pending_tasks(ssn, job);
            while let Some(t) = intra.pop(|l, r| ssn.task_order_less(l, r)) {
                let mut stmt = Statement::new();
                let filter = |ssn: &Session, v: TaskId| {
                    basic_victim(ssn, t, v) && ssn.state.job_of(v) == Some(job)
                };
                if !preempt(ssn, &mut stmt, t, &filter, &mut helper, args) {
                    stmt.discard(ssn);
                    break;
                }
                stmt.commit_for(ssn, EvictingAction::Preempt);
            }
        }
    }
}

/// The job's Pending, not gated tasks in task order.
fn pending_tasks(ssn: &Session, j: JobId) -> PriorityQueue<TaskId> {
    let snap = &ssn.state.snap;
    let mut pq = PriorityQueue::new();
    for &t in &snap.jobs.tasks[j.idx()] {
        if ssn.state.tasks.status[t] == TaskStatus::Pending && !snap.tasks.sch_gated[t.idx()] {
            pq.push(t, |l, r| ssn.task_order_less(l, r));
        }
    }
    pq
}

/// Bound or Running, preemptable, and not a non-best-effort task for a best-effort preemptor.
fn basic_victim(ssn: &Session, preemptor: TaskId, v: TaskId) -> bool {
    let t = &ssn.state.snap.tasks;
    ssn.state.tasks.status[v].is_preemptable()
        && (!t.best_effort[preemptor.idx()] || t.best_effort[v.idx()])
        && t.preemptable[v.idx()]
}

fn pod_priority(p: &Pod) -> i32 {
    p.spec.priority.unwrap_or(0)
}

/// `taskEligibleToPreempt`.
fn eligible(ssn: &Session, t: TaskId) -> bool {
    let snap = &ssn.state.snap;
    let pod = &snap.tasks.pod[t.idx()];
    if pod.spec.preemption_policy.as_deref() == Some("Never") {
        return false;
    }
    let nominated = ssn.state.nominated_node_name(t);
    if nominated.is_empty() {
        return true;
    }
    let Some(node) = snap.nodes.id(nominated) else {
        return false;
    };
    match ssn.predicate(t, node) {
        Ok(()) => false,
        Err(e) if e.has_any(&[crate::framework::StatusCode::UnschedulableAndUnresolvable]) => true,
        Err(_) => !ssn.state.nodes.tasks[node].iter().any(|&v| {
            let p = &snap.tasks.pod[v.idx()];
            pod_priority(p) < pod_priority(pod)
                && p.metadata.deletion_timestamp.is_some()
                && p.status.conditions.iter().any(|c| {
                    c.type_ == "DisruptionTarget"
                        && c.status == "True"
                        && c.reason == "PreemptionByScheduler"
                })
        }),
    }
}

/// `preemptorFitsOnNode`.
fn fits(ssn: &Session, t: TaskId, node: NodeId) -> bool {
    let Some(q) = ssn.state.queue_of_task(t) else {
        return false;
    };
    ssn.allocatable(q, t)
        && ssn
            .state
            .resreq(t)
            .less_equal(&ssn.state.future_idle(node), DimDefault::Zero)
        && ssn.predicate(t, node).is_ok()
}

type VictimFilter<'a> = dyn Fn(&Session, TaskId) -> bool + 'a;

/// Tries to make room for `t` on some node by evicting victims; on success the evictions and
/// the preemptor's pipelining are merged into `stmt`.
fn preempt(
    ssn: &mut Session,
    stmt: &mut Statement,
    t: TaskId,
    filter: &VictimFilter,
    helper: &mut PredicateHelper,
    args: PreemptArgs,
) -> bool {
    if !eligible(ssn, t) || ssn.pre_predicate(t).is_err() {
        return false;
    }
    let nodes = nodes_worth_trying(ssn, t);
    let (found, _) = helper.predicate_nodes(ssn, t, &nodes, predicate_for_preempt);
    // Under soft sharding the shard's own nodes are tried first, the other shards' only when
    // no victim there makes room (Volcano: actions/preempt/preempt.go, preempt).
    let [own, others] = by_shard(ssn, found);
    let try_on = |ssn: &mut Session, stmt: &mut Statement, nodes: &[NodeId]| {
        if args.topology_aware {
            topology_aware_preempt(ssn, stmt, t, filter, nodes, args)
        } else {
            normal_preempt(ssn, stmt, t, filter, nodes)
        }
    };
    try_on(ssn, stmt, &own) || (!others.is_empty() && try_on(ssn, stmt, &others))
}

fn normal_preempt(
    ssn: &mut Session,
    stmt: &mut Statement,
    t: TaskId,
    filter: &VictimFilter,
    found: &[NodeId],
) -> bool {
    for node in best_scores_descending(ssn, t, found) {
        let preemptees = node_tasks_where(ssn, node, |v| filter(ssn, v));
        let victims = ssn.preemptable(t, &preemptees);
        ssn.state.metrics.preemption_victims = Some(victims.len());
        if !victims_can_make_room(ssn, t, node, &victims) {
            continue;
        }
        let mut ns = Statement::new();
        let mut queue = victim_queue(ssn, &victims, t);
        let mut freed_something = false;
        let mut ok = fits(ssn, t, node);
        while !ok {
            let Some(v) = pop_victim(ssn, &mut queue, t) else {
                break;
            };
            if ns.evict(ssn, v, "preempt").is_ok() && !ssn.state.resreq(v).is_empty() {
                freed_something = true;
            }
            ok = fits(ssn, t, node);
        }
        ssn.state.metrics.preemption_attempt();
        if ok && ns.pipeline(ssn, t, node, freed_something).is_ok() {
            stmt.merge(&mut ns);
            return true;
        }
        ns.discard(ssn);
    }
    false
}

/// A node where evicting `victims` makes room, for the topology-aware choice.
struct Candidate {
    node: NodeId,
    victims: Vec<TaskId>,
}

/// The topology-aware variant (kube-scheduler's default preemption): on each candidate node
/// find a minimal victim set (evict lowest first until it fits, then give back the
/// highest-priority victims that are not needed), then pick the node whose victims matter
/// least. Evictions are simulated on a throw-away statement. Volcano starts at a random
/// offset; tephra starts at the first node.
fn topology_aware_preempt(
    ssn: &mut Session,
    stmt: &mut Statement,
    t: TaskId,
    filter: &VictimFilter,
    found: &[NodeId],
    args: PreemptArgs,
) -> bool {
    let n = found.len() as i64;
    let wanted = (n * args.min_candidate_pct / 100)
        .clamp(
            args.min_candidate_abs,
            args.max_candidate_abs.max(args.min_candidate_abs),
        )
        .min(n);
    let mut candidates: Vec<Candidate> = Vec::new();
    for &node in found {
        if candidates.len() as i64 >= wanted {
            break;
        }
        if let Some(victims) = select_victims_on_node(ssn, t, node, filter) {
            candidates.push(Candidate { node, victims });
        }
    }
    let Some(best) = pick_candidate(ssn, candidates) else {
        return false;
    };
    let mut ns = Statement::new();
    for &v in &best.victims {
        if ns.evict(ssn, v, "preempt").is_err() {
            ns.discard(ssn);
            return false;
        }
    }
    ssn.state.metrics.preemption_attempt();
    if ns.pipeline(ssn, t, best.node, true).is_err() {
        ns.discard(ssn);
        return false;
    }
    stmt.merge(&mut ns);
    true
}

fn select_victims_on_node(
    ssn: &mut Session,
    t: TaskId,
    node: NodeId,
    filter: &VictimFilter,
) -> Option<Vec<TaskId>> {
    let preemptees = node_tasks_where(ssn, node, |v| filter(ssn, v));
    let potential = ssn.preemptable(t, &preemptees);
    ssn.state.metrics.preemption_victims = Some(potential.len());
    if !victims_can_make_room(ssn, t, node, &potential) {
        return None;
    }
    let mut queue = victim_queue(ssn, &potential, t);
    let mut sim = Statement::new();
    ssn.simulation_begin(t);
    let mut removed = Vec::new();
    while !fits(ssn, t, node) {
        let Some(v) = pop_victim(ssn, &mut queue, t) else {
            break;
        };
        if ssn.simulate_remove_task(t, v).is_ok() && sim.evict(ssn, v, "").is_ok() {
            removed.push(v);
        }
    }
    let mut victims = None;
    if !removed.is_empty() && fits(ssn, t, node) {
        // Reprieve: give back the highest-priority victims that are not needed.
        let mut kept = Vec::new();
        for &v in removed.iter().rev() {
            sim.undo(ssn, v);
            let _ = ssn.simulate_add_task(t, v);
            if !fits(ssn, t, node) {
                let _ = ssn.simulate_remove_task(t, v);
                let _ = sim.evict(ssn, v, "");
                kept.push(v);
            }
        }
        kept.reverse();
        victims = Some(kept);
    }
    sim.discard(ssn);
    ssn.simulation_end(t);
    victims
}

/// kube-scheduler's candidate choice: lowest highest-victim priority, lowest priority sum,
/// fewest victims, latest start among the top victims, then the first.
fn pick_candidate(ssn: &Session, candidates: Vec<Candidate>) -> Option<Candidate> {
    let snap = &ssn.state.snap;
    let prio = |v: &TaskId| pod_priority(&snap.tasks.pod[v.idx()]);
    let key = |c: &Candidate| {
        let highest = c.victims.iter().map(prio).max().unwrap_or(i32::MIN);
        let sum: i64 = c
            .victims
            .iter()
            .map(|v| i64::from(prio(v)) + (1i64 << 31))
            .sum();
        let earliest_top = c
            .victims
            .iter()
            .filter(|v| prio(v) == highest)
            .map(|v| snap.tasks.created[v.idx()].0)
            .min()
            .unwrap_or(i64::MAX);
        (
            highest,
            sum,
            c.victims.len(),
            std::cmp::Reverse(earliest_top),
        )
    };
    let mut best: Option<Candidate> = None;
    for c in candidates {
        if best.as_ref().is_none_or(|b| key(&c) < key(b)) {
            best = Some(c);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use crate::framework::EvictingAction;
    use crate::harness::Harness;

    const CONF: &str = "actions: preempt\ntiers:\n- plugins:\n  - name: conformance\n  - name: gang\n  - name: priority\n";

    fn pod(name: &str, group: &str, node: &str, phase: &str) -> String {
        format!(
            "---\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: ns-{name}, annotations: {{scheduling.k8s.io/group-name: {group}}}}}\nspec: {{schedulerName: volcano, nodeName: '{node}', containers: [{{name: c0, resources: {{requests: {{cpu: '1', memory: 1G}}}}}}]}}\nstatus: {{phase: {phase}}}\n"
        )
    }

    #[test]
    fn a_committed_preemption_counts_its_attempt_victims_and_transaction() {
        let objects = [
            "kind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n".to_string(),
            "---\nkind: PodGroup\nmetadata: {name: low, namespace: ns}\nspec: {queue: q, minMember: 1, priorityClassName: low}\nstatus: {phase: Running}\n".to_string(),
            "---\nkind: PodGroup\nmetadata: {name: high, namespace: ns}\nspec: {queue: q, minMember: 1, priorityClassName: high}\nstatus: {phase: Inqueue}\n".to_string(),
            pod("low-0", "low", "n1", "Running"),
            pod("low-1", "low", "n1", "Running"),
            pod("high-0", "high", "", "Pending"),
        ]
        .concat();
        let mut ssn = Harness::new(CONF)
            .queue("q", 1)
            .node("n1", "2", "4G", &[])
            .manifests(&objects)
            .open()
            .unwrap();
        crate::actions::run(&mut ssn, crate::config::Action::Preempt);
        let d = ssn.close();
        assert_eq!(d.evictions.len(), 1, "{:?}", d.evictions);
        let m = &d.metrics;
        assert_eq!(m.preemption_attempts, 1);
        assert_eq!(
            m.preemption_victims,
            Some(1),
            "gang keeps the low job's minimum of one"
        );
        assert_eq!(m.eviction_transactions[EvictingAction::Preempt as usize], 1);
        assert_eq!(m.eviction_transactions.iter().sum::<u64>(), 1);
    }
}
