//! `reclaim` (Volcano: pkg/scheduler/actions/reclaim/reclaim.go): queues below their fair share take resources back from Running tasks
//! of other, reclaimable queues. Nodes are tried in order, not scored.

use crate::actions::action_arguments::{ErrorCacheArgs, lenient};
use std::collections::BTreeMap;

use super::PriorityQueue;
use super::node_search::{PredicateHelper, by_shard};
use super::starving_jobs::StarvingJobs;
use super::victims::{
    node_tasks_where, nodes_worth_trying, pop_victim, predicate_for_preempt, victim_queue,
    victims_can_make_room, victims_in_order,
};
use crate::framework::{EvictingAction, Session, Statement};
use crate::model::{DimDefault, JobId, QueueId, TaskId, TaskStatus};

/// Runs the action.
pub fn execute(ssn: &mut Session) {
    let snap = ssn.state.snap.clone();
    let error_cache = lenient(
        &ssn.state.config.action_arguments("reclaim"),
        ErrorCacheArgs::parse,
    )
    .0
    .error_cache;
    let mut starving = StarvingJobs::of(ssn);
    let mut tasks: BTreeMap<JobId, PriorityQueue<TaskId>> = BTreeMap::new();
    for &j in &starving.jobs {
        let mut pq = PriorityQueue::new();
        for &t in &snap.jobs.tasks[j.idx()] {
            if ssn.state.tasks.status[t] == TaskStatus::Pending && !snap.tasks.sch_gated[t.idx()] {
                pq.push(t, |l, r| ssn.task_order_less(l, r));
            }
        }
        tasks.insert(j, pq);
    }
    while let Some(q) = starving.queues.pop(|l, r| ssn.queue_order_less(l, r)) {
        if ssn.overused(q) {
            continue;
        }
        while let Some(job) = starving.pop_job(ssn, q) {
            let mut stmt = Statement::new();
            while ssn.job_starving(job) {
                let Some(t) = tasks
                    .get_mut(&job)
                    .and_then(|p| p.pop(|l, r| ssn.task_order_less(l, r)))
                else {
                    break;
                };
                let pod = &snap.tasks.pod[t.idx()];
                if pod.spec.preemption_policy.as_deref() == Some("Never")
                    || !ssn.preemptive(q, &[t])
                    || ssn.pre_predicate(t).is_err()
                {
                    continue;
                }
                reclaim_for_task(ssn, &mut stmt, t, q, error_cache);
            }
            if ssn.job_pipelined(job) {
                stmt.commit_for(ssn, EvictingAction::Reclaim);
            } else {
                stmt.discard(ssn);
            }
        }
    }
}

fn reclaim_for_task(
    ssn: &mut Session,
    stmt: &mut Statement,
    t: TaskId,
    q: QueueId,
    error_cache: bool,
) {
    let snap = ssn.state.snap.clone();
    let nodes = nodes_worth_trying(ssn, t);
    let (found, _) =
        PredicateHelper::new(error_cache).predicate_nodes(ssn, t, &nodes, predicate_for_preempt);
    // Under soft sharding the shard's own nodes are tried first (Volcano: actions/reclaim/reclaim.go, reclaimForTask).
    for node in by_shard(ssn, found).into_iter().flatten() {
        let reclaimees = node_tasks_where(ssn, node, |v| {
            ssn.state.tasks.status[v] == TaskStatus::Running
                && snap.tasks.preemptable[v.idx()]
                && ssn.state.job_of(v).is_some_and(|vj| {
                    let vq = snap.jobs.queue[vj.idx()];
                    vq != q && snap.queues.reclaimable[vq.idx()]
                })
        });
        if reclaimees.is_empty() {
            continue;
        }
        // Plugins see candidates in eviction order (capacity relies on it, as Volcano's sorts them).
        let reclaimees = victims_in_order(ssn, &reclaimees, t);
        let victims = ssn.reclaimable(t, &reclaimees);
        if !victims_can_make_room(ssn, t, node, &victims) {
            continue;
        }
        let req = ssn.state.resreq(t).clone();
        let mut avail = ssn.state.future_idle(node).into_owned();
        let mut queue = victim_queue(ssn, &victims, t);
        let mut ns = Statement::new();
        let mut evicted = false;
        while !req.less_equal(&avail, DimDefault::Zero) {
            let Some(v) = pop_victim(ssn, &mut queue, t) else {
                break;
            };
            if ns.evict(ssn, v, "reclaim").is_ok() {
                evicted = true;
                avail.add(ssn.state.resreq(v));
            }
        }
        if !req.less_equal(&avail, DimDefault::Zero) || ns.pipeline(ssn, t, node, evicted).is_err()
        {
            ns.discard(ssn);
            continue;
        }
        stmt.merge(&mut ns);
        return;
    }
}
