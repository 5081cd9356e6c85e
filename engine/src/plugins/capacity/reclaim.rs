//! Capacity's choice of reclaim victims: a task may be taken from a queue that keeps its
//! guarantee without it and either holds nothing the queue deserves ("immediate victim") or
//! belongs to a queue over its deserved share on a dimension the task uses. With hierarchy and
//! `ancestorReclaimLevel`, the victim's ancestors up to that level must be over their share
//! too, unless the reclaimer shares them.

use std::collections::BTreeMap;

use super::Capacity;
use super::attrs::QueueAttr;
use crate::framework::SessionState;
use crate::model::{Dim, DimDefault, QueueId, Resource, ResourceName, TaskId};

/// Dimensions of at least ε on both sides (`api.Intersection`), optionally without `pods`.
fn intersects(a: &Resource, b: &Resource, ignore_pods: bool) -> bool {
    a.resource_names().any(|n| {
        b.resource_names().any(|m| m == n) && !(ignore_pods && n == ResourceName::Scalar(Dim::PODS))
    })
}

/// A task holding none of what `deserved` names is a victim whatever the queue's share.
fn immediate_victim(req: &Resource, deserved: &Resource) -> bool {
    !intersects(req, deserved, false)
}

impl Capacity {
    /// The reclaimer's or reclaimee's non-root ancestors `1..=level` up.
    fn ancestors_within_level(&self, attr: &QueueAttr) -> Vec<QueueId> {
        (1..=self.ancestor_reclaim_level.min(attr.ancestors.len()))
            .filter_map(|l| attr.ancestor_at_depth(l))
            .filter(|&a| Some(a) != self.root)
            .collect()
    }

    /// The reclaimee's ancestor `level` up that must also be over its share: none when it is
    /// the root or the reclaimer has the same ancestor at that level.
    fn ancestor_to_check(
        &self,
        reclaimer: &QueueAttr,
        reclaimee: &QueueAttr,
        level: usize,
    ) -> Option<QueueId> {
        let theirs = reclaimee
            .ancestor_at_depth(level)
            .filter(|&a| Some(a) != self.root)?;
        (reclaimer.ancestor_at_depth(level) != Some(theirs)).then_some(theirs)
    }

    /// Volcano's capacity `ReclaimableFn`. `candidates` must come in the order Volcano's
    /// `BuildVictimsPriorityQueue(candidates, reclaimer)` pops them (the reclaim action sorts
    /// them so before asking): the plugin cannot reach the session's orderings itself, and the
    /// order decides which tasks are taken as the queues' running allocations shrink.
    pub(super) fn victims(
        &self,
        ssn: &SessionState,
        reclaimer: TaskId,
        candidates: &[TaskId],
    ) -> Vec<TaskId> {
        let mut victims = Vec::new();
        if !self.ready {
            return victims;
        }
        let Some(reclaimer_attr) = ssn.queue_of_task(reclaimer).and_then(|q| self.attr(q)) else {
            return victims;
        };
        let reclaimer_req = ssn.resreq(reclaimer);
        let level_checks = self.hierarchy && self.ancestor_reclaim_level > 0;
        let mut allocations: BTreeMap<QueueId, Resource> = BTreeMap::new();
        for &t in candidates {
            let Some(q) = ssn.queue_of_task(t) else {
                continue;
            };
            let Some(attr) = self.attr(q) else { continue };
            let req = ssn.resreq(t);
            if !intersects(req, reclaimer_req, true) {
                continue;
            }
            let allocated = allocations
                .entry(q)
                .or_insert_with(|| attr.usage.allocated.clone());
            if !attr
                .guarantee
                .less_equal(&allocated.minus(req), DimDefault::Zero)
            {
                continue;
            }
            let eligible = if immediate_victim(req, &attr.deserved) {
                // No real contention when both sit under a shared ancestor and the reclaimer's
                // queue does not deserve what it asks for either.
                let shared = level_checks && {
                    let mine = self.ancestors_within_level(reclaimer_attr);
                    self.ancestors_within_level(attr)
                        .iter()
                        .any(|a| mine.contains(a))
                };
                !(shared && immediate_victim(reclaimer_req, &reclaimer_attr.deserved))
            } else {
                allocated.greater_partly_with_relevant_dimensions(&attr.deserved, req)
            };
            if !eligible {
                continue;
            }
            let mut checked = Vec::new();
            if level_checks
                && !self.ancestors_over_share(
                    reclaimer_attr,
                    attr,
                    req,
                    &mut allocations,
                    &mut checked,
                )
            {
                continue;
            }
            for a in checked.into_iter().chain([q]) {
                if let Some(r) = allocations.get_mut(&a) {
                    r.sub(req);
                }
            }
            victims.push(t);
        }
        victims
    }

    /// Whether each of the reclaimee's ancestors that needs checking is over its share on the
    /// task's dimensions (or deserves none of them); the checked ancestors go to `checked`.
    fn ancestors_over_share(
        &self,
        reclaimer: &QueueAttr,
        reclaimee: &QueueAttr,
        req: &Resource,
        allocations: &mut BTreeMap<QueueId, Resource>,
        checked: &mut Vec<QueueId>,
    ) -> bool {
        for level in 1..=self.ancestor_reclaim_level.min(reclaimee.ancestors.len()) {
            let Some(a) = self.ancestor_to_check(reclaimer, reclaimee, level) else {
                continue;
            };
            let Some(anc) = self.attr(a) else {
                return false;
            };
            let allocated = allocations
                .entry(a)
                .or_insert_with(|| anc.usage.allocated.clone());
            checked.push(a);
            if immediate_victim(req, &anc.deserved) {
                continue;
            }
            if !allocated.greater_partly_with_relevant_dimensions(&anc.deserved, req) {
                return false;
            }
        }
        true
    }
    /// Volcano's capacity `UnifiedEvictableFn` for gang reclaim: the per-queue guarantee and
    /// deserved checks of `victims`, without the reclaimer's resource dimensions and without
    /// the ancestor levels. `candidates` come in eviction order, which decides which tasks are
    /// taken as the queues' running allocations shrink.
    pub(super) fn gang_reclaim_victims(
        &self,
        ssn: &SessionState,
        candidates: &[TaskId],
    ) -> Vec<TaskId> {
        let mut victims = Vec::new();
        let mut allocations: BTreeMap<QueueId, Resource> = BTreeMap::new();
        for &t in candidates {
            let Some(q) = ssn.queue_of_task(t) else {
                continue;
            };
            let Some(attr) = self.attr(q) else { continue };
            let req = ssn.resreq(t);
            let allocated = allocations
                .entry(q)
                .or_insert_with(|| attr.usage.allocated.clone());
            if !attr
                .guarantee
                .less_equal(&allocated.minus(req), DimDefault::Zero)
            {
                continue;
            }
            if immediate_victim(req, &attr.deserved)
                || allocated.greater_partly_with_relevant_dimensions(&attr.deserved, req)
            {
                allocated.sub(req);
                victims.push(t);
            }
        }
        victims
    }
}
