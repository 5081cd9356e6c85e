//! Proportion's per-queue attributes, built at session open for the queues that have jobs.

use crate::framework::SessionState;
use crate::model::{DimDefault, QueueId, Resource, share};
use crate::plugins::queue_limits;
use crate::plugins::queue_usage::QueueUsage;

/// Volcano's proportion `queueAttr`.
#[derive(Debug, Clone)]
pub(super) struct QueueAttr {
    pub weight: i32,
    /// The fair share found by water-filling; allocation is capped by it.
    pub deserved: Resource,
    pub usage: QueueUsage,
    /// The admission limit (see `queue_limits::real_capability`).
    pub real_capability: Resource,
    pub guarantee: Resource,
    /// The largest `allocated / deserved` over the deserved dimensions.
    pub share: f64,
}

impl QueueAttr {
    /// Recomputes `share` from `deserved` and the allocation.
    pub fn update_share(&mut self) {
        self.share = self
            .deserved
            .resource_names()
            .map(|n| share(self.usage.allocated.get(n), self.deserved.get(n)))
            .fold(0.0, f64::max);
    }

    /// Whether `allocated + req` stays within `deserved` on the dimensions `req` asks for.
    pub fn fits_deserved(&self, req: &Resource) -> bool {
        self.usage
            .allocated
            .plus_fits_with_dimension(req, &self.deserved)
    }

    /// `deserved ≤ allocated`: the queue has had its share.
    pub fn overused(&self) -> bool {
        self.deserved
            .less_equal(&self.usage.allocated, DimDefault::Zero)
    }
}

/// Attributes of every queue with a job in the session, indexed by queue id, `deserved` still
/// empty.
pub(super) fn build(ssn: &SessionState) -> Vec<Option<QueueAttr>> {
    let total_guarantee = queue_limits::total_guarantee(ssn);
    ssn.snap
        .queues
        .ids()
        .zip(QueueUsage::per_queue(ssn))
        .map(|(q, usage)| {
            usage.map(|usage| QueueAttr {
                usage,
                ..new_attr(ssn, q, &total_guarantee)
            })
        })
        .collect()
}

fn new_attr(ssn: &SessionState, q: QueueId, total_guarantee: &Resource) -> QueueAttr {
    let guarantee = queue_limits::guarantee(ssn, q);
    let capability = queue_limits::capability(ssn, q);
    QueueAttr {
        weight: ssn.snap.queues.weight[q.idx()],
        deserved: Resource::empty(),
        usage: QueueUsage::default(),
        real_capability: queue_limits::real_capability(
            &ssn.snap.total,
            total_guarantee,
            &guarantee,
            capability.as_ref(),
        ),
        guarantee,
        share: 0.0,
    }
}
