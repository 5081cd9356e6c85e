//! Capacity without hierarchy: attributes for the queues that have jobs, each queue's
//! deserved capped by its real capability and raised to its guarantee.

use super::attrs::QueueAttr;
use crate::framework::SessionState;
use crate::model::{DimDefault, Resource};
use crate::plugins::queue_limits;
use crate::plugins::queue_usage::QueueUsage;

/// Attributes indexed by queue id; `None` for queues without jobs.
pub(super) fn build(ssn: &SessionState) -> Vec<Option<QueueAttr>> {
    let total_guarantee = queue_limits::total_guarantee(ssn);
    let mut attrs: Vec<Option<QueueAttr>> = vec![None; ssn.snap.queues.len()];
    for j in ssn.snap.jobs.ids() {
        let q = ssn.snap.jobs.queue[j.idx()];
        let attr = attrs[q.idx()].get_or_insert_with(|| {
            let guarantee = queue_limits::guarantee(ssn, q);
            let capability = queue_limits::capability(ssn, q);
            QueueAttr {
                deserved: ssn.snap.queues.deserved[q.idx()]
                    .clone()
                    .unwrap_or_default(),
                real_capability: queue_limits::real_capability(
                    &ssn.snap.total,
                    &total_guarantee,
                    &guarantee,
                    capability.as_ref(),
                ),
                capability: capability.unwrap_or_default(),
                guarantee,
                ..Default::default()
            }
        });
        attr.usage.add(&QueueUsage::of_job(ssn, j));
    }
    for attr in attrs.iter_mut().flatten() {
        attr.deserved
            .min_dimension(&attr.real_capability, DimDefault::Infinity);
        attr.deserved = Resource::max_of(&attr.deserved, &attr.guarantee);
        attr.update_share();
    }
    attrs
}
