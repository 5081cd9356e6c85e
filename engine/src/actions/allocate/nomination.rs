//! The nominated hyper-node fast path (Volcano: pkg/scheduler/actions/allocate/allocate.go, the nominated hyper-node path): gangpreempt / gangreclaim made room for a
//! sub-job inside a hyper-node and its tasks carry nominated nodes there; allocate places them
//! on those nodes directly while every nomination still holds, and otherwise forgets it.

use super::tasks::place;
use crate::actions::PriorityQueue;
use crate::actions::node_search::{PredicateHelper, allocate_predicate};
use crate::framework::{Session, Statement};
use crate::model::{HyperNodeId, NodeId, SubJobId, TaskId};

/// `allocateFromNomination`: when `sj` has a nominated hyper-node and every task of `tasks`
/// may go to its nominated node inside it, places them (allocated or pipelined) in one
/// statement, drains `tasks` and widens the sub-job's allocated hyper-node to cover the
/// nomination. Otherwise the nomination and the tasks' nominated nodes are dropped for the rest
/// of the session and `None` sends the caller down the normal path.
pub fn allocate_from_nomination(
    ssn: &mut Session,
    sj: SubJobId,
    tasks: &mut PriorityQueue<TaskId>,
    error_cache: bool,
) -> Option<Statement> {
    let pinned = ssn.state.sub_jobs.nominated_hyper_node[sj]?;
    let placed = nominated_nodes(ssn, sj, pinned, tasks, error_cache)
        .and_then(|plan| place_all(ssn, sj, pinned, &plan));
    let Some(stmt) = placed else {
        ssn.state.set_sub_job_nominated_hyper_node(sj, None);
        for &t in tasks.items() {
            ssn.state.clear_nomination(t);
        }
        return None;
    };
    *tasks = PriorityQueue::new();
    let allocated = ssn.state.sub_jobs.allocated_hyper_node[sj];
    let allocated = ssn.state.snap.hyper_nodes.lca(allocated, Some(pinned));
    ssn.state.set_sub_job_allocated_hyper_node(sj, allocated);
    Some(stmt)
}

/// Each task (in task order) with its nominated node, while the pinned hyper-node still has
/// nodes and every task is allocatable in the queue, nominated inside it and passes the
/// allocate predicates there.
fn nominated_nodes(
    ssn: &Session,
    sj: SubJobId,
    pinned: HyperNodeId,
    tasks: &PriorityQueue<TaskId>,
    error_cache: bool,
) -> Option<Vec<(TaskId, NodeId)>> {
    let snap = &ssn.state.snap;
    let leaves = &snap.hyper_nodes.real_node_list[pinned.idx()];
    if leaves.is_empty() {
        return None;
    }
    let queue = snap.jobs.queue[snap.sub_jobs.job[sj.idx()].idx()];
    let mut helper = PredicateHelper::new(error_cache);
    let mut preview = tasks.clone();
    let mut plan = Vec::new();
    while let Some(t) = preview.pop(|l, r| ssn.task_order_less(l, r)) {
        if !ssn.allocatable(queue, t) {
            return None;
        }
        let node = snap
            .nodes
            .id(ssn.state.nominated_node_name(t))
            .filter(|n| leaves.contains(n))?;
        ssn.pre_predicate(t).ok()?;
        if helper
            .predicate_nodes(ssn, t, &[node], allocate_predicate)
            .0
            .is_empty()
        {
            return None;
        }
        plan.push((t, node));
    }
    Some(plan)
}

/// Places every task on its node; a failed placement discards them all.
fn place_all(
    ssn: &mut Session,
    sj: SubJobId,
    pinned: HyperNodeId,
    plan: &[(TaskId, NodeId)],
) -> Option<Statement> {
    let has_topology = ssn.state.sub_jobs.topology[sj].is_some();
    let mut stmt = Statement::new();
    for &(t, n) in plan {
        if has_topology {
            ssn.state.set_task_allocated_hyper_node(t, Some(pinned));
        }
        if place(ssn, &mut stmt, t, n).is_err() {
            stmt.discard(ssn);
            return None;
        }
    }
    Some(stmt)
}

#[cfg(test)]
mod tests {
    use crate::framework::Session;
    use crate::harness::Harness;

    const CONF: &str =
        "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n";

    /// n1 and n2 in hyper-node s0, n3 in s1; job ns/pg needs both its 1-cpu pods, whose
    /// nominated nodes are `p0` and `p1`.
    fn cluster(p0: &str, p1: &str) -> Session {
        let node = |n: &str| {
            format!(
                "---\nkind: Node\nmetadata: {{name: {n}}}\nstatus: {{allocatable: {{cpu: '2', memory: 4Gi, pods: '10'}}}}\n"
            )
        };
        let hyper_node = |h: &str, members: &[&str]| {
            let m: Vec<String> = members
                .iter()
                .map(|n| format!("{{type: Node, selector: {{exactMatch: {{name: {n}}}}}}}"))
                .collect();
            format!(
                "---\nkind: HyperNode\nmetadata: {{name: {h}}}\nspec: {{tier: 1, members: [{}]}}\n",
                m.join(", ")
            )
        };
        let pod = |name: &str, nominated: &str| {
            format!(
                "---\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: ns-{name}, annotations: {{scheduling.k8s.io/group-name: pg}}}}\nspec: {{containers: [{{name: c0, resources: {{requests: {{cpu: '1', memory: 1Gi}}}}}}]}}\nstatus: {{phase: Pending, nominatedNodeName: '{nominated}'}}\n"
            )
        };
        let objects = [
            node("n1"),
            node("n2"),
            node("n3"),
            hyper_node("s0", &["n1", "n2"]),
            hyper_node("s1", &["n3"]),
            pod("pg-p-0", p0),
            pod("pg-p-1", p1),
        ]
        .concat();
        let mut ssn = Harness::new(CONF)
            .queue("q", 1)
            .pod_group("ns", "pg", "q", 2)
            .manifests(&objects)
            .open()
            .unwrap();
        let snap = ssn.state.snap.clone();
        let sj = snap.jobs.sub_jobs[snap.job_id("ns/pg").unwrap().idx()][0];
        ssn.state
            .set_sub_job_nominated_hyper_node(sj, snap.hyper_nodes.by_name.get("s0").copied());
        ssn
    }

    fn bound_nodes(ssn: &Session) -> Vec<String> {
        ssn.binds
            .iter()
            .map(|&(_, n)| ssn.state.snap.nodes.name[n.idx()].clone())
            .collect()
    }

    fn nomination_left(ssn: &Session) -> bool {
        ssn.state
            .sub_jobs
            .nominated_hyper_node
            .iter()
            .any(Option::is_some)
    }

    fn allocated_hyper_node(ssn: &Session) -> Option<String> {
        let h = &ssn.state.snap.hyper_nodes;
        ssn.state.sub_jobs.allocated_hyper_node.as_slice()[0].map(|x| h.name[x.idx()].clone())
    }

    #[test]
    fn nominated_sub_job_goes_to_its_nominated_nodes_and_the_nomination_is_redeemed() {
        let mut ssn = cluster("n2", "n2");
        crate::actions::run(&mut ssn, crate::config::Action::Allocate);
        assert_eq!(bound_nodes(&ssn), ["n2", "n2"]);
        assert!(!nomination_left(&ssn));
        // Only the fast path records the hyper-node of a sub-job without a topology.
        assert_eq!(allocated_hyper_node(&ssn).as_deref(), Some("s0"));
    }

    #[test]
    fn nomination_outside_the_hyper_node_falls_back_and_is_forgotten() {
        let mut ssn = cluster("n2", "n3");
        crate::actions::run(&mut ssn, crate::config::Action::Allocate);
        // The normal path takes the first of the equally scored nodes for both pods.
        assert_eq!(bound_nodes(&ssn), ["n1", "n1"]);
        assert!(!nomination_left(&ssn));
        assert!(ssn.state.tasks.nomination_cleared.iter().all(|&c| c));
        assert_eq!(allocated_hyper_node(&ssn), None);
    }

    #[test]
    fn task_without_a_nominated_node_voids_the_nomination() {
        let mut ssn = cluster("n2", "");
        crate::actions::run(&mut ssn, crate::config::Action::Allocate);
        assert_eq!(bound_nodes(&ssn), ["n1", "n1"]);
        assert!(!nomination_left(&ssn));
    }
}
