//! One dispatch function per extension point, each implementing Volcano's combination rule
//! (Volcano: pkg/scheduler/framework/session_plugins.go) in exactly one place. Tiers are walked in order, plugins in order inside a tier;
//! a plugin takes part only if its enable flag for the point is set (points without a flag are
//! noted).

use std::cmp::Ordering;

use fixedbitset::FixedBitSet;
use smallvec::SmallVec;

use super::{EvictionContext, FitError, JobInvalid, Plugin, SearchPurpose, Session, Vote};

use crate::config::Point;
use crate::model::{HyperNodeId, JobId, NodeId, QueueId, SubJobId, TaskId};

impl Session {
    /// JobOrder (less): the first non-equal answer wins; nobody → earlier creation, then
    /// smaller UID (`ns/name`).
    pub fn job_order_less(&self, l: JobId, r: JobId) -> bool {
        match self.job_order_compare(l, r) {
            Ordering::Equal => {
                let j = &self.state.snap.jobs;
                (j.created[l.idx()], &j.uid[l.idx()]) < (j.created[r.idx()], &j.uid[r.idx()])
            }
            o => o == Ordering::Less,
        }
    }

    /// JobOrderCompareFn: the first non-equal answer, `Equal` when nobody answers.
    pub fn job_order_compare(&self, l: JobId, r: JobId) -> Ordering {
        self.enabled(Point::JobOrder)
            .map(|(_, p)| p.job_order(&self.state, l, r))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    }

    /// SubJobOrder (less): first non-equal; nobody → smaller match index, then smaller UID.
    pub fn sub_job_order_less(&self, l: SubJobId, r: SubJobId) -> bool {
        let o = self
            .enabled(Point::SubJobOrder)
            .map(|(_, p)| p.sub_job_order(&self.state, l, r))
            .find(|o| *o != Ordering::Equal);
        match o {
            Some(o) => o == Ordering::Less,
            None => {
                let s = &self.state.snap.sub_jobs;
                (s.match_index[l.idx()], &s.uid[l.idx()])
                    < (s.match_index[r.idx()], &s.uid[r.idx()])
            }
        }
    }

    /// QueueOrder (less): first non-equal; nobody → earlier creation, then name.
    pub fn queue_order_less(&self, l: QueueId, r: QueueId) -> bool {
        let o = self
            .enabled(Point::QueueOrder)
            .map(|(_, p)| p.queue_order(&self.state, l, r))
            .find(|o| *o != Ordering::Equal);
        match o {
            Some(o) => o == Ordering::Less,
            None => {
                let q = &self.state.snap.queues;
                (q.created[l.idx()], &q.name[l.idx()]) < (q.created[r.idx()], &q.name[r.idx()])
            }
        }
    }

    /// VictimQueueOrder (less, no enable flag): first non-equal; nobody → `!QueueOrder(l, r)`.
    pub fn victim_queue_order_less(&self, l: QueueId, r: QueueId, preemptor: QueueId) -> bool {
        for tier in self.all_by_tier() {
            for p in tier {
                let o = p.victim_queue_order(&self.state, l, r, preemptor);
                if o != Ordering::Equal {
                    return o == Ordering::Less;
                }
            }
        }
        !self.queue_order_less(l, r)
    }

    /// TaskOrder (less): first non-equal; nobody → Volcano's `CompareTask` (pod-name index,
    /// then creation, then UID).
    pub fn task_order_less(&self, l: TaskId, r: TaskId) -> bool {
        let o = self
            .enabled(Point::TaskOrder)
            .map(|(_, p)| p.task_order(&self.state, l, r))
            .find(|o| *o != Ordering::Equal);
        if let Some(o) = o {
            return o == Ordering::Less;
        }
        let t = &self.state.snap.tasks;
        match (t.name_index[l.idx()], t.name_index[r.idx()]) {
            (Some(a), Some(b)) if a != b => a < b,
            _ => (t.created[l.idx()], &t.uid[l.idx()]) < (t.created[r.idx()], &t.uid[r.idx()]),
        }
    }

    /// PrePredicate: every plugin must pass; the first error is returned.
    pub fn pre_predicate(&self, task: TaskId) -> Result<(), FitError> {
        for (_, p) in self.enabled(Point::Predicate) {
            p.pre_predicate(&self.state, task)?;
        }
        Ok(())
    }

    /// Predicate: every plugin must pass; the first error is returned (short-circuit).
    pub fn predicate(&self, task: TaskId, node: NodeId) -> Result<(), FitError> {
        for (_, p) in self.enabled(Point::Predicate) {
            p.predicate(&self.state, task, node)?;
        }
        Ok(())
    }

    /// `predicate` for each of `nodes` whose result is still `Ok`, written over that result,
    /// asked a plugin at a time: each plugin sees the nodes every check before it passed, so
    /// every node ends with the error `predicate` gives it (or an earlier check's).
    pub fn predicate_passing(
        &self,
        task: TaskId,
        nodes: &[NodeId],
        results: &mut [Result<(), FitError>],
    ) {
        for (_, p) in self.enabled(Point::Predicate) {
            let asked: Vec<NodeId> = nodes
                .iter()
                .zip(results.iter())
                .filter(|(_, r)| r.is_ok())
                .map(|(&n, _)| n)
                .collect();
            if asked.is_empty() {
                break;
            }
            let mut answers = p.predicate_nodes(&self.state, task, &asked);
            if answers.len() != asked.len() {
                // A batch that does not answer every node is not trusted: asked node by node.
                answers = asked
                    .iter()
                    .map(|&n| p.predicate(&self.state, task, n))
                    .collect();
            }
            for (r, answer) in results.iter_mut().filter(|r| r.is_ok()).zip(answers) {
                *r = answer;
            }
        }
    }

    /// NodeOrder: the sum of every plugin's score; the first error aborts with 0.
    pub fn node_order(&self, task: TaskId, node: NodeId) -> f64 {
        let mut sum = 0.0;
        for (_, p) in self.enabled(Point::NodeOrder) {
            match p.node_order(&self.state, task, node) {
                Some(Ok(s)) => sum += s,
                Some(Err(_)) => return 0.0,
                None => {}
            }
        }
        sum
    }

    /// BatchNodeOrder: per-node sum over plugins; the first error aborts with `None`. One node's
    /// sum (a re-rank after a placement) is kept inline.
    pub fn batch_node_order(&self, task: TaskId, nodes: &[NodeId]) -> Option<SmallVec<[f64; 1]>> {
        let mut sum: SmallVec<[f64; 1]> = smallvec::smallvec![0.0; nodes.len()];
        for (_, p) in self.enabled(Point::NodeOrder) {
            match p.batch_node_order(&self.state, task, nodes) {
                Some(Ok(scores)) => {
                    for (s, v) in sum.iter_mut().zip(scores) {
                        *s += v;
                    }
                }
                Some(Err(_)) => return None,
                None => {}
            }
        }
        Some(sum)
    }

    /// NodeLocal (tephra's own point, no enable flag): true when every plugin is node-local for
    /// `task`, so its node ranking may be shared by tasks of the same signature.
    pub fn node_local(&self, task: TaskId) -> bool {
        self.all_by_tier()
            .flatten()
            .all(|p| p.node_local(&self.state, task))
    }

    /// StaticFeasible (tephra's own point, under the Predicate enable flag): the intersection
    /// of what the plugins with an enabled predicate know; `None` when none knows anything.
    pub fn static_feasible(&self, task: TaskId) -> Option<FixedBitSet> {
        self.enabled(Point::Predicate)
            .filter_map(|(_, p)| p.static_feasible(&self.state, task))
            .reduce(|mut all, s| {
                all.intersect_with(&s);
                all
            })
    }

    /// BestNode: the first plugin that names a node wins.
    pub fn best_node(&self, task: TaskId, scores: &[(NodeId, f64)]) -> Option<NodeId> {
        self.enabled(Point::BestNode)
            .find_map(|(_, p)| p.best_node(&self.state, task, scores))
    }

    /// JobValid (no enable flag): the first failure is returned.
    pub fn job_valid(&self, job: JobId) -> Option<JobInvalid> {
        self.all_by_tier()
            .flatten()
            .find_map(|p| p.job_valid(&self.state, job))
    }

    /// JobReady: every registered plugin must say true; nobody → true.
    pub fn job_ready(&self, job: JobId) -> bool {
        self.enabled(Point::JobReady)
            .all(|(_, p)| p.job_ready(&self.state, job).unwrap_or(true))
    }

    /// SubJobReady: without a sub-group policy, `JobReady`; else every registered plugin true.
    pub fn sub_job_ready(&self, job: JobId, sj: SubJobId) -> bool {
        if !self.state.snap.jobs.has_sub_group_policy[job.idx()] {
            return self.job_ready(job);
        }
        self.enabled(Point::SubJobReady)
            .all(|(_, p)| p.sub_job_ready(&self.state, job, sj).unwrap_or(true))
    }

    /// The tiered vote (Volcano: pkg/scheduler/framework/session_plugins.go, JobPipelined and JobEnqueueable): any Reject → false at once; the first tier with a
    /// Permit → true; nobody → true.
    fn vote(&self, point: Point, f: impl Fn(&dyn Plugin) -> Vote) -> bool {
        for tier in self.enabled_by_tier(point) {
            let mut permitted = false;
            for p in tier {
                match f(p) {
                    Vote::Reject => return false,
                    Vote::Permit => permitted = true,
                    Vote::Abstain => {}
                }
            }
            if permitted {
                return true;
            }
        }
        true
    }

    /// JobPipelined: tiered vote.
    pub fn job_pipelined(&self, job: JobId) -> bool {
        self.vote(Point::JobPipelined, |p| p.job_pipelined(&self.state, job))
    }

    /// SubJobPipelined: without a sub-group policy, `JobPipelined`; else tiered vote.
    pub fn sub_job_pipelined(&self, job: JobId, sj: SubJobId) -> bool {
        if !self.state.snap.jobs.has_sub_group_policy[job.idx()] {
            return self.job_pipelined(job);
        }
        self.vote(Point::SubJobPipelined, |p| {
            p.sub_job_pipelined(&self.state, job, sj)
        })
    }

    /// JobEnqueueable: tiered vote (gated by `enableJobEnqueued`).
    pub fn job_enqueueable(&self, job: JobId) -> bool {
        self.vote(Point::JobEnqueued, |p| p.job_enqueueable(&self.state, job))
    }

    /// JobStarving (Volcano: pkg/scheduler/framework/session_plugins.go, JobStarving): in the first tier with a registered plugin, all must be true;
    /// nobody registered → false.
    pub fn job_starving(&self, job: JobId) -> bool {
        for tier in self.enabled_by_tier(Point::JobStarving) {
            let mut found = false;
            for p in tier {
                if let Some(v) = p.job_starving(&self.state, job) {
                    found = true;
                    if !v {
                        return false;
                    }
                }
            }
            if found {
                return true;
            }
        }
        false
    }

    /// The tiered victim intersection (Volcano: pkg/scheduler/framework/session_plugins.go, Preemptable and Reclaimable) over `tiers`: an empty answer abandons the
    /// tier, an empty intersection is re-initialised by the next plugin, the first tier that
    /// ends with a non-empty list decides.
    fn victims<'a>(
        tiers: impl Iterator<Item = impl Iterator<Item = &'a dyn Plugin>>,
        f: impl Fn(&dyn Plugin) -> Option<Vec<TaskId>>,
    ) -> Vec<TaskId> {
        for tier in tiers {
            let mut victims: Option<Vec<TaskId>> = None;
            for p in tier {
                let Some(cands) = f(p) else { continue };
                if cands.is_empty() {
                    victims = None;
                    break;
                }
                victims = match victims {
                    None => Some(cands),
                    Some(v) => {
                        let kept: Vec<TaskId> =
                            v.into_iter().filter(|t| cands.contains(t)).collect();
                        if kept.is_empty() { None } else { Some(kept) }
                    }
                };
            }
            if let Some(v) = victims {
                return v;
            }
        }
        Vec::new()
    }

    /// Preemptable: tiered victim intersection.
    pub fn preemptable(&self, preemptor: TaskId, candidates: &[TaskId]) -> Vec<TaskId> {
        Self::victims(self.enabled_by_tier(Point::Preemptable), |p| {
            p.preemptable(&self.state, preemptor, candidates)
        })
    }

    /// Reclaimable: tiered victim intersection.
    pub fn reclaimable(&self, reclaimer: TaskId, candidates: &[TaskId]) -> Vec<TaskId> {
        Self::victims(self.enabled_by_tier(Point::Reclaimable), |p| {
            p.reclaimable(&self.state, reclaimer, candidates)
        })
    }

    /// UnifiedEvictable (no enable flag): tiered victim intersection.
    pub fn unified_evictable(&self, ctx: &EvictionContext, candidates: &[TaskId]) -> Vec<TaskId> {
        Self::victims(self.all_by_tier(), |p| {
            p.unified_evictable(&self.state, ctx, candidates)
        })
    }

    /// VictimTasks: per tier, the union of every plugin's answer; the first non-empty tier wins.
    pub fn victim_tasks(&self, tasks: &[TaskId]) -> Vec<TaskId> {
        for tier in self.enabled_by_tier(Point::Victim) {
            let mut union: Vec<TaskId> = Vec::new();
            for p in tier {
                for t in p.victim_tasks(&self.state, tasks).unwrap_or_default() {
                    if !union.contains(&t) {
                        union.push(t);
                    }
                }
            }
            if !union.is_empty() {
                return union;
            }
        }
        Vec::new()
    }

    /// Allocatable: every registered plugin must say true.
    pub fn allocatable(&self, queue: QueueId, task: TaskId) -> bool {
        self.enabled(Point::Allocatable)
            .all(|(_, p)| p.allocatable(&self.state, queue, task).unwrap_or(true))
    }

    /// Overused: any registered plugin saying true.
    pub fn overused(&self, queue: QueueId) -> bool {
        self.enabled(Point::Overused)
            .any(|(_, p)| p.overused(&self.state, queue).unwrap_or(false))
    }

    /// Preemptive: every registered plugin must say true.
    pub fn preemptive(&self, queue: QueueId, tasks: &[TaskId]) -> bool {
        self.enabled(Point::Preemptive)
            .all(|(_, p)| p.preemptive(&self.state, queue, tasks).unwrap_or(true))
    }

    /// Starts a preemption dry run for `preemptor` in every plugin (no enable flag).
    pub fn simulation_begin(&self, preemptor: TaskId) {
        for p in self.all_by_tier().flatten() {
            p.simulation_begin(&self.state, preemptor);
        }
    }

    /// Ends a preemption dry run for `preemptor` in every plugin (no enable flag).
    pub fn simulation_end(&self, preemptor: TaskId) {
        for p in self.all_by_tier().flatten() {
            p.simulation_end(&self.state, preemptor);
        }
    }

    /// Plugins whose simulation hooks are on: `enablePreemptable` or `enabledAllocatable`.
    fn simulating(&self) -> impl Iterator<Item = &dyn Plugin> {
        self.tiers.iter().flat_map(move |r| {
            self.slots[r.clone()]
                .iter()
                .filter(|s| {
                    s.option.enabled(Point::Preemptable) || s.option.enabled(Point::Allocatable)
                })
                .map(|s| s.plugin.as_ref())
        })
    }

    /// SimulateRemoveTask: every enabled plugin; the first error is returned.
    pub fn simulate_remove_task(&self, preemptor: TaskId, task: TaskId) -> Result<(), String> {
        self.simulating()
            .try_for_each(|p| p.simulate_remove_task(&self.state, preemptor, task))
    }

    /// SimulateAddTask: every enabled plugin; the first error is returned.
    pub fn simulate_add_task(&self, preemptor: TaskId, task: TaskId) -> Result<(), String> {
        self.simulating()
            .try_for_each(|p| p.simulate_add_task(&self.state, preemptor, task))
    }

    /// HyperNodeOrder: per hyper-node sum over plugins (0 when nobody scores).
    pub fn hyper_node_order(&self, sj: SubJobId, hns: &[HyperNodeId]) -> Vec<f64> {
        let mut sum = vec![0.0; hns.len()];
        for (_, p) in self.enabled(Point::HyperNodeOrder) {
            if let Some(scores) = p.hyper_node_order(&self.state, sj, hns) {
                for (s, v) in sum.iter_mut().zip(scores) {
                    *s += v;
                }
            }
        }
        sum
    }

    /// HyperNodeGradientForJob: the first plugin that registered it decides; nobody → `[[hn]]`.
    pub fn hyper_node_gradient_for_job(
        &self,
        job: JobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Vec<Vec<HyperNodeId>> {
        self.enabled(Point::HyperNodeGradient)
            .find_map(|(_, p)| p.hyper_node_gradient_for_job(&self.state, job, hn, purpose))
            .unwrap_or_else(|| vec![vec![hn]])
    }

    /// HyperNodeGradientForSubJob: the first plugin that registered it decides; nobody → `[[hn]]`.
    pub fn hyper_node_gradient_for_sub_job(
        &self,
        sj: SubJobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Vec<Vec<HyperNodeId>> {
        self.enabled(Point::HyperNodeGradient)
            .find_map(|(_, p)| p.hyper_node_gradient_for_sub_job(&self.state, sj, hn, purpose))
            .unwrap_or_else(|| vec![vec![hn]])
    }
}

#[cfg(test)]
mod tests {
    use crate::framework::{FitError, Plugin, SessionState, Status, StatusCode};
    use crate::harness::Harness;
    use crate::model::{NodeId, TaskId};

    /// Refuses nodes `n1` and `n3`; its batch answer leaves nodes out, so it must not be used.
    struct RefusesOdd;

    impl Plugin for RefusesOdd {
        fn name(&self) -> &str {
            "refuses-odd"
        }

        fn predicate(&self, ssn: &SessionState, _: TaskId, node: NodeId) -> Result<(), FitError> {
            match &*ssn.snap.nodes.name[node.idx()] {
                "n1" | "n3" => Err(FitError {
                    statuses: vec![Status {
                        code: StatusCode::Unschedulable,
                        reason: "odd".into(),
                    }]
                    .into(),
                }),
                _ => Ok(()),
            }
        }

        fn predicate_nodes(
            &self,
            _: &SessionState,
            _: TaskId,
            _: &[NodeId],
        ) -> Vec<Result<(), FitError>> {
            Vec::new()
        }
    }

    #[test]
    fn a_batch_of_nodes_gets_each_node_the_error_of_the_first_plugin_that_refuses_it() {
        let conf =
            "actions: allocate\ntiers:\n- plugins:\n  - name: refuses-odd\n  - name: predicates\n";
        let ssn = Harness::new(conf)
            .with_plugin("refuses-odd", |_| Ok(Box::new(RefusesOdd)))
            .queue("q", 1)
            .node("n1", "4", "8Gi", &[("zone", "a")])
            .node("n2", "4", "8Gi", &[("zone", "a")])
            .node("n3", "4", "8Gi", &[("zone", "b")])
            .node("n4", "4", "8Gi", &[("zone", "b")])
            .node("n5", "4", "8Gi", &[("zone", "a")])
            .pod_group("ns", "pg", "q", 1)
            .manifests(
                "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, uid: p, annotations: {scheduling.k8s.io/group-name: pg}}\nspec: {schedulerName: volcano, nodeSelector: {zone: a}, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\nstatus: {phase: Pending}\n",
            )
            .open()
            .unwrap();
        let t = ssn.state.snap.task_id("ns/p").unwrap();
        ssn.pre_predicate(t).unwrap();
        let nodes: Vec<NodeId> = ssn.state.snap.nodes.ids().collect();
        let one_by_one: Vec<_> = nodes.iter().map(|&n| ssn.predicate(t, n)).collect();
        let mut batch = vec![Ok(()); nodes.len()];
        ssn.predicate_passing(t, &nodes, &mut batch);
        assert_eq!(batch, one_by_one);
        let reasons: Vec<String> = one_by_one
            .iter()
            .map(|r| match r {
                Ok(()) => "ok".to_string(),
                Err(e) => e.statuses[0].reason.to_string(),
            })
            .collect();
        assert_eq!(reasons[0], "odd", "refuses-odd comes first in the tier");
        assert_eq!(reasons[1], "ok");
        assert_eq!(reasons[2], "odd");
        assert_ne!(reasons[3], "ok", "the node selector refuses n4");
        assert_eq!(reasons[4], "ok");
    }

    #[test]
    fn every_point_of_the_table_is_dispatched_by_the_session() {
        let dispatchers = [include_str!("dispatch.rs"), include_str!("session.rs")];
        let missing: Vec<&str> = crate::framework::POINTS
            .iter()
            .copied()
            .filter(|point| {
                let call = format!(".{point}(");
                !dispatchers.iter().any(|source| source.contains(&call))
            })
            .collect();
        assert!(
            missing.is_empty(),
            "points declared in points.rs that no dispatch function calls: {missing:?}"
        );
    }
}
