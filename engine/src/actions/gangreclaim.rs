//! `gangreclaim` (Volcano: pkg/scheduler/actions/gangpreempt, gangreclaim and actions/utils): a starving job of a queue below its share takes room back from
//! Running tasks of other, reclaimable queues, gang by gang, committing only when the job
//! becomes pipelined.

use super::gang_eviction::{Flavor, execute as run, job_preemptable};
use crate::framework::{EvictionKind, Session};
use crate::model::{JobId, QueueId, TaskId, TaskStatus};

/// gangreclaim's victims and their order.
struct GangReclaim;

impl Flavor for GangReclaim {
    const KIND: EvictionKind = EvictionKind::GangReclaim;

    /// An overused queue reclaims nothing.
    fn queue_may_evict(ssn: &Session, q: QueueId) -> bool {
        !ssn.overused(q)
    }

    /// The queue must be allowed to reclaim for the whole demand at once.
    fn demand_may_evict(ssn: &Session, q: QueueId, demand: &[TaskId]) -> bool {
        ssn.preemptive(q, demand)
    }

    /// Running, preemptable, of a job in another, reclaimable queue whose PodGroup allows
    /// preemption.
    fn is_candidate(ssn: &Session, reclaimer: JobId, t: TaskId) -> bool {
        let snap = &ssn.state.snap;
        let Some(vj) = ssn.state.job_of(t) else {
            return false;
        };
        let vq = snap.jobs.queue[vj.idx()];
        ssn.state.tasks.status[t] == TaskStatus::Running
            && snap.tasks.preemptable[t.idx()]
            && vq != snap.jobs.queue[reclaimer.idx()]
            && job_preemptable(ssn, vj)
            && snap.queues.reclaimable[vq.idx()]
    }

    /// Victim queues in VictimQueueOrder for the reclaimer's queue; bundles of one queue are
    /// left to their ROI.
    fn victim_first(ssn: &Session, reclaimer: JobId, l: JobId, r: JobId) -> bool {
        let queues = &ssn.state.snap.jobs.queue;
        let (lq, rq) = (queues[l.idx()], queues[r.idx()]);
        lq != rq && ssn.victim_queue_order_less(lq, rq, queues[reclaimer.idx()])
    }
}

/// Runs the action.
pub fn execute(ssn: &mut Session) {
    run::<GangReclaim>(ssn);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Harness;

    #[test]
    fn candidates_are_running_preemptable_tasks_of_other_reclaimable_queues() {
        let pg = |name: &str, queue: &str| {
            format!(
                "---\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{queue: {queue}, minMember: 1}}\nstatus: {{phase: Running}}\n"
            )
        };
        let pod = |name: &str, group: &str, labels: &str, phase: &str| {
            format!(
                "---\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: ns-{name}, labels: {{{labels}}}, annotations: {{scheduling.k8s.io/group-name: {group}}}}}\nspec: {{nodeName: n1, containers: [{{name: c0, resources: {{requests: {{cpu: '1', memory: 1Gi}}}}}}]}}\nstatus: {{phase: {phase}}}\n"
            )
        };
        let objects = [
            "kind: Queue\nmetadata: {name: kept}\nspec: {weight: 1, reclaimable: false}\n"
                .to_string(),
            pg("r", "mine"),
            pg("peer", "mine"),
            pg("other", "theirs"),
            pg("guarded", "kept"),
            pod("peer-running", "peer", "", "Running"),
            pod("other-running", "other", "", "Running"),
            pod("other-bound", "other", "", "Pending"),
            pod(
                "other-pinned",
                "other",
                "volcano.sh/preemptable: 'false'",
                "Running",
            ),
            pod("guarded-running", "guarded", "", "Running"),
        ]
        .concat();
        let ssn = Harness::new("actions: gangreclaim\ntiers:\n- plugins:\n  - name: gang\n")
            .queue("mine", 1)
            .queue("theirs", 1)
            .node("n1", "16", "16Gi", &[])
            .manifests(&objects)
            .open()
            .unwrap();
        let snap = &ssn.state.snap;
        let r = snap.job_id("ns/r").unwrap();
        let candidates: Vec<&str> = snap
            .tasks
            .name
            .iter()
            .enumerate()
            .filter(|&(i, _)| GangReclaim::is_candidate(&ssn, r, TaskId(i as u32)))
            .map(|(_, n)| &**n)
            .collect();
        assert_eq!(candidates, ["other-running"]);
    }
}
