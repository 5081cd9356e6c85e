//! Capacity's per-queue attributes and the share order between queues.

use std::cmp::Ordering;

use crate::model::{QueueId, Resource, share};
use crate::plugins::queue_usage::QueueUsage;
use crate::plugins::share_order::compare_shares;

/// Volcano's capacity `queueAttr`.
#[derive(Debug, Clone, Default)]
pub(super) struct QueueAttr {
    /// The queue's explicit `spec.deserved` (raised to the guarantee); reclaim aims at it.
    pub deserved: Resource,
    pub usage: QueueUsage,
    /// The configured limit (hierarchy: inherited from the parent where unset).
    pub capability: Resource,
    /// What the queue may hold at most: allocation and admission stop here.
    pub real_capability: Resource,
    pub guarantee: Resource,
    /// 1 for a best-effort queue (empty deserved), else the largest `allocated / deserved`.
    pub share: f64,
    /// Ancestors from the root down to the parent (hierarchy only).
    pub ancestors: Vec<QueueId>,
    /// Child queues (hierarchy only).
    pub children: Vec<QueueId>,
}

impl QueueAttr {
    /// Recomputes `share`. Best-effort queues get 1 so that every queue with a deserved share
    /// below 1 goes first.
    pub fn update_share(&mut self) {
        if self.deserved.is_empty() {
            self.share = 1.0;
            return;
        }
        self.share = self
            .deserved
            .resource_names()
            .map(|n| share(self.usage.allocated.get(n), self.deserved.get(n)))
            .fold(0.0, f64::max);
    }

    /// Whether `allocated + req` stays within the real capability on the dimensions `req`
    /// asks for.
    pub fn fits_real_capability(&self, req: &Resource) -> bool {
        self.usage
            .allocated
            .plus(req)
            .less_equal_with_dimension(&self.real_capability, req)
            .is_ok()
    }

    /// A queue without children (always true without hierarchy).
    pub fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    /// The ancestor `depth` levels up (1 = parent).
    pub fn ancestor_at_depth(&self, depth: usize) -> Option<QueueId> {
        let n = self.ancestors.len();
        (depth > 0 && depth <= n).then(|| self.ancestors[n - depth])
    }
}

/// The smaller share first; on equal shares a queue with a deserved share before a
/// best-effort one, which keeps best-effort queues from reclaiming back and forth.
pub(super) fn compare_share_with_deserved(l: &QueueAttr, r: &QueueAttr) -> Ordering {
    if l.share == r.share {
        return l.deserved.is_empty().cmp(&r.deserved.is_empty());
    }
    compare_shares(l.share, r.share)
}

/// The index in both ancestor lists of the deepest ancestor they share (0 when only the root,
/// or nothing, is shared).
pub(super) fn common_level(l: &[QueueId], r: &[QueueId]) -> usize {
    let mut level = 0;
    for (i, (a, b)) in l.iter().zip(r).enumerate() {
        if a != b {
            break;
        }
        level = i;
    }
    level
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(deserved: Resource, allocated: Resource) -> QueueAttr {
        let mut a = QueueAttr {
            deserved,
            ..Default::default()
        };
        a.usage.allocated = allocated;
        a.update_share();
        a
    }

    #[test]
    fn best_effort_queue_has_share_one() {
        assert_eq!(
            attr(Resource::empty(), Resource::cpu_mem(5000.0, 0.0)).share,
            1.0
        );
        assert_eq!(
            attr(
                Resource::cpu_mem(4000.0, 0.0),
                Resource::cpu_mem(1000.0, 0.0)
            )
            .share,
            0.25
        );
    }

    #[test]
    fn on_equal_share_the_queue_with_deserved_goes_first() {
        let with = attr(
            Resource::cpu_mem(1000.0, 0.0),
            Resource::cpu_mem(1000.0, 0.0),
        );
        let best_effort = attr(Resource::empty(), Resource::empty());
        assert_eq!(
            compare_share_with_deserved(&with, &best_effort),
            Ordering::Less
        );
        assert_eq!(
            compare_share_with_deserved(&best_effort, &with),
            Ordering::Greater
        );
        assert_eq!(
            compare_share_with_deserved(&best_effort, &best_effort),
            Ordering::Equal
        );
    }

    #[test]
    fn common_level_is_the_deepest_shared_ancestor_index() {
        let (root, a, b, c) = (QueueId(0), QueueId(1), QueueId(2), QueueId(3));
        assert_eq!(common_level(&[root, a, b], &[root, a, c]), 1);
        assert_eq!(common_level(&[root, a], &[root, b]), 0);
        assert_eq!(common_level(&[], &[root]), 0);
    }
}
