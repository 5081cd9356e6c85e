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
    let mut attrs: Vec<Option<QueueAttr>> = ssn
        .snap
        .queues
        .ids()
        .zip(QueueUsage::per_queue(ssn))
        .map(|(q, usage)| {
            let usage = usage?;
            let guarantee = queue_limits::guarantee(ssn, q);
            let capability = queue_limits::capability(ssn, q);
            Some(QueueAttr {
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
                usage,
                ..Default::default()
            })
        })
        .collect();
    for attr in attrs.iter_mut().flatten() {
        attr.deserved
            .min_dimension(&attr.real_capability, DimDefault::Infinity);
        attr.deserved = Resource::max_of(&attr.deserved, &attr.guarantee);
        attr.update_share();
    }
    attrs
}
