//! `network-topology-aware` (Volcano: pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go): which hyper-nodes a job or sub-job may use (gradients
//! by tier), how full each candidate hyper-node would be (binpack-style score), and node scores
//! that keep a job's tasks close together.

use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, SearchPurpose, SessionState};
use crate::model::{
    DimDefault, HyperNodeId, JobId, NodeId, Resource, ResourceName, SubJobId, TaskId,
};
use crate::snapshot::NetworkTopology;

/// Plugin arguments and per-session hyper-node resource sums.
#[derive(Debug)]
pub struct NetworkTopologyAware {
    weight: f64,
    /// Binpack weight per resource (cpu, memory, configured scalars).
    weights: Vec<(ResourceName, f64)>,
    normal_pod_enable: bool,
    fading: f64,
    /// Most hyper-nodes an eviction gradient offers (`hypernode.gradient.evict.max-hypernodes`).
    evict_max_hyper_nodes: usize,
    allocatable: Vec<Resource>,
    used: Vec<Resource>,
    idle: Vec<Resource>,
    future_idle: Vec<Resource>,
    min_tier: i32,
    max_tier: i32,
}

/// Builds the plugin.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    let non_negative = |v: Option<f64>, d: f64| v.filter(|x| *x >= 0.0).unwrap_or(d);
    let mut weights = vec![
        (
            ResourceName::Cpu,
            non_negative(args.float("hypernode.binpack.cpu")?, 1.0),
        ),
        (
            ResourceName::Memory,
            non_negative(args.float("hypernode.binpack.memory")?, 1.0),
        ),
    ];
    if let Some(list) = args.string("hypernode.binpack.resources")? {
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let w = non_negative(
                args.float(&format!("hypernode.binpack.resources.{name}"))?,
                1.0,
            );
            weights.push((ResourceName::of(name), w));
        }
    }
    let evict_max = args
        .int("hypernode.gradient.evict.max-hypernodes")?
        .filter(|&m| m > 0)
        .unwrap_or(8);
    Ok(Box::new(NetworkTopologyAware {
        weight: non_negative(args.float("weight")?, 1.0),
        weights,
        normal_pod_enable: args
            .bool("hypernode.binpack.normal-pod.enable")?
            .unwrap_or(true),
        fading: non_negative(args.float("hypernode.binpack.normal-pod.fading")?, 0.8),
        evict_max_hyper_nodes: usize::try_from(evict_max).unwrap_or(usize::MAX),
        allocatable: Vec::new(),
        used: Vec::new(),
        idle: Vec::new(),
        future_idle: Vec::new(),
        min_tier: 1,
        max_tier: 1,
    }))
}

impl NetworkTopologyAware {
    fn weight_of(&self, r: ResourceName) -> Option<f64> {
        self.weights.iter().find(|w| w.0 == r).map(|w| w.1)
    }

    /// Weighted mean of `(used + req) / allocatable`; 0 when anything overflows.
    fn binpack(&self, used: &Resource, alloc: &Resource, req: &Resource) -> f64 {
        let (mut total, mut wsum) = (0.0, 0.0);
        for r in req.resource_names() {
            let Some(w) = self.weight_of(r) else { continue };
            let (a, u, q) = (alloc.get(r), used.get(r), req.get(r));
            if u + q > a {
                return 0.0;
            }
            if a > 0.0 {
                total += w * (u + q) / a;
            }
            wsum += w;
        }
        if wsum > 0.0 { total / wsum } else { 0.0 }
    }

    fn tier_score(&self, tier: i32) -> f64 {
        if self.min_tier == self.max_tier {
            1.0
        } else if (self.min_tier..=self.max_tier).contains(&tier) {
            f64::from(self.max_tier - tier) / f64::from(self.max_tier - self.min_tier)
        } else {
            0.0
        }
    }

    /// The search gradient (Volcano: pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go): BFS from the search root, eligible hyper-nodes grouped
    /// by tier ascending; for eviction, widest tiers first and capped. Empty when the allocated
    /// hyper-node and `avail` are in disjoint subtrees (no candidate at all).
    fn gradient(
        &self,
        ssn: &SessionState,
        avail: HyperNodeId,
        tier_limit: i32,
        allocated: Option<HyperNodeId>,
        min_res: &Resource,
        purpose: SearchPurpose,
    ) -> Vec<Vec<HyperNodeId>> {
        let by_tier = self
            .tiers_ascending(ssn, avail, tier_limit, allocated, min_res, purpose)
            .unwrap_or_default();
        match purpose {
            SearchPurpose::Allocate => by_tier,
            SearchPurpose::Evict => widest_first(by_tier, self.evict_max_hyper_nodes),
        }
    }

    /// Eligible hyper-nodes by tier ascending, each tier in BFS order; `None` when there is no
    /// search root. A hyper-node is eligible within the tier limit and, while the job has no
    /// allocated hyper-node yet, when its minimum fits: for allocation in the idle or
    /// future-idle resources, for eviction in the allocatable ones.
    fn tiers_ascending(
        &self,
        ssn: &SessionState,
        avail: HyperNodeId,
        tier_limit: i32,
        allocated: Option<HyperNodeId>,
        min_res: &Resource,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        let h = &ssn.snap.hyper_nodes;
        let mut root = avail;
        if let Some(a) = allocated {
            let mut hi = None;
            let mut cur = Some(a);
            while let Some(c) = cur {
                if h.tier[c.idx()] > tier_limit {
                    break;
                }
                hi = Some(c);
                cur = h.parent[c.idx()];
            }
            let hi = hi?;
            let l = h.lca(Some(avail), Some(hi))?;
            if l == hi {
                root = avail;
            } else if l == avail {
                root = hi;
            } else {
                return None;
            }
        }
        let mut queue = std::collections::VecDeque::from([root]);
        let mut by_tier: std::collections::BTreeMap<i32, Vec<HyperNodeId>> = Default::default();
        while let Some(x) = queue.pop_front() {
            let fits = |r: &Vec<Resource>| min_res.less_equal(&r[x.idx()], DimDefault::Zero);
            let room = match purpose {
                SearchPurpose::Allocate => fits(&self.idle) || fits(&self.future_idle),
                SearchPurpose::Evict => fits(&self.allocatable),
            };
            let eligible = h.tier[x.idx()] <= tier_limit && (allocated.is_some() || room);
            if eligible {
                by_tier.entry(h.tier[x.idx()]).or_default().push(x);
            }
            queue.extend(h.children[x.idx()].iter().copied());
        }
        Some(by_tier.into_values().collect())
    }

    fn task_count_in(&self, ssn: &SessionState, hn: HyperNodeId, tasks: &[TaskId]) -> usize {
        let set = &ssn.snap.hyper_nodes.real_nodes[hn.idx()];
        tasks
            .iter()
            .filter(|&t| ssn.tasks.node[t].is_some_and(|n| set.contains(n.idx())))
            .count()
    }

    fn hard(t: &Option<NetworkTopology>) -> Option<i32> {
        SessionState::hard_tier(t)
    }

    fn for_hyper_nodes_of(&mut self, ssn: &SessionState, node: NodeId, f: impl Fn(&mut Resource)) {
        for (i, set) in ssn.snap.hyper_nodes.real_nodes.iter().enumerate() {
            if set.contains(node.idx()) {
                f(&mut self.used[i]);
            }
        }
    }
}

/// An eviction gradient (Volcano's `reverseAndCapEvictionGradients`): tiers widest first, at
/// most `max` hyper-nodes in all; a tier that does not fit whole keeps its last hyper-nodes.
fn widest_first(by_tier: Vec<Vec<HyperNodeId>>, max: usize) -> Vec<Vec<HyperNodeId>> {
    let mut remaining = max;
    let mut out = Vec::new();
    for tier in by_tier.into_iter().rev() {
        if remaining == 0 {
            break;
        }
        let keep = tier.len().min(remaining);
        remaining -= keep;
        out.push(tier[tier.len() - keep..].to_vec());
    }
    out
}

impl Plugin for NetworkTopologyAware {
    fn name(&self) -> &str {
        "network-topology-aware"
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        let h = &ssn.snap.hyper_nodes;
        let sum = |col: &dyn Fn(NodeId) -> Resource| -> Vec<Resource> {
            h.real_node_list
                .iter()
                .map(|nodes| {
                    let mut r = Resource::empty();
                    for &n in nodes {
                        r.add(&col(n));
                    }
                    r
                })
                .collect()
        };
        self.allocatable = sum(&|n| ssn.snap.nodes.allocatable[n.idx()].clone());
        self.used = sum(&|n| ssn.nodes.used[n].clone());
        self.idle = sum(&|n| ssn.nodes.idle[n].clone());
        self.future_idle = sum(&|n| ssn.future_idle(n).into_owned());
        self.min_tier = h.tiers.first().copied().unwrap_or(1);
        self.max_tier = h.tiers.last().copied().unwrap_or(1);
    }

    fn hyper_node_gradient_for_job(
        &self,
        ssn: &SessionState,
        job: JobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        let Some(tier) = Self::hard(&ssn.jobs.topology[job]) else {
            return Some(vec![vec![hn]]);
        };
        let min = ssn.snap.jobs.min_resources[job.idx()]
            .clone()
            .unwrap_or_default();
        let allocated = ssn.jobs.allocated_hyper_node[job];
        Some(self.gradient(ssn, hn, tier, allocated, &min, purpose))
    }

    fn hyper_node_gradient_for_sub_job(
        &self,
        ssn: &SessionState,
        sub_job: SubJobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        let Some(tier) = Self::hard(&ssn.sub_jobs.topology[sub_job]) else {
            return Some(vec![vec![hn]]);
        };
        let mut min = Resource::empty();
        for &t in &ssn.snap.sub_jobs.tasks[sub_job.idx()] {
            if ssn.tasks.status[t] == crate::model::TaskStatus::Pending {
                min.add(ssn.resreq(t));
            }
        }
        let allocated = ssn.sub_jobs.allocated_hyper_node[sub_job];
        Some(self.gradient(ssn, hn, tier, allocated, &min, purpose))
    }

    /// Node scores depend on hyper-node totals (which every placement in the hyper-node moves)
    /// or on the job's allocated hyper-node: node-local only when it scores nothing.
    fn node_local(&self, ssn: &SessionState, task: TaskId) -> bool {
        let topology =
            ssn.snap.tasks.sub_job[task.idx()].is_some_and(|s| ssn.sub_jobs.topology[s].is_some());
        !topology && !self.normal_pod_enable
    }

    fn hyper_node_order(
        &self,
        ssn: &SessionState,
        sub_job: SubJobId,
        hyper_nodes: &[HyperNodeId],
    ) -> Option<Vec<f64>> {
        let tasks = &ssn.snap.sub_jobs.tasks[sub_job.idx()];
        let mut req = Resource::empty();
        for &t in tasks {
            req.add(ssn.resreq(t));
        }
        let mut raw: Vec<f64> = hyper_nodes
            .iter()
            .map(|h| self.binpack(&self.used[h.idx()], &self.allocatable[h.idx()], &req))
            .collect();
        let max = raw.iter().copied().fold(f64::MIN, f64::max);
        if raw.iter().filter(|&&r| r == max).count() > 1 {
            for (r, h) in raw.iter_mut().zip(hyper_nodes) {
                if *r == max {
                    *r += if tasks.is_empty() {
                        1.0
                    } else {
                        self.task_count_in(ssn, *h, tasks) as f64 / tasks.len() as f64
                    };
                }
            }
        }
        Some(raw.into_iter().map(|r| 100.0 * self.weight * r).collect())
    }

    fn batch_node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Option<Result<Vec<f64>, String>> {
        let h = &ssn.snap.hyper_nodes;
        let sj = ssn.snap.tasks.sub_job[task.idx()];
        let mut scores = vec![0.0; nodes.len()];
        if let Some(sj) = sj.filter(|s| ssn.sub_jobs.topology[s].is_some()) {
            let Some(a) = ssn.tasks.allocated_hyper_node[task] else {
                return Some(Ok(scores));
            };
            for (s, &n) in scores.iter_mut().zip(nodes) {
                *s = match h.lowest_of_node[n.idx()] {
                    None => 0.0,
                    Some(x) if x == a => 1.0,
                    Some(x) => h
                        .lca(Some(x), Some(a))
                        .map(|l| self.tier_score(h.tier[l.idx()]))
                        .unwrap_or(0.0),
                };
            }
            let max = scores.iter().copied().fold(f64::MIN, f64::max);
            if scores.iter().filter(|&&x| x == max).count() > 1 {
                let tasks = &ssn.snap.sub_jobs.tasks[sj.idx()];
                for (s, &n) in scores.iter_mut().zip(nodes) {
                    if *s == max
                        && let Some(x) = h.lowest_of_node[n.idx()]
                    {
                        *s += if tasks.is_empty() {
                            0.0
                        } else {
                            self.task_count_in(ssn, x, tasks) as f64 / tasks.len() as f64
                        };
                    }
                }
            }
        } else {
            if !self.normal_pod_enable {
                return Some(Ok(scores));
            }
            let tiers: Vec<(i32, f64)> = (self.min_tier..=self.max_tier)
                .map(|t| (t, self.fading.powi(t - 1)))
                .collect();
            let wsum: f64 = tiers.iter().map(|t| t.1).sum();
            let req = ssn.resreq(task);
            for (s, &n) in scores.iter_mut().zip(nodes) {
                let mut total = 0.0;
                for &(t, w) in &tiers {
                    let hn =
                        (0..h.len()).find(|&i| h.tier[i] == t && h.real_nodes[i].contains(n.idx()));
                    let ts = match hn {
                        Some(i) => self.binpack(&self.used[i], &self.allocatable[i], req),
                        None => 1.0,
                    };
                    total += w * ts;
                }
                *s = if wsum > 0.0 { total / wsum } else { 0.0 };
            }
        }
        Some(Ok(scores
            .into_iter()
            .map(|s| 100.0 * self.weight * s)
            .collect()))
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        if let Some(n) = ssn.tasks.node[task] {
            let r = ssn.resreq(task).clone();
            self.for_hyper_nodes_of(ssn, n, |u| {
                u.add(&r);
            });
        }
        Ok(())
    }

    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        if let Some(n) = ssn.tasks.node[task] {
            let r = ssn.resreq(task).clone();
            self.for_hyper_nodes_of(ssn, n, |u| {
                u.sub(&r);
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::widest_first;
    use crate::model::HyperNodeId;

    fn ids(v: &[u32]) -> Vec<HyperNodeId> {
        v.iter().map(|&i| HyperNodeId(i)).collect()
    }

    #[test]
    fn eviction_gradient_puts_the_widest_tier_first() {
        let tiers = vec![ids(&[0, 1]), ids(&[2])];
        assert_eq!(widest_first(tiers, 8), vec![ids(&[2]), ids(&[0, 1])]);
    }

    #[test]
    fn eviction_gradient_cap_keeps_the_last_hyper_nodes_of_the_tier_it_cuts() {
        let tiers = vec![ids(&[0, 1, 2]), ids(&[3])];
        assert_eq!(widest_first(tiers, 3), vec![ids(&[3]), ids(&[1, 2])]);
        let tiers = vec![ids(&[0, 1, 2]), ids(&[3])];
        assert_eq!(widest_first(tiers, 1), vec![ids(&[3])]);
    }
}
