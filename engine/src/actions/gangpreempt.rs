//! `gangpreempt` (Volcano: pkg/scheduler/actions/gangpreempt, gangreclaim and actions/utils): a starving job takes room from lower-priority jobs of its own
//! queue, gang by gang: victims come in bundles that either keep their gang ready or give up
//! the whole victim job, and nothing is evicted unless the preemptor becomes pipelined.

use super::gang_eviction::{Flavor, execute as run, job_preemptable};
use crate::framework::{EvictionKind, Session};
use crate::model::{JobId, QueueId, TaskId};

/// gangpreempt's victims and their order.
struct GangPreempt;

impl Flavor for GangPreempt {
    const KIND: EvictionKind = EvictionKind::GangPreempt;

    /// Preemption stays inside a queue, so a queue's share does not matter.
    fn queue_may_evict(_: &Session, _: QueueId) -> bool {
        true
    }

    fn demand_may_evict(_: &Session, _: QueueId, _: &[TaskId]) -> bool {
        true
    }

    /// Bound or Running, preemptable, of another job of the same queue whose PodGroup allows
    /// preemption and whose priority is strictly lower. (Unlike `preempt`, a best-effort
    /// preemptor is not kept off non-best-effort victims; `UnifiedEvictable` decides.)
    fn is_candidate(ssn: &Session, preemptor: JobId, t: TaskId) -> bool {
        let snap = &ssn.state.snap;
        let Some(vj) = ssn.state.job_of(t) else {
            return false;
        };
        ssn.state.tasks.status[t].is_preemptable()
            && snap.tasks.preemptable[t.idx()]
            && vj != preemptor
            && snap.jobs.queue[vj.idx()] == snap.jobs.queue[preemptor.idx()]
            && job_preemptable(ssn, vj)
            && snap.jobs.priority[vj.idx()] < snap.jobs.priority[preemptor.idx()]
    }

    /// The job that would be scheduled last loses first (reverse JobOrder).
    fn victim_first(ssn: &Session, _: JobId, l: JobId, r: JobId) -> bool {
        l != r && !ssn.job_order_less(l, r)
    }
}

/// Runs the action.
pub fn execute(ssn: &mut Session) {
    run::<GangPreempt>(ssn);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Harness;

    #[test]
    fn candidates_are_preemptable_tasks_of_strictly_lower_priority_jobs_of_the_same_queue() {
        let pg = |name: &str, queue: &str, class: &str, phase: &str| {
            format!(
                "---\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{queue: {queue}, minMember: 1, priorityClassName: {class}}}\nstatus: {{phase: {phase}}}\n"
            )
        };
        let pod = |name: &str, group: &str, labels: &str, phase: &str| {
            format!(
                "---\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: ns-{name}, labels: {{{labels}}}, annotations: {{scheduling.k8s.io/group-name: {group}}}}}\nspec: {{nodeName: n1, containers: [{{name: c0, resources: {{requests: {{cpu: '1', memory: 1Gi}}}}}}]}}\nstatus: {{phase: {phase}}}\n"
            )
        };
        let objects = [
            "kind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n---\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 1\n".to_string(),
            pg("h", "q", "high", "Running"),
            pg("low", "q", "low", "Running"),
            pg("peer", "q", "high", "Running"),
            pg("elsewhere", "other", "low", "Running"),
            pod("h-running", "h", "", "Running"),
            pod("low-running", "low", "", "Running"),
            pod("low-bound", "low", "", "Pending"),
            pod("low-succeeded", "low", "", "Succeeded"),
            pod("low-pinned", "low", "volcano.sh/preemptable: 'false'", "Running"),
            pod("peer-running", "peer", "", "Running"),
            pod("elsewhere-running", "elsewhere", "", "Running"),
        ]
        .concat();
        let ssn = Harness::new("actions: gangpreempt\ntiers:\n- plugins:\n  - name: priority\n")
            .queue("q", 1)
            .queue("other", 1)
            .node("n1", "16", "16Gi", &[])
            .manifests(&objects)
            .open()
            .unwrap();
        let snap = &ssn.state.snap;
        let h = snap.job_id("ns/h").unwrap();
        let candidates: Vec<&str> = snap
            .tasks
            .name
            .iter()
            .enumerate()
            .filter(|&(i, _)| GangPreempt::is_candidate(&ssn, h, TaskId(i as u32)))
            .map(|(_, n)| &**n)
            .collect();
        assert_eq!(candidates, ["low-bound", "low-running"]);
    }
}
