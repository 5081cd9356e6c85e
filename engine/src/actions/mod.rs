//! Actions: the steps of a scheduling cycle, run in the configured order. Each reads the
//! session through its dispatch functions and changes it through statements.

mod action_arguments;
mod allocate;
mod backfill;
mod class_cache;
mod class_carryover;
mod enqueue;
mod gang_eviction;
mod gangpreempt;
mod gangreclaim;
mod node_search;
mod node_tournament;
mod preempt;
mod priority_queue;
mod reclaim;
mod shuffle;
mod starving_jobs;
mod victims;

pub use action_arguments::refused_arguments;
pub use allocate::QUEUE_ALLOCATION_GATE;
pub use backfill::candidate_order as backfill_candidate_order;
pub use priority_queue::PriorityQueue;

use crate::config::Action;
use crate::framework::Session;

/// Runs one action.
pub fn run(ssn: &mut Session, action: Action) {
    match action {
        Action::Enqueue => enqueue::execute(ssn),
        Action::Allocate => allocate::execute(ssn),
        Action::Backfill => backfill::execute(ssn),
        Action::Preempt => preempt::execute(ssn),
        Action::Reclaim => reclaim::execute(ssn),
        Action::Shuffle => shuffle::execute(ssn),
        Action::GangPreempt => gangpreempt::execute(ssn),
        Action::GangReclaim => gangreclaim::execute(ssn),
    }
}

/// Runs every configured action once, in order.
pub fn run_all(ssn: &mut Session) {
    let actions = ssn.state.config.actions.clone();
    for a in actions {
        run(ssn, a);
    }
}

#[cfg(test)]
mod tests {
    use crate::harness::Harness;

    const GANG: &str = "actions: enqueue, allocate, backfill\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n";

    fn bound(ssn: &crate::framework::Session) -> Vec<(String, String)> {
        let s = &ssn.state.snap;
        let mut v: Vec<(String, String)> = ssn
            .binds
            .iter()
            .map(|&(t, n)| (s.tasks.key(t), s.nodes.name[n.idx()].clone()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn allocate_binds_a_gang_that_fits() {
        let mut ssn = Harness::new(GANG)
            .queue("q", 1)
            .node("n1", "2", "4Gi", &[])
            .pod_group("ns", "pg", "q", 2)
            .pod("ns", "pg-p-0", "pg", "1", "1Gi")
            .pod("ns", "pg-p-1", "pg", "1", "1Gi")
            .open()
            .unwrap();
        super::run_all(&mut ssn);
        assert_eq!(
            bound(&ssn),
            [
                ("ns/pg-p-0".into(), "n1".into()),
                ("ns/pg-p-1".into(), "n1".into())
            ]
        );
    }

    #[test]
    fn allocate_never_binds_part_of_a_gang() {
        let mut ssn = Harness::new(GANG)
            .queue("q", 1)
            .node("n1", "2", "4Gi", &[])
            .pod_group("ns", "pg", "q", 3)
            .pod("ns", "pg-p-0", "pg", "1", "1Gi")
            .pod("ns", "pg-p-1", "pg", "1", "1Gi")
            .pod("ns", "pg-p-2", "pg", "1", "1Gi")
            .open()
            .unwrap();
        super::run_all(&mut ssn);
        assert!(ssn.binds.is_empty());
        let d = ssn.close();
        let pg = &d.pod_groups[0];
        assert_eq!(pg.status.phase, "Inqueue");
        assert_eq!(pg.status.conditions[0].type_, "Unschedulable");
        // Two tasks were placed then discarded: their last transaction still counts them.
        assert!(
            pg.status.conditions[0]
                .message
                .starts_with("1/3 tasks in gang unschedulable"),
            "{}",
            pg.status.conditions[0].message
        );
    }

    #[test]
    fn tasks_without_a_fit_error_of_their_own_share_their_jobs_message() {
        let mut ssn = Harness::new(GANG)
            .queue("q", 1)
            .node("n1", "1", "4Gi", &[])
            .pod_group("ns", "pg", "q", 3)
            .pod("ns", "pg-p-0", "pg", "2", "1Gi")
            .pod("ns", "pg-p-1", "pg", "2", "1Gi")
            .pod("ns", "pg-p-2", "pg", "2", "1Gi")
            .open()
            .unwrap();
        super::run_all(&mut ssn);
        let d = ssn.close();
        let message = |name: &str| {
            let c = d.pod_conditions.iter().find(|c| &*c.name == name);
            c.map(|c| c.message.clone()).unwrap()
        };
        // Allocate tried one task, which failed; the other two carry the job's fit error.
        let tried = ["pg-p-0", "pg-p-1", "pg-p-2"]
            .into_iter()
            .filter(|name| message(name).contains("Insufficient cpu"))
            .count();
        assert!(tried >= 1, "{:?}", d.pod_conditions);
        let (a, b) = (message("pg-p-1"), message("pg-p-2"));
        assert_eq!(a, b);
        assert!(
            std::sync::Arc::ptr_eq(&a, &b),
            "one shared string, not a copy per task"
        );
    }

    #[test]
    fn enqueue_admits_pending_pod_groups_without_min_resources() {
        let mut pg: crate::api::PodGroup = Harness::parse(
            "metadata: {name: pg, namespace: ns}\nspec: {queue: q, minMember: 1}\nstatus: {phase: Pending}\n",
        );
        pg.status.phase = "Pending".into();
        let mut ssn = Harness::new(GANG)
            .queue("q", 1)
            .node("n1", "2", "4Gi", &[])
            .pod_group_object(pg)
            .pod("ns", "p", "pg", "1", "1Gi")
            .open()
            .unwrap();
        let j = ssn.state.snap.job_id("ns/pg").unwrap();
        super::run(&mut ssn, super::Action::Enqueue);
        assert_eq!(ssn.state.job_phase(j), "Inqueue");
        super::run(&mut ssn, super::Action::Allocate);
        assert_eq!(ssn.binds.len(), 1);
    }

    #[test]
    fn allocate_skips_pending_pod_groups_when_enqueue_is_configured() {
        let pg: crate::api::PodGroup = Harness::parse(
            "metadata: {name: pg, namespace: ns}\nspec: {queue: q, minMember: 1}\nstatus: {phase: Pending}\n",
        );
        let mut ssn = Harness::new(GANG)
            .queue("q", 1)
            .node("n1", "2", "4Gi", &[])
            .pod_group_object(pg)
            .pod("ns", "p", "pg", "1", "1Gi")
            .open()
            .unwrap();
        super::run(&mut ssn, super::Action::Allocate);
        assert!(ssn.binds.is_empty());
    }

    #[test]
    fn backfill_places_best_effort_tasks() {
        let mut ssn = Harness::new(GANG)
            .queue("q", 1)
            .node("n1", "2", "4Gi", &[])
            .pod_group("ns", "pg", "q", 1)
            .pod("ns", "be", "pg", "0", "0")
            .open()
            .unwrap();
        super::run_all(&mut ssn);
        assert_eq!(bound(&ssn), [("ns/be".into(), "n1".into())]);
    }

    #[test]
    fn every_action_volcano_registers_parses_in_order() {
        let c = crate::config::SchedulerConfig::parse(
            "actions: enqueue, allocate, backfill, preempt, reclaim, shuffle, gangpreempt, gangreclaim\n",
        )
        .unwrap();
        assert_eq!(c.actions, super::Action::ALL);
    }
}
