//! The per-job resource figures the queue plugins (proportion, capacity, overcommit) book:
//! Volcano's `GetMinResources`, `GetInqueueResource`, `DeductSchGatedResources` and
//! `GetElasticResources`.

use crate::framework::SessionState;
use crate::model::{Dim, JobId, Resource, ResourceName, is_scalar_resource_name};

/// The scheduling gate Volcano itself puts on pods awaiting queue admission.
const QUEUE_ALLOCATION_GATE: &str = "scheduling.volcano.sh/queue-allocation-gate";

/// `spec.minResources`; `None` only when the PodGroup has none (an empty list is `Some`).
pub(crate) fn min_resources(ssn: &SessionState, j: JobId) -> Option<&Resource> {
    ssn.snap.jobs.min_resources[j.idx()].as_ref()
}

/// `CalculateAllocatedTaskNum`: tasks in an allocated status.
fn allocated_task_count(ssn: &SessionState, j: JobId) -> usize {
    ssn.snap.jobs.tasks[j.idx()]
        .iter()
        .filter(|&t| ssn.tasks.status[t].is_allocated())
        .count()
}

/// `GetInqueueResource(job, job.Allocated)`: the part of `minResources` the job's allocations
/// do not cover yet. A scalar the job holds none of is reserved in full; names Volcano does not
/// treat as resources (`count/*`, `ephemeral-storage`, unprefixed names) are skipped.
fn unallocated_minimum(ssn: &SessionState, j: JobId) -> Resource {
    let mut out = Resource::empty();
    let Some(list) = ssn.snap.jobs.podgroup[j.idx()].spec.min_resources.as_ref() else {
        return out;
    };
    let min = Resource::from_list(list);
    let allocated = &ssn.jobs.allocated[j];
    for name in list.keys() {
        match name.as_str() {
            "cpu" | "memory" | "pods" => {
                let n = ResourceName::of(name);
                let reserved = min.get(n) - allocated.get(n);
                if reserved > 0.0 {
                    out.set(n, reserved);
                }
            }
            other if other.starts_with("count/") || !is_scalar_resource_name(other) => {}
            other => {
                let d = Dim::of(other);
                let wanted = min.scalar(d).unwrap_or(0.0);
                match allocated.scalar(d) {
                    None => out.set_scalar(d, wanted),
                    Some(held) if wanted - held > 0.0 => out.set_scalar(d, wanted - held),
                    Some(_) => {}
                }
            }
        }
    }
    out
}

/// Σ Resreq of the job's tasks held back by a scheduling gate other than Volcano's own queue
/// admission gate (those still count as admitted).
fn gated_request(ssn: &SessionState, j: JobId) -> Resource {
    let mut gated = Resource::empty();
    for &t in &ssn.snap.jobs.tasks[j.idx()] {
        if !ssn.snap.tasks.sch_gated[t.idx()] {
            continue;
        }
        let gates = &ssn.snap.tasks.pod[t.idx()].spec.scheduling_gates;
        if gates.len() == 1 && gates[0].name == QUEUE_ALLOCATION_GATE {
            continue;
        }
        gated.add(ssn.resreq(t));
    }
    gated
}

/// `DeductSchGatedResources(r)`: `r` less the gated tasks' requests, floored at zero per
/// dimension, so gated pods do not keep other jobs out of the queue.
pub(crate) fn deduct_sch_gated(ssn: &SessionState, j: JobId, r: &Resource) -> Resource {
    let gated = gated_request(ssn, j);
    if gated.is_empty() {
        return r.clone();
    }
    let mut out = r.clone();
    out.milli_cpu = (r.milli_cpu - gated.milli_cpu).max(0.0);
    out.memory = (r.memory - gated.memory).max(0.0);
    for (d, v) in r.scalars() {
        if let Some(g) = gated.scalar(d) {
            out.set_scalar(d, (v - g).max(0.0));
        }
    }
    out
}

/// `GetElasticResources`: what the job holds beyond its `minResources`.
pub(crate) fn elastic(ssn: &SessionState, j: JobId) -> Resource {
    let mut elastic = Resource::empty();
    add_elastic(ssn, j, &mut elastic);
    elastic
}

/// Adds `elastic(j)` to `sum` without building it.
pub(crate) fn add_elastic(ssn: &SessionState, j: JobId, sum: &mut Resource) {
    let empty = Resource::empty();
    let min = min_resources(ssn, j).unwrap_or(&empty);
    sum.add_excess(&ssn.jobs.allocated[j], min);
}

/// What an admitted job still reserves at session open: `DeductSchGated(GetInqueueResource)`
/// for an Inqueue PodGroup with `minResources`, and for a Running one whose allocated tasks
/// reach `minMember` (a finished driver must not re-reserve its gang).
pub(crate) fn reserved_at_open(ssn: &SessionState, j: JobId) -> Option<Resource> {
    min_resources(ssn, j)?;
    let pg = &ssn.snap.jobs.podgroup[j.idx()];
    let admitted = match ssn.job_phase(j) {
        "Inqueue" => true,
        "Running" => allocated_task_count(ssn, j) as i64 >= i64::from(pg.spec.min_member),
        _ => false,
    };
    admitted.then(|| deduct_sch_gated(ssn, j, &unallocated_minimum(ssn, j)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{ALLOCATE_ONLY, session};

    const JOB: &str = r#"
kind: Queue
metadata: {name: q}
---
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: 8, memory: 8Gi, pods: 10}}
---
kind: PodGroup
metadata: {name: pg, namespace: ns}
spec: {queue: q, minMember: 1, minResources: {cpu: 3, memory: 1Gi, nvidia.com/gpu: 2, count/pods: 4}}
status: {phase: Running}
---
kind: Pod
metadata: {name: p1, namespace: ns, annotations: {scheduling.k8s.io/group-name: pg}}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: 2, memory: 2Gi}}}]}
status: {phase: Running}
---
kind: Pod
metadata: {name: p2, namespace: ns, annotations: {scheduling.k8s.io/group-name: pg}}
spec:
  schedulingGates: [{name: example.com/hold}]
  containers: [{name: c, resources: {requests: {cpu: 1}}}]
status: {phase: Pending}
---
kind: Pod
metadata: {name: p3, namespace: ns, annotations: {scheduling.k8s.io/group-name: pg}}
spec:
  schedulingGates: [{name: scheduling.volcano.sh/queue-allocation-gate}]
  containers: [{name: c, resources: {requests: {cpu: 1}}}]
status: {phase: Pending}
"#;

    #[test]
    fn unallocated_minimum_reserves_unheld_scalars_in_full_and_skips_count_quotas() {
        let ssn = session(ALLOCATE_ONLY, JOB);
        let r = unallocated_minimum(&ssn.state, JobId(0));
        assert_eq!(r.milli_cpu, 1000.0);
        assert_eq!(r.memory, 0.0, "memory is covered by the running pod");
        assert_eq!(r.scalar(Dim::of("nvidia.com/gpu")), Some(2000.0));
        assert_eq!(r.scalar(Dim::of("count/pods")), None);
    }

    #[test]
    fn gated_tasks_are_deducted_except_those_waiting_only_for_queue_admission() {
        let ssn = session(ALLOCATE_ONLY, JOB);
        let r = deduct_sch_gated(&ssn.state, JobId(0), &Resource::cpu_mem(3000.0, 5.0));
        assert_eq!((r.milli_cpu, r.memory), (2000.0, 5.0));
        let floored = deduct_sch_gated(&ssn.state, JobId(0), &Resource::cpu_mem(500.0, 0.0));
        assert_eq!(floored.milli_cpu, 0.0);
    }

    #[test]
    fn running_job_reaching_min_member_still_reserves_its_remaining_minimum() {
        let ssn = session(ALLOCATE_ONLY, JOB);
        let r = reserved_at_open(&ssn.state, JobId(0)).expect("running and ready");
        assert_eq!(r.milli_cpu, 0.0, "1 cpu left, the gated pod's cpu deducted");
        assert_eq!(
            elastic(&ssn.state, JobId(0)).memory,
            1024.0 * 1024.0 * 1024.0
        );
    }
}
