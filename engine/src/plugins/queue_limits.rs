//! Queue limits shared by proportion and capacity: capability, guarantee and the real
//! capability left to a queue once every other queue's guarantee is set aside.

use crate::framework::SessionState;
use crate::model::{DimDefault, QueueId, Resource};

/// `spec.capability` with cpu or memory ≤ 0 meaning unlimited; `None` when unset.
pub(crate) fn capability(ssn: &SessionState, q: QueueId) -> Option<Resource> {
    let mut cap = ssn.snap.queues.capability[q.idx()].clone()?;
    if cap.milli_cpu <= 0.0 {
        cap.milli_cpu = f64::MAX;
    }
    if cap.memory <= 0.0 {
        cap.memory = f64::MAX;
    }
    Some(cap)
}

/// `spec.guarantee.resource`, empty when unset.
pub(crate) fn guarantee(ssn: &SessionState, q: QueueId) -> Resource {
    ssn.snap.queues.guarantee[q.idx()]
        .clone()
        .unwrap_or_default()
}

/// Σ guarantees of every queue in the session, with or without jobs.
pub(crate) fn total_guarantee(ssn: &SessionState) -> Resource {
    let mut total = Resource::empty();
    for g in ssn.snap.queues.guarantee.iter().flatten() {
        total.add(g);
    }
    total
}

/// `ExceededPart(total, totalGuarantee) + guarantee`, capped by `capability` where the queue
/// has one (dimensions the capability leaves out stay uncapped).
pub(crate) fn real_capability(
    total: &Resource,
    total_guarantee: &Resource,
    guarantee: &Resource,
    capability: Option<&Resource>,
) -> Resource {
    let mut real = total.exceeded_part(total_guarantee);
    real.add(guarantee);
    if let Some(cap) = capability {
        real.min_dimension(cap, DimDefault::Infinity);
    }
    real
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_capability_sets_other_guarantees_aside_and_respects_capability() {
        let total = Resource::cpu_mem(10_000.0, 100.0);
        let all = Resource::cpu_mem(6_000.0, 0.0);
        let own = Resource::cpu_mem(2_000.0, 0.0);
        let r = real_capability(&total, &all, &own, None);
        assert_eq!((r.milli_cpu, r.memory), (6_000.0, 100.0));
        let cap = Resource::cpu_mem(f64::MAX, 40.0);
        let r = real_capability(&total, &all, &own, Some(&cap));
        assert_eq!((r.milli_cpu, r.memory), (6_000.0, 40.0));
    }
}
