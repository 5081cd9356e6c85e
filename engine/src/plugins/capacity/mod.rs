//! `capacity`: per-queue explicit `deserved`, `capability` and `guarantee` instead of weights
//! (Volcano: pkg/scheduler/plugins/capacity/capacity.go), flat or as a queue hierarchy (`enableHierarchy`). Allocation and admission stop
//! at the real capability (of the queue and, with hierarchy, every ancestor); reclaim brings
//! queues back to what they deserve. Capacity has no Overused function.
//!
//! Arguments: `ancestorReclaimLevel` (integer, negative → 0). The DRA switches
//! `capacity.DynamicResourceAllocationEnable` and `capacity.DRAConsumableCapacityEnable` are
//! checked and otherwise ignored: tephra models no ResourceClaims, so there is no device-class
//! demand to enforce quota on. Without the `SchedulingGatesQueueAdmission` feature gate (off by
//! default in Volcano, absent in tephra) no task reserves queue capacity through a scheduling
//! gate, and PrePredicate / Simulate* have no counterpart in tephra's framework.

mod attrs;
mod figures;
mod flat;
mod hierarchy;
mod reclaim;

use std::cmp::Ordering;

use attrs::{QueueAttr, common_level, compare_share_with_deserved};

use super::{job_resources, unschedulable_event};
use crate::config::{ArgumentError, Arguments};
use crate::framework::{EvictionContext, EvictionKind, Plugin, QueueFigures, SessionState, Vote};
use crate::model::{JobId, QueueId, Resource, ResourceName, TaskId};

/// The plugin.
#[derive(Debug, Default)]
pub struct Capacity {
    ancestor_reclaim_level: usize,
    hierarchy: bool,
    /// False when the hierarchy is broken: the plugin then refuses every request.
    ready: bool,
    /// Flat: queues with jobs; hierarchy: every queue. Indexed by queue id.
    queues: Vec<Option<QueueAttr>>,
    /// The `root` queue (hierarchy only).
    root: Option<QueueId>,
    /// What the metrics get at open, per queue.
    opened: Vec<QueueFigures>,
    /// The queues an allocate or deallocate event booked directly.
    touched: Vec<bool>,
}

/// Builds the plugin from its arguments.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    let level = args.int("ancestorReclaimLevel")?.unwrap_or(0).max(0);
    args.bool("capacity.DynamicResourceAllocationEnable")?;
    args.bool("capacity.DRAConsumableCapacityEnable")?;
    Ok(Box::new(Capacity {
        ancestor_reclaim_level: usize::try_from(level).unwrap_or(usize::MAX),
        ..Default::default()
    }))
}

impl Capacity {
    fn attr(&self, q: QueueId) -> Option<&QueueAttr> {
        self.queues.get(q.idx()).and_then(Option::as_ref)
    }

    fn attr_mut(&mut self, q: QueueId) -> Option<&mut QueueAttr> {
        self.queues.get_mut(q.idx()).and_then(Option::as_mut)
    }

    /// The queue followed by its ancestors, leaf to root.
    fn chain(&self, q: QueueId) -> Option<Vec<&QueueAttr>> {
        let attr = self.attr(q)?;
        let mut out = vec![attr];
        for &a in attr.ancestors.iter().rev() {
            out.push(self.attr(a)?);
        }
        Some(out)
    }

    /// Applies `f` to the queue's attributes and, with hierarchy, its ancestors'.
    fn book(&mut self, q: QueueId, f: impl Fn(&mut QueueAttr)) {
        let Some(attr) = self.attr_mut(q) else {
            return;
        };
        f(attr);
        for a in attr.ancestors.clone() {
            if let Some(anc) = self.attr_mut(a) {
                f(anc);
            }
        }
    }

    /// Hierarchical QueueOrder: leaves before inner queues; two leaves compare the ancestors
    /// just below their deepest common ancestor (or themselves).
    fn hierarchical_queue_order(&self, l: QueueId, r: QueueId) -> Ordering {
        let (Some(la), Some(ra)) = (self.attr(l), self.attr(r)) else {
            return Ordering::Equal;
        };
        match (la.is_leaf(), ra.is_leaf()) {
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => return compare_share_with_deserved(la, ra),
            (true, true) => {}
        }
        let level = common_level(&la.ancestors, &ra.ancestors);
        let lp = la.ancestors.get(level + 1).copied().unwrap_or(l);
        let rp = ra.ancestors.get(level + 1).copied().unwrap_or(r);
        match (self.attr(lp), self.attr(rp)) {
            (Some(lpa), Some(rpa)) => compare_share_with_deserved(lpa, rpa),
            _ => Ordering::Equal,
        }
    }

    /// Notes that an event booked queue `q` directly (its figures change at close).
    fn touch(&mut self, q: QueueId) {
        if let Some(t) = self.touched.get_mut(q.idx()) {
            *t = true;
        }
    }

    /// The admission test of one queue for a job asking for `min`.
    fn admits(attr: &QueueAttr, min: &Resource) -> Result<(), Vec<ResourceName>> {
        attr.usage
            .with_admitted(min)
            .less_equal_with_dimension(&attr.real_capability, min)
    }
}

impl Plugin for Capacity {
    fn name(&self) -> &str {
        "capacity"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        self.hierarchy = ssn.config.hierarchy_enabled("capacity");
        if !self.hierarchy {
            self.queues = flat::build(ssn);
            self.ready = true;
        } else {
            match hierarchy::build(ssn) {
                Ok(h) => {
                    self.queues = h.attrs;
                    self.root = Some(h.root);
                    self.ready = true;
                }
                Err(_) => self.ready = false,
            }
        }
        if self.ready {
            self.opened = figures::opened(ssn, &self.queues, self.hierarchy);
            self.touched = vec![false; self.queues.len()];
        }
    }

    /// Reports the queues' figures (a broken hierarchy reports none).
    fn on_session_close(&mut self, ssn: &mut SessionState) {
        if !self.ready {
            return;
        }
        let opened = std::mem::take(&mut self.opened);
        let closed = figures::closed(opened, &self.queues, &self.touched);
        ssn.metrics.queues.extend(closed);
    }

    /// Higher `spec.priority` first, then the smaller share (queues with a deserved share
    /// before best-effort ones on a tie). A broken hierarchy registers no order.
    fn queue_order(&self, ssn: &SessionState, l: QueueId, r: QueueId) -> Ordering {
        if !self.ready {
            return Ordering::Equal;
        }
        let prio = &ssn.snap.queues.priority;
        if prio[l.idx()] != prio[r.idx()] {
            return prio[r.idx()].cmp(&prio[l.idx()]);
        }
        if self.hierarchy {
            return self.hierarchical_queue_order(l, r);
        }
        match (self.attr(l), self.attr(r)) {
            (Some(la), Some(ra)) => compare_share_with_deserved(la, ra),
            _ => Ordering::Equal,
        }
    }

    /// Hierarchy only: victims from the queue closest to the preemptor's in the tree first.
    fn victim_queue_order(
        &self,
        _ssn: &SessionState,
        l: QueueId,
        r: QueueId,
        preemptor: QueueId,
    ) -> Ordering {
        if !self.hierarchy || !self.ready {
            return Ordering::Equal;
        }
        let (Some(la), Some(ra), Some(pa)) = (self.attr(l), self.attr(r), self.attr(preemptor))
        else {
            return Ordering::Equal;
        };
        let l_level = common_level(&la.ancestors, &pa.ancestors);
        let r_level = common_level(&ra.ancestors, &pa.ancestors);
        r_level.cmp(&l_level)
    }

    fn reclaimable(
        &self,
        ssn: &SessionState,
        reclaimer: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(self.victims(ssn, reclaimer, candidates))
    }

    /// Gang preemption stays inside one queue, so capacity lets every candidate through; gang
    /// reclaim takes only what the victims' queues hold beyond their guarantee and deserved
    /// share. A broken hierarchy answers "none", which hands the decision to the next tier.
    fn unified_evictable(
        &self,
        ssn: &SessionState,
        ctx: &EvictionContext,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        match ctx.kind {
            EvictionKind::GangPreempt => Some(candidates.to_vec()),
            EvictionKind::GangReclaim if !self.ready => Some(Vec::new()),
            EvictionKind::GangReclaim => Some(self.gang_reclaim_victims(ssn, candidates)),
        }
    }

    /// The queue may take resources for `tasks` by eviction when they fit its real capability
    /// and the queue is below its deserved share on some dimension they ask for (or, with
    /// `ancestorReclaimLevel`, one of its ancestors up to that level is).
    fn preemptive(&self, ssn: &SessionState, queue: QueueId, tasks: &[TaskId]) -> Option<bool> {
        if !self.ready || !ssn.snap.queues.open[queue.idx()] {
            return Some(false);
        }
        let attr = self.attr(queue)?;
        let req = &ssn.total_resreq(tasks);
        if !attr.fits_real_capability(req) {
            return Some(false);
        }
        let below_deserved = |a: &QueueAttr| {
            a.usage
                .allocated
                .plus(req)
                .less_equal_partly_with_dimension_zero_filtered(&a.deserved, req)
        };
        if below_deserved(attr) {
            return Some(true);
        }
        if !self.hierarchy {
            return Some(false);
        }
        let levels = self.ancestor_reclaim_level.min(attr.ancestors.len());
        Some(
            (1..=levels)
                .filter_map(|l| attr.ancestor_at_depth(l))
                .filter(|&a| Some(a) != self.root)
                .filter_map(|a| self.attr(a))
                .any(below_deserved),
        )
    }

    /// The queue is open, the hierarchy sound, the queue a leaf, and the task fits the real
    /// capability of the queue and of every ancestor.
    fn allocatable(&self, ssn: &SessionState, queue: QueueId, task: TaskId) -> Option<bool> {
        if !ssn.snap.queues.open[queue.idx()] || !self.ready {
            return Some(false);
        }
        let chain = self.chain(queue)?;
        if !chain[0].is_leaf() {
            return Some(false);
        }
        Some(
            chain
                .iter()
                .all(|a| a.fits_real_capability(ssn.resreq(task))),
        )
    }

    /// Admits a job while `minResources + allocated + inqueue − elastic` stays within the real
    /// capability of its queue and every ancestor, on the dimensions the job asks for.
    fn job_enqueueable(&self, ssn: &SessionState, job: JobId) -> Vote {
        if !self.ready {
            return Vote::Reject;
        }
        let q = ssn.snap.jobs.queue[job.idx()];
        let Some(chain) = self.chain(q) else {
            return Vote::Permit;
        };
        if !chain[0].is_leaf() || !ssn.snap.queues.open[q.idx()] {
            return Vote::Reject;
        }
        let Some(min) = job_resources::min_resources(ssn, job) else {
            return Vote::Permit;
        };
        for attr in chain {
            if let Err(names) = Self::admits(attr, min) {
                unschedulable_event::record(
                    ssn,
                    job,
                    "queue resource quota insufficient",
                    "insufficient",
                    &names,
                );
                return Vote::Reject;
            }
        }
        Vote::Permit
    }

    /// Books the admitted job's minimum (less gated pods) as reserved in its queue and, with
    /// hierarchy, every ancestor.
    fn job_enqueued(&mut self, ssn: &SessionState, job: JobId) {
        let Some(min) = job_resources::min_resources(ssn, job) else {
            return;
        };
        let reserved = job_resources::deduct_sch_gated(ssn, job, min);
        self.book(ssn.snap.jobs.queue[job.idx()], |a| {
            a.usage.inqueue.add(&reserved);
        });
    }

    /// Books the task on its queue and ancestors. Only the queue's own share is refreshed, as
    /// in Volcano: ancestors keep their session-open share for the hierarchical queue order.
    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        if let Some(q) = ssn.queue_of_task(task) {
            self.book(q, |a| {
                a.usage.allocated.add(ssn.resreq(task));
            });
            if let Some(attr) = self.attr_mut(q) {
                attr.update_share();
                self.touch(q);
            }
        }
        Ok(())
    }

    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        if let Some(q) = ssn.queue_of_task(task) {
            self.book(q, |a| {
                a.usage.allocated.sub(ssn.resreq(task));
            });
            if let Some(attr) = self.attr_mut(q) {
                attr.update_share();
                self.touch(q);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::{Session, Statement};
    use crate::harness::find::{job, queue, task};
    use crate::harness::objects::{group_pod, pod_group, sized_node};
    use crate::harness::session;

    const FLAT: &str =
        "actions: enqueue, allocate, reclaim\ntiers:\n- plugins:\n  - name: capacity\n";

    fn hierarchical(level: i64) -> String {
        format!(
            "actions: enqueue, allocate, reclaim\ntiers:\n- plugins:\n  - name: capacity\n    enableHierarchy: true\n    arguments: {{ancestorReclaimLevel: {level}}}\n"
        )
    }

    fn q(name: &str, spec: &str) -> String {
        format!("---\nkind: Queue\nmetadata: {{name: '{name}'}}\nspec: {spec}\n")
    }

    fn tasks(ssn: &Session, keys: &[&str]) -> Vec<TaskId> {
        keys.iter().map(|k| task(ssn, k)).collect()
    }

    fn args(yaml: &str) -> Arguments {
        Arguments(serde_saphyr::from_str(yaml).unwrap())
    }

    #[test]
    fn ancestor_reclaim_level_must_be_an_integer_and_negative_means_zero() {
        assert!(build(&args("ancestorReclaimLevel: 1.5\n")).is_err());
        assert!(build(&args("ancestorReclaimLevel: -3\n")).is_ok());
        assert!(build(&args("capacity.DynamicResourceAllocationEnable: maybe\n")).is_err());
        assert!(build(&args("capacity.DRAConsumableCapacityEnable: true\n")).is_ok());
    }

    #[test]
    fn task_beyond_queue_capability_is_not_allocatable() {
        // Conformance capacity flat-case1.
        let mut m = q("q2", "{capability: {cpu: 1.5, memory: 1.5Gi}}");
        m += &sized_node("n1", "{cpu: 2, memory: 4Gi, pods: 10}");
        m += &pod_group("ns1/pg3", "q2", 1, "", "Running");
        m += &pod_group("ns1/pg4", "q2", 1, "", "Inqueue");
        m += &group_pod("ns1/p3", "pg3", "n1", "{cpu: 1, memory: 1Gi}", "Running");
        m += &group_pod("ns1/p4", "pg4", "", "{cpu: 1, memory: 1Gi}", "Pending");
        m += &group_pod("ns1/p5", "pg4", "", "{cpu: 0.5, memory: 0.5Gi}", "Pending");
        let ssn = session(FLAT, &m);
        let q2 = queue(&ssn, "q2");
        assert!(!ssn.allocatable(q2, task(&ssn, "ns1/p4")));
        assert!(ssn.allocatable(q2, task(&ssn, "ns1/p5")));
    }

    /// Conformance capacity flat-case2: q3 deserves 2 cpu and runs 4.
    fn over_deserved() -> Session {
        let mut m = q("q3", "{deserved: {cpu: 2, memory: 4Gi}}")
            + &q("q4", "{deserved: {cpu: 2, memory: 4Gi}}");
        m += &sized_node("n1", "{cpu: 2, memory: 4Gi, pods: 10}");
        m += &sized_node("n2", "{cpu: 2, memory: 4Gi, pods: 10}");
        m += &pod_group("ns1/pg5", "q3", 1, "", "Running");
        m += &pod_group("ns1/pg6", "q4", 1, "", "Inqueue");
        m += &group_pod("ns1/p5", "pg5", "n1", "{cpu: 2, memory: 4Gi}", "Running");
        m += &group_pod("ns1/p6", "pg5", "n2", "{cpu: 2, memory: 4Gi}", "Running");
        m += &group_pod("ns1/p7", "pg6", "", "{cpu: 2, memory: 4Gi}", "Pending");
        session(FLAT, &m)
    }

    #[test]
    fn reclaim_stops_once_the_victims_queue_is_back_to_its_deserved_share() {
        let ssn = over_deserved();
        let p7 = task(&ssn, "ns1/p7");
        assert!(ssn.preemptive(queue(&ssn, "q4"), &[p7]));
        assert_eq!(
            ssn.reclaimable(p7, &tasks(&ssn, &["ns1/p5", "ns1/p6"])),
            tasks(&ssn, &["ns1/p5"])
        );
        assert_eq!(
            ssn.reclaimable(p7, &tasks(&ssn, &["ns1/p6"])),
            tasks(&ssn, &["ns1/p6"])
        );
    }

    #[test]
    fn gang_reclaim_takes_from_a_queue_only_while_it_is_above_its_deserved_share() {
        let ssn = over_deserved();
        let ctx = |kind| crate::framework::EvictionContext {
            kind,
            job: job(&ssn, "ns1/pg6"),
        };
        let both = tasks(&ssn, &["ns1/p5", "ns1/p6"]);
        assert_eq!(
            ssn.unified_evictable(&ctx(EvictionKind::GangReclaim), &both),
            tasks(&ssn, &["ns1/p5"])
        );
        assert_eq!(
            ssn.unified_evictable(&ctx(EvictionKind::GangPreempt), &both),
            both
        );
    }

    #[test]
    fn queue_at_its_deserved_share_on_every_requested_dimension_is_not_preemptive() {
        let ssn = over_deserved();
        assert!(!ssn.preemptive(queue(&ssn, "q3"), &[task(&ssn, "ns1/p7")]));
    }

    #[test]
    fn reclaimees_sharing_nothing_with_the_reclaimer_are_skipped_and_undeserved_ones_taken() {
        // Conformance capacity flat-case8: p26 holds only memory, p27 cpu within deserved,
        // p28 a gpu queue17 does not deserve.
        let mut m = q("queue17", "{deserved: {cpu: 2, memory: 2Gi}}")
            + &q(
                "queue18",
                "{deserved: {cpu: 2, memory: 4Gi, nvidia.com/gpu: 1}}",
            );
        m += &sized_node("n8", "{cpu: 4, memory: 8Gi, nvidia.com/gpu: 1, pods: 10}");
        m += &pod_group("ns1/pg26", "queue17", 1, "", "Running");
        m += &pod_group("ns1/pg30", "queue18", 1, "", "Inqueue");
        m += &group_pod("ns1/p26", "pg26", "n8", "{cpu: 0, memory: 4Gi}", "Running");
        m += &group_pod("ns1/p27", "pg26", "n8", "{cpu: 1, memory: 0}", "Running");
        m += &group_pod("ns1/p28", "pg26", "n8", "{nvidia.com/gpu: 1}", "Running");
        m += &group_pod(
            "ns1/p30",
            "pg30",
            "",
            "{cpu: 1, nvidia.com/gpu: 1}",
            "Pending",
        );
        let ssn = session(FLAT, &m);
        let cands = tasks(&ssn, &["ns1/p26", "ns1/p27", "ns1/p28"]);
        assert_eq!(
            ssn.reclaimable(task(&ssn, "ns1/p30"), &cands),
            tasks(&ssn, &["ns1/p28"])
        );
    }

    #[test]
    fn reclaimee_holding_a_deserved_scalar_is_kept_while_its_queue_is_within_deserved() {
        // Conformance capacity flat-case9.
        let mut m = q("queue19", "{deserved: {nvidia.com/gpu: 1}}")
            + &q("queue20", "{deserved: {cpu: 2, memory: 2Gi}}");
        m += &sized_node("n8", "{cpu: 4, memory: 8Gi, nvidia.com/gpu: 1, pods: 10}");
        m += &pod_group("ns1/pg31", "queue19", 1, "", "Running");
        m += &pod_group("ns1/pg32", "queue20", 1, "", "Inqueue");
        m += &group_pod(
            "ns1/p31",
            "pg31",
            "n8",
            "{cpu: 4, memory: 4Gi, nvidia.com/gpu: 1}",
            "Running",
        );
        m += &group_pod("ns1/p32", "pg32", "", "{cpu: 1, memory: 1Gi}", "Pending");
        let ssn = session(FLAT, &m);
        assert!(
            ssn.reclaimable(task(&ssn, "ns1/p32"), &tasks(&ssn, &["ns1/p31"]))
                .is_empty()
        );
    }

    #[test]
    fn guarantee_protects_the_tasks_it_covers() {
        let mut m = q("g", "{deserved: {cpu: 1}, guarantee: {resource: {cpu: 2}}}")
            + &q("o", "{deserved: {cpu: 2}}");
        m += &sized_node("n1", "{cpu: 4, memory: 4Gi, pods: 10}");
        m += &pod_group("ns/g", "g", 1, "", "Running");
        m += &pod_group("ns/o", "o", 1, "", "Inqueue");
        m += &group_pod("ns/g-0", "g", "n1", "{cpu: 1}", "Running");
        m += &group_pod("ns/g-1", "g", "n1", "{cpu: 1}", "Running");
        m += &group_pod("ns/o-0", "o", "", "{cpu: 1}", "Pending");
        let ssn = session(FLAT, &m);
        assert!(
            ssn.reclaimable(task(&ssn, "ns/o-0"), &tasks(&ssn, &["ns/g-0", "ns/g-1"]))
                .is_empty()
        );
    }

    #[test]
    fn queue_order_puts_priority_then_smaller_share_then_deserved_before_best_effort() {
        let mut m = q("a-best-effort", "{}")
            + &q("b-half", "{deserved: {cpu: 4}}")
            + &q("c-full", "{deserved: {cpu: 1}}");
        m += &q("d-vip", "{priority: 5}");
        m += &sized_node("n1", "{cpu: 8, memory: 8Gi, pods: 10}");
        for (g, qn, cpu) in [
            ("a", "a-best-effort", 1),
            ("b", "b-half", 2),
            ("c", "c-full", 1),
            ("d", "d-vip", 1),
        ] {
            m += &pod_group(&format!("ns/{g}"), qn, 1, "", "Running");
            m += &group_pod(
                &format!("ns/{g}-0"),
                g,
                "n1",
                &format!("{{cpu: {cpu}}}"),
                "Running",
            );
        }
        let ssn = session(FLAT, &m);
        let [be, half, full, vip] =
            ["a-best-effort", "b-half", "c-full", "d-vip"].map(|n| queue(&ssn, n));
        assert!(ssn.queue_order_less(vip, half), "priority first");
        assert!(ssn.queue_order_less(half, be), "share 0.5 before share 1");
        assert!(
            ssn.queue_order_less(full, be),
            "equal share 1: the queue with deserved first"
        );
        assert!(!ssn.queue_order_less(be, full));
    }

    /// Conformance capacity hierarchy-case4: q3 (capability 4 cpu) has q31 and q32 running
    /// 2 cpu each and q33 asking for 3.
    #[test]
    fn ancestor_real_capability_limits_allocation() {
        let mut m = q("root", "{}")
            + &q(
                "q3",
                "{parent: root, capability: {cpu: 4, memory: 4Gi}, deserved: {cpu: 4, memory: 4Gi}}",
            );
        for leaf in ["q31", "q32", "q33"] {
            m += &q(
                leaf,
                "{parent: q3, capability: {cpu: 4, memory: 4Gi}, deserved: {cpu: 2, memory: 2Gi}}",
            );
        }
        m += &sized_node("n1", "{cpu: 8, memory: 8Gi, pods: 11}");
        m += &pod_group("ns1/pg5", "q31", 1, "", "Running");
        m += &pod_group("ns1/pg7", "q32", 1, "", "Running");
        m += &pod_group("ns1/pg8", "q33", 1, "", "Inqueue");
        m += &group_pod("ns1/p6", "pg5", "n1", "{cpu: 2, memory: 2Gi}", "Running");
        m += &group_pod("ns1/p9", "pg7", "n1", "{cpu: 2, memory: 2Gi}", "Running");
        m += &group_pod("ns1/p10", "pg8", "", "{cpu: 3, memory: 3Gi}", "Pending");
        let ssn = session(&hierarchical(0), &m);
        assert!(!ssn.allocatable(queue(&ssn, "q33"), task(&ssn, "ns1/p10")));
        assert!(
            !ssn.allocatable(queue(&ssn, "q3"), task(&ssn, "ns1/p10")),
            "inner queues never allocate"
        );
    }

    #[test]
    fn admission_checks_every_ancestor_and_books_the_minimum_on_them() {
        // Conformance capacity hierarchy-case6: q61 and q62 share q6's 2 cpu / 4Gi.
        let mut m = q("root", "{}") + &q("q6", "{parent: root, capability: {cpu: 2, memory: 4Gi}}");
        m += &(q("q61", "{parent: q6}") + &q("q62", "{parent: q6}"));
        m += &sized_node("n1", "{cpu: 8, memory: 8Gi, pods: 11}");
        m += &pod_group("ns1/pg10", "q61", 1, "{cpu: 2, memory: 4Gi}", "Pending");
        m += &pod_group("ns1/pg11", "q62", 1, "{cpu: 2, memory: 4Gi}", "Pending");
        let mut ssn = session(&hierarchical(0), &m);
        let (pg10, pg11) = (job(&ssn, "ns1/pg10"), job(&ssn, "ns1/pg11"));
        assert!(ssn.job_enqueueable(pg10));
        ssn.job_enqueued(pg10);
        assert!(!ssn.job_enqueueable(pg11));
        let events = ssn.state.take_events();
        assert_eq!(events.len(), 1);
        assert_eq!(
            events[0].message,
            "queue resource quota insufficient: insufficient cpu, insufficient memory"
        );
    }

    #[test]
    fn allocation_is_booked_on_the_ancestors() {
        let mut m = q("root", "{}") + &q("p", "{parent: root, capability: {cpu: 2}}");
        m += &(q("a", "{parent: p}") + &q("b", "{parent: p}"));
        m += &sized_node("n1", "{cpu: 8, memory: 8Gi, pods: 11}");
        m += &pod_group("ns/a", "a", 1, "", "Inqueue");
        m += &pod_group("ns/b", "b", 1, "", "Inqueue");
        m += &group_pod("ns/a-0", "a", "", "{cpu: 2}", "Pending");
        m += &group_pod("ns/b-0", "b", "", "{cpu: 1}", "Pending");
        let mut ssn = session(&hierarchical(0), &m);
        let (b, b0) = (queue(&ssn, "b"), task(&ssn, "ns/b-0"));
        assert!(ssn.allocatable(b, b0));
        let (a0, n1) = (task(&ssn, "ns/a-0"), ssn.state.snap.nodes.id("n1").unwrap());
        Statement::new().allocate(&mut ssn, a0, n1).unwrap();
        assert!(
            !ssn.allocatable(b, b0),
            "p's capability is used up by a's task"
        );
    }

    #[test]
    fn broken_hierarchy_refuses_everything() {
        let mut m = q("root", "{}") + &q("inner", "{parent: root}") + &q("leaf", "{parent: inner}");
        m += &sized_node("n1", "{cpu: 8, memory: 8Gi, pods: 11}");
        m += &pod_group("ns/x", "inner", 1, "", "Inqueue");
        m += &pod_group("ns/y", "leaf", 1, "", "Running");
        m += &group_pod("ns/x-0", "x", "", "{cpu: 1}", "Pending");
        m += &group_pod("ns/y-0", "y", "n1", "{cpu: 1}", "Running");
        let ssn = session(&hierarchical(0), &m);
        let (leaf, x0) = (queue(&ssn, "leaf"), task(&ssn, "ns/x-0"));
        assert!(!ssn.allocatable(leaf, x0));
        assert!(!ssn.preemptive(leaf, &[x0]));
        assert!(!ssn.job_enqueueable(job(&ssn, "ns/y")));
        assert!(ssn.reclaimable(x0, &tasks(&ssn, &["ns/y-0"])).is_empty());
    }

    /// root ─┬─ p1 ─┬─ a   (deserved 4 cpu, runs 1: share 0.25)
    ///       │      └─ b   (deserved 4 cpu, runs 3: share 0.75)
    ///       └─ p2 ─── c   (deserved 4 cpu, runs 2: share 0.5)
    /// p1 deserves 8 and runs 4 (0.5); p2 deserves 2 and runs 2 (1).
    fn two_branches() -> Session {
        let mut m = q("root", "{}")
            + &q("p1", "{parent: root, deserved: {cpu: 8}}")
            + &q("p2", "{parent: root, deserved: {cpu: 2}}");
        m += &(q("a", "{parent: p1, deserved: {cpu: 4}}")
            + &q("b", "{parent: p1, deserved: {cpu: 4}}"));
        m += &q("c", "{parent: p2, deserved: {cpu: 4}}");
        m += &sized_node("n1", "{cpu: 16, memory: 8Gi, pods: 20}");
        for (g, qn, n) in [("a", "a", 1), ("b", "b", 3), ("c", "c", 2)] {
            m += &pod_group(&format!("ns/{g}"), qn, 1, "", "Running");
            for i in 0..n {
                m += &group_pod(&format!("ns/{g}-{i}"), g, "n1", "{cpu: 1}", "Running");
            }
        }
        session(&hierarchical(0), &m)
    }

    #[test]
    fn leaves_order_by_their_ancestors_below_the_common_ancestor() {
        let ssn = two_branches();
        let [a, b, c, p1] = ["a", "b", "c", "p1"].map(|n| queue(&ssn, n));
        assert!(
            ssn.queue_order_less(a, b),
            "siblings compare their own shares"
        );
        assert!(
            ssn.queue_order_less(b, c),
            "b is under p1 (0.5), c under p2 (1)"
        );
        assert!(ssn.queue_order_less(c, p1), "leaves before inner queues");
    }

    #[test]
    fn victims_from_the_queue_closest_to_the_preemptor_go_first() {
        let ssn = two_branches();
        let [a, b, c] = ["a", "b", "c"].map(|n| queue(&ssn, n));
        assert!(ssn.victim_queue_order_less(b, c, a), "b shares p1 with a");
        assert!(!ssn.victim_queue_order_less(c, b, a));
    }

    /// Conformance capacity ancestor-reclaim cases 5–7: queue-b runs 2 cpu against a deserved
    /// 1; its parent is over its share too, its grandparent is not.
    fn cousins(level: i64) -> Session {
        let mut m = q("root", "{}");
        m += &q(
            "grand-a",
            "{parent: root, capability: {cpu: 4, memory: 4Gi}, deserved: {cpu: 2, memory: 2Gi}}",
        );
        m += &q(
            "parent-a",
            "{parent: grand-a, capability: {cpu: 2, memory: 2Gi}, deserved: {cpu: 2, memory: 2Gi}}",
        );
        m += &q(
            "queue-a",
            "{parent: parent-a, capability: {cpu: 2, memory: 2Gi}, deserved: {cpu: 2, memory: 2Gi}}",
        );
        m += &q(
            "grand-b",
            "{parent: root, capability: {cpu: 4, memory: 4Gi}, deserved: {cpu: 3, memory: 3Gi}}",
        );
        m += &q(
            "parent-b",
            "{parent: grand-b, capability: {cpu: 2, memory: 2Gi}, deserved: {cpu: 1, memory: 1Gi}}",
        );
        m += &q(
            "queue-b",
            "{parent: parent-b, capability: {cpu: 2, memory: 2Gi}, deserved: {cpu: 1, memory: 1Gi}}",
        );
        m += &sized_node("n1", "{cpu: 2, memory: 2Gi, pods: 10}");
        m += &pod_group("ns1/pg-victim", "queue-b", 1, "", "Running");
        m += &pod_group("ns1/pg-reclaimer", "queue-a", 1, "", "Inqueue");
        m += &group_pod(
            "ns1/p-victim",
            "pg-victim",
            "n1",
            "{cpu: 2, memory: 2Gi}",
            "Running",
        );
        m += &group_pod(
            "ns1/p-reclaimer",
            "pg-reclaimer",
            "",
            "{cpu: 2, memory: 2Gi}",
            "Pending",
        );
        session(&hierarchical(level), &m)
    }

    #[test]
    fn ancestor_reclaim_level_extends_the_over_share_check_to_the_victims_ancestors() {
        for (level, evicts) in [(0, true), (1, true), (2, false)] {
            let ssn = cousins(level);
            let reclaimer = task(&ssn, "ns1/p-reclaimer");
            assert!(ssn.preemptive(queue(&ssn, "queue-a"), &[reclaimer]));
            let victims = ssn.reclaimable(reclaimer, &tasks(&ssn, &["ns1/p-victim"]));
            assert_eq!(!victims.is_empty(), evicts, "ancestorReclaimLevel {level}");
        }
    }

    /// Conformance capacity ancestor-reclaim case1: the reclaimer's leaf deserves nothing, its
    /// parent deserves one a100; the victim's best-effort queue hangs off the root.
    fn undeserved_leaf(level: i64) -> Session {
        let mut m = q(
            "root",
            "{deserved: {cpu: 16, memory: 16Gi, nvidia.com/a100: 4}}",
        );
        m += &q("queue1", "{parent: root, deserved: {nvidia.com/a100: 1}}");
        m += &q("queue11", "{parent: queue1}");
        m += &q("queue2", "{parent: root}");
        m += &sized_node(
            "n1",
            "{cpu: 16, memory: 16Gi, nvidia.com/a100: 4, rdma/hca: 1001, pods: 11}",
        );
        m += &pod_group("ns1/pg1", "queue2", 1, "", "Running");
        m += &pod_group("ns1/pg2", "queue11", 1, "", "Inqueue");
        m += &group_pod(
            "ns1/p1",
            "pg1",
            "n1",
            "{cpu: 1, memory: 1Gi, nvidia.com/a100: 4, rdma/hca: 1}",
            "Running",
        );
        m += &group_pod(
            "ns1/p2",
            "pg2",
            "",
            "{cpu: 1, memory: 1Gi, nvidia.com/a100: 1, rdma/hca: 1}",
            "Pending",
        );
        session(&hierarchical(level), &m)
    }

    #[test]
    fn queue_may_reclaim_on_its_parents_deserved_share_within_the_ancestor_level() {
        let ssn = undeserved_leaf(1);
        let p2 = task(&ssn, "ns1/p2");
        assert!(ssn.preemptive(queue(&ssn, "queue11"), &[p2]));
        assert_eq!(
            ssn.reclaimable(p2, &tasks(&ssn, &["ns1/p1"])),
            tasks(&ssn, &["ns1/p1"])
        );
        let ssn = undeserved_leaf(0);
        assert!(!ssn.preemptive(queue(&ssn, "queue11"), &[task(&ssn, "ns1/p2")]));
    }

    #[test]
    fn victim_queue_within_its_deserved_share_is_not_reclaimed_across_parents() {
        // Conformance capacity ancestor-reclaim case4.
        let mut m = q("root", "{}");
        m += &q("parent1", "{parent: root, deserved: {nvidia.com/a100: 1}}");
        m += &q(
            "child1",
            "{parent: parent1, deserved: {nvidia.com/a100: 1}}",
        );
        m += &q("parent2", "{parent: root, deserved: {nvidia.com/a100: 1}}");
        m += &q(
            "child2",
            "{parent: parent2, deserved: {nvidia.com/a100: 1}}",
        );
        m += &sized_node("n1", "{cpu: 8, memory: 8Gi, nvidia.com/a100: 1, pods: 11}");
        m += &pod_group("ns1/pg1", "child1", 1, "", "Running");
        m += &pod_group("ns1/pg2", "child2", 1, "", "Pending");
        m += &group_pod(
            "ns1/p1",
            "pg1",
            "n1",
            "{cpu: 1, memory: 1Gi, nvidia.com/a100: 1}",
            "Running",
        );
        m += &group_pod(
            "ns1/p2",
            "pg2",
            "",
            "{cpu: 1, memory: 1Gi, nvidia.com/a100: 1}",
            "Pending",
        );
        let ssn = session(&hierarchical(1), &m);
        assert!(
            ssn.reclaimable(task(&ssn, "ns1/p2"), &tasks(&ssn, &["ns1/p1"]))
                .is_empty()
        );
    }

    #[test]
    fn siblings_without_deserved_shares_do_not_reclaim_from_each_other() {
        // Conformance capacity ancestor-reclaim case8.
        let mut m = q("root", "{}")
            + &q(
                "parent",
                "{parent: root, capability: {cpu: 4, memory: 4Gi}, deserved: {cpu: 4, memory: 4Gi}}",
            );
        m += &(q("queue-a", "{parent: parent}") + &q("queue-b", "{parent: parent}"));
        m += &sized_node("n1", "{cpu: 2, memory: 2Gi, pods: 10}");
        m += &pod_group("ns1/pg-victim", "queue-b", 1, "", "Running");
        m += &pod_group("ns1/pg-reclaimer", "queue-a", 1, "", "Inqueue");
        m += &group_pod(
            "ns1/p-victim",
            "pg-victim",
            "n1",
            "{cpu: 2, memory: 2Gi}",
            "Running",
        );
        m += &group_pod(
            "ns1/p-reclaimer",
            "pg-reclaimer",
            "",
            "{cpu: 2, memory: 2Gi}",
            "Pending",
        );
        let cands = |ssn: &Session| tasks(ssn, &["ns1/p-victim"]);
        let ssn = session(&hierarchical(1), &m);
        assert!(
            ssn.reclaimable(task(&ssn, "ns1/p-reclaimer"), &cands(&ssn))
                .is_empty()
        );
        let ssn = session(&hierarchical(0), &m);
        assert_eq!(
            ssn.reclaimable(task(&ssn, "ns1/p-reclaimer"), &cands(&ssn)),
            cands(&ssn),
            "level 0: an immediate victim"
        );
    }
}
