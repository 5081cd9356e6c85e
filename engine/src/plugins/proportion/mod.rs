//! `proportion`: weighted max-min fair sharing of the cluster among the queues that have jobs
//! (Volcano: pkg/scheduler/plugins/proportion/proportion.go). Each queue deserves a weighted part of the cluster, never more than it asks
//! for nor less than its guarantee; allocation stops at `deserved` and admission at the real
//! capability.
//!
//! Volcano's PrePredicate and Simulate* functions (a per-task copy of the attributes for
//! preemption simulation) have no counterpart: tephra's framework has no simulation points.

mod attrs;
mod deserved;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, Ordering as AtomicOrdering};

use attrs::QueueAttr;

use super::share_order::compare_shares;
use super::{job_resources, unschedulable_event};
use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, QueueFigures, SessionState, Vote};
use crate::model::{DimDefault, JobId, QueueId, Resource, TaskId};

/// The plugin; attributes exist only for queues with a job in the session.
#[derive(Debug, Default)]
pub struct Proportion {
    queues: Vec<Option<QueueAttr>>,
    /// Per queue, what the metrics get at open (Volcano feeds request and inqueue only then).
    opened: Vec<QueueFigures>,
    /// Per queue, the last `overused` answer: 0 never asked, 1 no, 2 yes (Volcano feeds
    /// `queue_overused` on every call).
    last_overused: Vec<AtomicU8>,
}

/// Builds the plugin; it takes no arguments.
pub fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Proportion::default()))
}

impl Proportion {
    fn attr(&self, q: QueueId) -> Option<&QueueAttr> {
        self.queues.get(q.idx()).and_then(Option::as_ref)
    }

    fn attr_mut(&mut self, q: QueueId) -> Option<&mut QueueAttr> {
        self.queues.get_mut(q.idx()).and_then(Option::as_mut)
    }

    fn attr_of_task(&mut self, ssn: &SessionState, t: TaskId) -> Option<&mut QueueAttr> {
        self.attr_mut(ssn.queue_of_task(t)?)
    }
}

impl Plugin for Proportion {
    fn name(&self) -> &str {
        "proportion"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        self.queues = attrs::build(ssn);
        deserved::water_fill(&ssn.snap.total, &mut self.queues);
        self.opened = ssn
            .snap
            .queues
            .ids()
            .map(|q| opened_figures(&ssn.snap.queues.name[q.idx()], self.attr(q)))
            .collect();
        self.last_overused = (0..self.queues.len()).map(|_| AtomicU8::new(0)).collect();
    }

    /// Reports each queue's figures as the session leaves them (Volcano:
    /// plugins/proportion/proportion.go feeds them at open and on allocate and deallocate
    /// events).
    fn on_session_close(&mut self, ssn: &mut SessionState) {
        let opened = std::mem::take(&mut self.opened);
        for (q, mut figures) in ssn.snap.queues.ids().zip(opened) {
            if let Some(attr) = self.attr(q) {
                figures.allocated = Some(attr.usage.allocated.clone());
                figures.share = Some(attr.share);
            }
            figures.overused = match self.last_overused[q.idx()].load(AtomicOrdering::Relaxed) {
                0 => None,
                answer => Some(answer == 2),
            };
            ssn.metrics.queues.push(figures);
        }
    }

    /// Higher `spec.priority` first, then the smaller share.
    fn queue_order(&self, ssn: &SessionState, l: QueueId, r: QueueId) -> Ordering {
        let prio = &ssn.snap.queues.priority;
        if prio[l.idx()] != prio[r.idx()] {
            return prio[r.idx()].cmp(&prio[l.idx()]);
        }
        match (self.attr(l), self.attr(r)) {
            (Some(la), Some(ra)) => compare_shares(la.share, ra.share),
            _ => Ordering::Equal,
        }
    }

    /// Walks the reclaimees in order, taking each whose queue (as reduced by the victims taken
    /// so far) still holds more than it deserves.
    fn reclaimable(
        &self,
        ssn: &SessionState,
        _reclaimer: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        let mut allocations = BTreeMap::new();
        let mut victims = Vec::new();
        for &t in candidates {
            let Some(q) = ssn.queue_of_task(t) else {
                continue;
            };
            let Some(attr) = self.attr(q) else { continue };
            let allocated = allocations
                .entry(q)
                .or_insert_with(|| attr.usage.allocated.clone());
            if !allocated.less_equal(&attr.deserved, DimDefault::Zero) {
                allocated.sub(ssn.resreq(t));
                victims.push(t);
            }
        }
        Some(victims)
    }

    fn overused(&self, _ssn: &SessionState, queue: QueueId) -> Option<bool> {
        let overused = self.attr(queue).map(QueueAttr::overused)?;
        if let Some(last) = self.last_overused.get(queue.idx()) {
            last.store(1 + u8::from(overused), AtomicOrdering::Relaxed);
        }
        Some(overused)
    }

    /// The queue is open and the task fits in what is left of its deserved share.
    fn allocatable(&self, ssn: &SessionState, queue: QueueId, task: TaskId) -> Option<bool> {
        if !ssn.snap.queues.open[queue.idx()] {
            return Some(false);
        }
        Some(self.attr(queue)?.fits_deserved(ssn.resreq(task)))
    }

    /// Same test as `allocatable`, for reclaiming tasks asking together.
    fn preemptive(&self, ssn: &SessionState, queue: QueueId, tasks: &[TaskId]) -> Option<bool> {
        if !ssn.snap.queues.open[queue.idx()] {
            return Some(false);
        }
        Some(self.attr(queue)?.fits_deserved(&ssn.total_resreq(tasks)))
    }

    /// Admits a job while `minResources + allocated + inqueue − elastic` stays within the
    /// queue's real capability on the dimensions the job asks for.
    fn job_enqueueable(&self, ssn: &SessionState, job: JobId) -> Vote {
        let q = ssn.snap.jobs.queue[job.idx()];
        if !ssn.snap.queues.open[q.idx()] {
            return Vote::Reject;
        }
        let (Some(attr), Some(min)) = (self.attr(q), job_resources::min_resources(ssn, job)) else {
            return Vote::Permit;
        };
        match attr
            .usage
            .with_admitted(min)
            .less_equal_with_dimension(&attr.real_capability, min)
        {
            Ok(()) => Vote::Permit,
            Err(names) => {
                unschedulable_event::record(
                    ssn,
                    job,
                    "queue resource quota insufficient",
                    "insufficient",
                    &names,
                );
                Vote::Reject
            }
        }
    }

    /// Books the admitted job's minimum (less gated pods) as reserved in its queue.
    fn job_enqueued(&mut self, ssn: &SessionState, job: JobId) {
        let Some(min) = job_resources::min_resources(ssn, job) else {
            return;
        };
        let reserved = job_resources::deduct_sch_gated(ssn, job, min);
        if let Some(attr) = self.attr_mut(ssn.snap.jobs.queue[job.idx()]) {
            attr.usage.inqueue.add(&reserved);
        }
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        if let Some(attr) = self.attr_of_task(ssn, task) {
            attr.usage.allocated.add(ssn.resreq(task));
            attr.update_share();
        }
        Ok(())
    }

    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        if let Some(attr) = self.attr_of_task(ssn, task) {
            attr.usage.allocated.sub(ssn.resreq(task));
            attr.update_share();
        }
    }
}

/// What proportion reports for a queue at open: with attributes, its allocation, request,
/// reservation, weight, deserved share and share; without, zero allocation, request and
/// reservation.
fn opened_figures(name: &str, attr: Option<&QueueAttr>) -> QueueFigures {
    let mut figures = QueueFigures::named(name);
    match attr {
        Some(a) => {
            figures.allocated = Some(a.usage.allocated.clone());
            figures.request = Some(a.usage.request.clone());
            figures.inqueue = Some(a.usage.inqueue.clone());
            figures.weight = Some(f64::from(a.weight));
            figures.deserved = Some(a.deserved.clone());
            figures.share = Some(a.share);
        }
        None => {
            figures.allocated = Some(Resource::empty());
            figures.request = Some(Resource::empty());
            figures.inqueue = Some(Resource::empty());
        }
    }
    figures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::{Session, Statement};
    use crate::harness::find::{job, queue, task};
    use crate::harness::objects::{group_pod, pod_group, sized_node};
    use crate::harness::{ALLOCATE_ONLY, session};

    const CONF: &str = "actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: proportion\n";

    /// Volcano's proportion test cluster: two 2-cpu nodes, q1 (capability 2 cpu / 2G) running
    /// 1 cpu / 2G, q2 (capability 3 cpu / 3G) running 2 cpu / 1G.
    fn cluster(extra: &str) -> String {
        let mut s = String::from(
            "kind: Queue\nmetadata: {name: q1}\nspec: {capability: {cpu: 2, memory: 2G}}\n---\nkind: Queue\nmetadata: {name: q2}\nspec: {capability: {cpu: 3, memory: 3G}}\n",
        );
        s += &sized_node("n1", "{cpu: 2, memory: 2G, pods: 10}");
        s += &sized_node("n2", "{cpu: 2, memory: 2G, pods: 10}");
        s += &pod_group("ns1/pg1", "q1", 1, "{cpu: 1, memory: 2G}", "Running");
        s += &pod_group("ns1/pg2", "q2", 1, "{cpu: 2, memory: 1G}", "Running");
        s += &group_pod("ns1/pod1", "pg1", "n1", "{cpu: 1, memory: 2G}", "Running");
        s += &group_pod("ns1/pod2", "pg2", "n2", "{cpu: 2, memory: 1G}", "Running");
        s + extra
    }

    /// The plugin opened directly on a session's state, to look at its attributes.
    fn opened(ssn: &Session) -> Proportion {
        let mut p = Proportion::default();
        p.on_session_open(&ssn.state);
        p
    }

    #[test]
    fn deserved_is_filled_by_weight_and_capped_by_request() {
        let mut m = String::from(
            "kind: Queue\nmetadata: {name: light}\nspec: {weight: 1}\n---\nkind: Queue\nmetadata: {name: heavy}\nspec: {weight: 3}\n",
        );
        m += &sized_node("n1", "{cpu: 8, memory: 8Gi, pods: 20}");
        m += &pod_group("ns/a", "light", 1, "", "Inqueue");
        m += &pod_group("ns/b", "heavy", 1, "", "Inqueue");
        m += &group_pod("ns/a-0", "a", "", "{cpu: 6, memory: 1Gi}", "Pending");
        m += &group_pod("ns/b-0", "b", "", "{cpu: 3, memory: 1Gi}", "Pending");
        let ssn = session(ALLOCATE_ONLY, &m);
        let p = opened(&ssn);
        let deserved = |name| p.attr(queue(&ssn, name)).unwrap().deserved.milli_cpu;
        // Round 1 gives heavy 6 of 8 cpu, capped at its 3; light gets 2, then the 3 left over.
        assert_eq!(deserved("heavy"), 3000.0);
        assert_eq!(deserved("light"), 5000.0);
    }

    #[test]
    fn guarantee_raises_deserved_and_limits_the_others_real_capability() {
        let mut m = String::from(
            "kind: Queue\nmetadata: {name: g}\nspec: {guarantee: {resource: {cpu: 3}}}\n---\nkind: Queue\nmetadata: {name: o}\n",
        );
        m += &sized_node("n1", "{cpu: 4, memory: 4Gi, pods: 20}");
        m += &pod_group("ns/a", "g", 1, "", "Inqueue");
        m += &pod_group("ns/b", "o", 1, "", "Inqueue");
        m += &group_pod("ns/a-0", "a", "", "{cpu: 1}", "Pending");
        m += &group_pod("ns/b-0", "b", "", "{cpu: 4}", "Pending");
        let ssn = session(ALLOCATE_ONLY, &m);
        let p = opened(&ssn);
        let g = p.attr(queue(&ssn, "g")).unwrap();
        let o = p.attr(queue(&ssn, "o")).unwrap();
        assert_eq!(
            g.deserved.milli_cpu, 3000.0,
            "never less than the guarantee"
        );
        assert_eq!(
            o.real_capability.milli_cpu, 1000.0,
            "the cluster less g's guarantee"
        );
        assert_eq!(o.deserved.milli_cpu, 1000.0);
    }

    #[test]
    fn queue_order_prefers_higher_priority_then_smaller_share() {
        let mut m = cluster("");
        m += "---\nkind: Queue\nmetadata: {name: vip}\nspec: {priority: 10}\n---\nkind: Queue\nmetadata: {name: zz}\n";
        m += &pod_group("ns1/pg8", "vip", 1, "", "Running");
        m += &group_pod("ns1/pod8", "pg8", "n1", "{cpu: 1}", "Running");
        m += &pod_group("ns1/pg9", "zz", 1, "", "Inqueue");
        m += &group_pod("ns1/pod9", "pg9", "", "{cpu: 1}", "Pending");
        let ssn = session(CONF, &m);
        let (q1, q2, vip, zz) = (
            queue(&ssn, "q1"),
            queue(&ssn, "q2"),
            queue(&ssn, "vip"),
            queue(&ssn, "zz"),
        );
        // q1, q2 and vip hold all they deserve (share 1); zz holds nothing (share 0).
        assert!(
            ssn.queue_order_less(vip, q1),
            "priority before share and name"
        );
        assert!(ssn.queue_order_less(zz, q1), "smaller share before name");
        assert!(!ssn.queue_order_less(q1, zz));
        assert!(
            ssn.queue_order_less(q1, q2),
            "equal shares fall back to the name"
        );
    }

    #[test]
    fn queue_holding_its_deserved_share_is_overused() {
        let ssn = session(CONF, &cluster(""));
        assert!(
            ssn.overused(queue(&ssn, "q1")),
            "deserved is capped at the request, all allocated"
        );
    }

    #[test]
    fn allocatable_compares_only_the_dimensions_the_task_requests() {
        // Conformance proportion case1: q2's cpu is used up but pod4 asks for memory only.
        let extra = pod_group("ns1/pg4", "q2", 1, "{cpu: 0, memory: 1G}", "Pending")
            + &group_pod("ns1/pod4", "pg4", "", "{cpu: 0, memory: 1G}", "Pending");
        let ssn = session(CONF, &cluster(&extra));
        assert!(ssn.job_enqueueable(job(&ssn, "ns1/pg4")));
        assert!(ssn.allocatable(queue(&ssn, "q2"), task(&ssn, "ns1/pod4")));
        assert!(ssn.preemptive(queue(&ssn, "q2"), &[task(&ssn, "ns1/pod4")]));
    }

    #[test]
    fn task_beyond_deserved_is_not_allocatable() {
        // Conformance proportion case3: q1 deserves only what it runs.
        let extra = pod_group("ns1/pg5", "q1", 1, "{cpu: 1, memory: 1G}", "Inqueue")
            + &group_pod("ns1/pod5", "pg5", "", "{cpu: 1, memory: 1G}", "Pending");
        let ssn = session(CONF, &cluster(&extra));
        assert!(!ssn.allocatable(queue(&ssn, "q1"), task(&ssn, "ns1/pod5")));
    }

    #[test]
    fn job_beyond_real_capability_is_refused_with_a_pod_group_event() {
        // Conformance proportion case2: q1 would hold 2 cpu / 3G against a 2 cpu / 2G capability.
        let extra = pod_group("ns1/pg5", "q1", 1, "{cpu: 1, memory: 1G}", "Pending")
            + &group_pod("ns1/pod5", "pg5", "", "{cpu: 1, memory: 1G}", "Pending");
        let mut ssn = session(CONF, &cluster(&extra));
        assert!(!ssn.job_enqueueable(job(&ssn, "ns1/pg5")));
        let events = ssn.state.take_events();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].reason, "Unschedulable");
        assert_eq!(events[0].type_, "Normal");
        assert_eq!(
            events[0].message,
            "queue resource quota insufficient: insufficient memory"
        );
    }

    #[test]
    fn closed_queue_refuses_admission_and_allocation_without_an_event() {
        // Conformance proportion case4.
        let mut m = String::from(
            "kind: Queue\nmetadata: {name: q3}\nspec: {capability: {cpu: 3, memory: 3G}}\nstatus: {state: Closed}\n",
        );
        m += &sized_node("n1", "{cpu: 2, memory: 2G, pods: 10}");
        m += &pod_group("ns1/pg6", "q3", 1, "{cpu: 1, memory: 1G}", "Pending");
        m += &group_pod("ns1/pod6", "pg6", "", "{cpu: 1, memory: 1G}", "Pending");
        let mut ssn = session(CONF, &m);
        assert!(!ssn.job_enqueueable(job(&ssn, "ns1/pg6")));
        assert!(!ssn.allocatable(queue(&ssn, "q3"), task(&ssn, "ns1/pod6")));
        assert!(ssn.state.take_events().is_empty());
    }

    #[test]
    fn enqueued_minimum_counts_against_the_next_admission() {
        let mut m =
            String::from("kind: Queue\nmetadata: {name: q}\nspec: {capability: {cpu: 3}}\n");
        m += &sized_node("n1", "{cpu: 8, memory: 8Gi, pods: 10}");
        m += &pod_group("ns/a", "q", 1, "{cpu: 2}", "Pending");
        m += &pod_group("ns/b", "q", 1, "{cpu: 2}", "Pending");
        let mut ssn = session(CONF, &m);
        let (a, b) = (job(&ssn, "ns/a"), job(&ssn, "ns/b"));
        assert!(ssn.job_enqueueable(a));
        ssn.job_enqueued(a);
        assert!(!ssn.job_enqueueable(b));
    }

    #[test]
    fn reclaimable_takes_tasks_while_their_queue_stays_above_deserved() {
        let mut m = String::from(
            "kind: Queue\nmetadata: {name: rich}\n---\nkind: Queue\nmetadata: {name: poor}\n",
        );
        m += &sized_node("n1", "{cpu: 4, memory: 4Gi, pods: 10}");
        m += &pod_group("ns/r", "rich", 1, "", "Running");
        m += &pod_group("ns/p", "poor", 1, "", "Inqueue");
        for i in 0..4 {
            m += &group_pod(&format!("ns/r-{i}"), "r", "n1", "{cpu: 1}", "Running");
        }
        m += &group_pod("ns/p-0", "p", "", "{cpu: 2}", "Pending");
        let ssn = session(CONF, &m);
        let cands: Vec<TaskId> = (0..4).map(|i| task(&ssn, &format!("ns/r-{i}"))).collect();
        // rich deserves 2 of its 4 cpu: two victims bring it back to its share.
        assert_eq!(ssn.reclaimable(task(&ssn, "ns/p-0"), &cands), cands[..2]);
    }

    #[test]
    fn allocation_and_eviction_move_the_queue_share() {
        let mut m = String::from("kind: Queue\nmetadata: {name: q}\n");
        m += &sized_node("n1", "{cpu: 4, memory: 4Gi, pods: 10}");
        m += &pod_group("ns/a", "q", 1, "", "Inqueue");
        m += &group_pod("ns/a-0", "a", "", "{cpu: 2}", "Pending");
        let mut ssn = session(CONF, &m);
        let (q, t, n) = (
            queue(&ssn, "q"),
            task(&ssn, "ns/a-0"),
            ssn.state.snap.nodes.id("n1").unwrap(),
        );
        assert!(!ssn.overused(q));
        let mut stmt = Statement::new();
        stmt.allocate(&mut ssn, t, n).unwrap();
        assert!(ssn.overused(q), "the allocate handler booked the task");
        stmt.discard(&mut ssn);
        assert!(!ssn.overused(q), "the deallocate handler released it");
    }
}
