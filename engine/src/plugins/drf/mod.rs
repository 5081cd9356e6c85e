//! `drf`: dominant resource fairness (Volcano: pkg/scheduler/plugins/drf/drf.go). Jobs are ordered by their dominant share of
//! the cluster and a preemptor may evict tasks of jobs whose share would stay at least its
//! own. With `enableHierarchy`, queues are also ordered, and reclaimed from, by hierarchical
//! DRF over the tree in the queues' `volcano.sh/hierarchy` annotations.

mod dominant;
mod hierarchy;

use std::cmp::Ordering;
use std::collections::BTreeMap;

use dominant::DominantShare;
use hierarchy::Tree;
use rayon::prelude::*;

use super::share_order::compare_shares;
use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, SessionState};
use crate::model::{JobId, QueueId, Resource, TaskId};

/// Shares closer than this count as equal when choosing victims.
const SHARE_DELTA: f64 = 0.000001;

/// A job's allocation and dominant share.
#[derive(Debug, Clone, Default)]
struct JobShare {
    allocated: Resource,
    share: f64,
}

/// The plugin.
#[derive(Debug, Default)]
pub struct Drf {
    dom: DominantShare,
    jobs: Vec<JobShare>,
    /// The hierarchical DRF tree, with `enableHierarchy`.
    tree: Option<Tree>,
}

/// Builds the plugin; it takes no arguments besides `enableHierarchy`.
pub fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Drf::default()))
}

impl Drf {
    fn job_share(&self, ssn: &SessionState, t: TaskId) -> Option<(JobId, &JobShare)> {
        let j = ssn.job_of(t)?;
        Some((j, self.jobs.get(j.idx())?))
    }

    /// Books `req` into (`allocate`) or out of job `j`'s allocation, its share and the tree.
    fn rebook(&mut self, ssn: &SessionState, j: JobId, req: &Resource, allocate: bool) {
        let job = &mut self.jobs[j.idx()];
        if allocate {
            job.allocated.add(req);
        } else {
            job.allocated.sub(req);
        }
        job.share = self.dom.of(&job.allocated);
        if let Some(tree) = self.tree.as_mut() {
            if allocate {
                tree.add_allocated(req);
            } else {
                tree.sub_allocated(req);
            }
            tree.set_job(ssn, j, &job.allocated, job.share);
            tree.recompute(&self.dom);
        }
    }

    /// Hierarchical reclaim: with the reclaimer's task added to its job, a reclaimee is a victim
    /// when, with it removed from its job, the reclaimer's queue still orders first. Each
    /// reclaimee is judged on its own (victims are not cumulative).
    fn hierarchical_victims(
        &self,
        tree: &Tree,
        ssn: &SessionState,
        reclaimer: TaskId,
        candidates: &[TaskId],
    ) -> Vec<TaskId> {
        let mut victims = Vec::new();
        let Some((lj, lshare)) = self.job_share(ssn, reclaimer) else {
            return victims;
        };
        let lq = ssn.snap.jobs.queue[lj.idx()];
        let mut tree = tree.clone();
        let lalloc = lshare.allocated.plus(ssn.resreq(reclaimer));
        tree.add_allocated(ssn.resreq(reclaimer));
        tree.set_job(ssn, lj, &lalloc, self.dom.of(&lalloc));
        tree.recompute(&self.dom);
        for &t in candidates {
            let Some((rj, rshare)) = self.job_share(ssn, t) else {
                continue;
            };
            let rq = ssn.snap.jobs.queue[rj.idx()];
            let req = ssn.resreq(t);
            tree.sub_allocated(req);
            let ralloc = rshare.allocated.minus(req);
            tree.set_job(ssn, rj, &ralloc, self.dom.of(&ralloc));
            tree.recompute(&self.dom);
            let ret = tree.compare(ssn, lq, rq);
            tree.add_allocated(req);
            tree.set_job(ssn, rj, &rshare.allocated, self.dom.of(&rshare.allocated));
            tree.recompute(&self.dom);
            if ret < 0.0 {
                victims.push(t);
            }
        }
        victims
    }
}

impl Plugin for Drf {
    fn name(&self) -> &str {
        "drf"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        self.dom = DominantShare::new(&ssn.snap.total);
        // Every job's share, on the pool: a large session has 60k jobs.
        let dom = &self.dom;
        self.jobs = ssn
            .jobs
            .allocated
            .as_slice()
            .par_iter()
            .map(|allocated| JobShare {
                share: dom.of(allocated),
                allocated: allocated.clone(),
            })
            .collect();
        if !ssn.config.hierarchy_enabled("drf") {
            return;
        }
        let mut tree = Tree::default();
        for (j, job) in ssn.snap.jobs.ids().zip(&self.jobs) {
            tree.add_allocated(&job.allocated);
            tree.set_job(ssn, j, &job.allocated, job.share);
        }
        if !self.jobs.is_empty() {
            tree.recompute(&self.dom);
        }
        self.tree = Some(tree);
    }

    /// Reports each job's share as the session leaves it (Volcano: plugins/drf/drf.go feeds
    /// `job_share` at open and on every allocate and deallocate event; the last value is the
    /// one a scrape sees).
    fn on_session_close(&mut self, ssn: &mut SessionState) {
        // The names are shared strings all over the heap: taking a reference to each is a cache
        // miss, so they are taken on the pool.
        let jobs = &ssn.snap.jobs;
        ssn.metrics.job_shares = jobs
            .namespace
            .par_iter()
            .zip(&jobs.name)
            .zip(&self.jobs)
            .map(|((namespace, name), job)| (namespace.clone(), name.clone(), job.share))
            .collect();
    }

    /// The smaller dominant share first.
    fn job_order(&self, _ssn: &SessionState, l: JobId, r: JobId) -> Ordering {
        match (self.jobs.get(l.idx()), self.jobs.get(r.idx())) {
            (Some(a), Some(b)) => compare_shares(a.share, b.share),
            _ => Ordering::Equal,
        }
    }

    /// Hierarchy only: the queue first in hierarchical DRF order.
    fn queue_order(&self, ssn: &SessionState, l: QueueId, r: QueueId) -> Ordering {
        let Some(tree) = self.tree.as_ref() else {
            return Ordering::Equal;
        };
        compare_shares(tree.compare(ssn, l, r), 0.0)
    }

    /// With the preemptor's task added, its job's share `ls`; walking the preemptees in order
    /// and taking each out of a running copy of its job's allocation, a preemptee is a victim
    /// while its job's remaining share is at least `ls` (within 1e-6).
    fn preemptable(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        let Some((_, lshare)) = self.job_share(ssn, preemptor) else {
            return Some(Vec::new());
        };
        let ls = self.dom.of(&lshare.allocated.plus(ssn.resreq(preemptor)));
        let mut allocations = BTreeMap::new();
        let mut victims = Vec::new();
        for &t in candidates {
            let Some((j, rshare)) = self.job_share(ssn, t) else {
                continue;
            };
            let ralloc = allocations
                .entry(j)
                .or_insert_with(|| rshare.allocated.clone());
            ralloc.sub(ssn.resreq(t));
            let rs = self.dom.of(ralloc);
            if ls < rs || (ls - rs).abs() <= SHARE_DELTA {
                victims.push(t);
            }
        }
        Some(victims)
    }

    fn reclaimable(
        &self,
        ssn: &SessionState,
        reclaimer: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        let tree = self.tree.as_ref()?;
        Some(self.hierarchical_victims(tree, ssn, reclaimer, candidates))
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        if let Some(j) = ssn.job_of(task).filter(|j| j.idx() < self.jobs.len()) {
            self.rebook(ssn, j, ssn.resreq(task), true);
        }
        Ok(())
    }

    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        if let Some(j) = ssn.job_of(task).filter(|j| j.idx() < self.jobs.len()) {
            self.rebook(ssn, j, ssn.resreq(task), false);
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

    const FLAT: &str = "actions: allocate, preempt\ntiers:\n- plugins:\n  - name: drf\n";
    const HIERARCHICAL: &str = "actions: allocate, reclaim\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n";

    fn hdrf_queue(name: &str, hierarchy: &str, weights: &str) -> String {
        format!(
            "---\nkind: Queue\nmetadata: {{name: {name}, annotations: {{volcano.sh/hierarchy: {hierarchy}, volcano.sh/hierarchy-weights: '{weights}'}}}}\n"
        )
    }

    /// A job in `queue` with `running` 1-cpu tasks on n1 and `pending` more.
    fn job_of(name: &str, queue: &str, running: usize, pending: usize) -> String {
        let mut m = pod_group(&format!("ns/{name}"), queue, 1, "", "Running");
        for i in 0..running + pending {
            let (node, phase) = if i < running {
                ("n1", "Running")
            } else {
                ("", "Pending")
            };
            m += &group_pod(&format!("ns/{name}-{i}"), name, node, "{cpu: 1}", phase);
        }
        m
    }

    fn flat(jobs: &str) -> Session {
        let m = String::from("kind: Queue\nmetadata: {name: q}\n")
            + &sized_node("n1", "{cpu: 10, memory: 10Gi, pods: 100}")
            + jobs;
        session(FLAT, &m)
    }

    #[test]
    fn job_with_the_smaller_dominant_share_orders_first() {
        let ssn = flat(&(job_of("big", "q", 3, 0) + &job_of("small", "q", 1, 1)));
        let (big, small) = (job(&ssn, "ns/big"), job(&ssn, "ns/small"));
        assert!(ssn.job_order_less(small, big));
        assert!(!ssn.job_order_less(big, small));
    }

    #[test]
    fn preemptee_is_a_victim_while_its_job_keeps_at_least_the_preemptors_share() {
        let ssn = flat(&(job_of("r", "q", 5, 0) + &job_of("l", "q", 1, 1)));
        let cands: Vec<TaskId> = (0..5).map(|i| task(&ssn, &format!("ns/r-{i}"))).collect();
        // The preemptor's job would hold 2 of 10 cpu; r keeps 4, 3 and 2 after each eviction.
        assert_eq!(ssn.preemptable(task(&ssn, "ns/l-1"), &cands), cands[..3]);
    }

    #[test]
    fn allocation_and_release_update_the_job_share() {
        let mut ssn = flat(&(job_of("a", "q", 1, 2) + &job_of("b", "q", 2, 0)));
        let (a, b) = (job(&ssn, "ns/a"), job(&ssn, "ns/b"));
        assert!(ssn.job_order_less(a, b));
        let (a1, a2, n1) = (
            task(&ssn, "ns/a-1"),
            task(&ssn, "ns/a-2"),
            ssn.state.snap.nodes.id("n1").unwrap(),
        );
        let mut stmt = Statement::new();
        stmt.allocate(&mut ssn, a1, n1).unwrap();
        stmt.allocate(&mut ssn, a2, n1).unwrap();
        assert!(ssn.job_order_less(b, a), "a now holds 3 cpu against b's 2");
        stmt.discard(&mut ssn);
        assert!(ssn.job_order_less(a, b));
    }

    #[test]
    fn flat_drf_neither_orders_queues_nor_reclaims() {
        let ssn = flat(&(job_of("a", "q", 3, 0) + &job_of("b", "q", 0, 1)));
        assert!(
            ssn.reclaimable(task(&ssn, "ns/b-0"), &[task(&ssn, "ns/a-0")])
                .is_empty()
        );
    }

    fn hierarchical(queues: &str, jobs: &str) -> Session {
        let m =
            String::from(queues) + &sized_node("n1", "{cpu: 10, memory: 10Gi, pods: 100}") + jobs;
        session(HIERARCHICAL, &m)
    }

    #[test]
    fn queues_order_by_share_over_weight_at_the_first_differing_level() {
        let queues =
            hdrf_queue("alpha", "root/alpha", "1/1") + &hdrf_queue("zeta", "root/zeta", "1/2");
        let ssn = hierarchical(
            &queues,
            &(job_of("a", "alpha", 2, 2) + &job_of("z", "zeta", 2, 2)),
        );
        let (alpha, zeta) = (queue(&ssn, "alpha"), queue(&ssn, "zeta"));
        assert!(
            ssn.queue_order_less(zeta, alpha),
            "equal shares, but zeta weighs twice as much"
        );
        assert!(!ssn.queue_order_less(alpha, zeta));
    }

    #[test]
    fn saturated_queue_orders_after_a_demanding_one() {
        let queues =
            hdrf_queue("done", "root/done", "1/1") + &hdrf_queue("hungry", "root/hungry", "1/1");
        let ssn = hierarchical(
            &queues,
            &(job_of("d", "done", 1, 0) + &job_of("h", "hungry", 3, 1)),
        );
        let (done, hungry) = (queue(&ssn, "done"), queue(&ssn, "hungry"));
        assert!(
            ssn.queue_order_less(hungry, done),
            "done's only job has all it asked for"
        );
    }

    #[test]
    fn reclaim_takes_only_from_queues_that_would_still_order_after_the_reclaimer() {
        let queues = hdrf_queue("qa", "root/qa", "1/1")
            + &hdrf_queue("qb", "root/qb", "1/1")
            + &hdrf_queue("qc", "root/qc", "1/1");
        let jobs = job_of("a", "qa", 6, 1) + &job_of("b", "qb", 1, 2) + &job_of("c", "qc", 1, 1);
        let ssn = hierarchical(&queues, &jobs);
        let cands = [task(&ssn, "ns/a-0"), task(&ssn, "ns/c-0")];
        // With the reclaimer's task qb holds 2 cpu: qa keeps 5 without a-0, qc 0 without c-0.
        assert_eq!(ssn.reclaimable(task(&ssn, "ns/b-1"), &cands), cands[..1]);
    }

    #[test]
    fn queues_without_a_hierarchy_annotation_all_compare_equal() {
        let m = String::from(
            "kind: Queue\nmetadata: {name: q1}\n---\nkind: Queue\nmetadata: {name: q2}\n",
        );
        let ssn = hierarchical(&m, &(job_of("a", "q1", 3, 1) + &job_of("b", "q2", 1, 1)));
        let (q1, q2) = (queue(&ssn, "q1"), queue(&ssn, "q2"));
        assert!(ssn.queue_order_less(q1, q2), "falls back to the name");
        assert!(!ssn.queue_order_less(q2, q1));
    }
}
