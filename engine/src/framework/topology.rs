//! Session-open work on network topology (Volcano: pkg/scheduler/framework/session.go, openSession): tier names resolved, soft
//! constraints turned hard, and each job's allocated hyper-node recovered from the nodes of its
//! allocated tasks (Volcano keeps it in memory only; the PodGroup annotation is not read).

use super::SessionState;
use crate::model::{HyperNodeId, JobId, SubJobId};
use crate::snapshot::{NetworkTopology, TopologyMode};

fn resolve_tier_name(st: &SessionState, nt: &mut Option<NetworkTopology>) {
    let Some(nt) = nt.as_mut() else { return };
    if nt.highest_tier_allowed.is_none() && !nt.highest_tier_name.is_empty() {
        let h = &st.snap.hyper_nodes;
        if let Some(i) = h.tier_name.iter().rposition(|n| n == &nt.highest_tier_name) {
            nt.highest_tier_allowed = Some(h.tier[i]);
            nt.highest_tier_name.clear();
        }
    }
}

/// Adjusts topology specs and recovers allocated hyper-nodes for every job.
pub fn open_hyper_nodes(st: &mut SessionState) {
    let snap = st.snap.clone();
    let top_tier = snap.hyper_nodes.tier[snap.hyper_nodes.top().idx()];
    for j in snap.jobs.ids() {
        if !st.job_contains_network_topology(j) {
            continue;
        }
        let mut jt = st.jobs.topology.get_mut(j).take();
        resolve_tier_name(st, &mut jt);
        if let Some(nt) = jt.as_mut()
            && nt.mode == TopologyMode::Soft
        {
            *nt = NetworkTopology {
                mode: TopologyMode::Hard,
                highest_tier_allowed: Some(top_tier),
                highest_tier_name: String::new(),
            };
        }
        let sub_max = jt
            .as_ref()
            .and_then(|nt| nt.highest_tier_allowed)
            .unwrap_or(top_tier);
        st.jobs.topology.set(j, jt);
        for &s in &snap.jobs.sub_jobs[j.idx()] {
            let mut t = st.sub_jobs.topology.get_mut(s).take();
            resolve_tier_name(st, &mut t);
            if let Some(nt) = t.as_mut()
                && nt.mode == TopologyMode::Soft
            {
                *nt = NetworkTopology {
                    mode: TopologyMode::Hard,
                    highest_tier_allowed: Some(sub_max),
                    highest_tier_name: String::new(),
                };
            }
            st.sub_jobs.topology.set(s, t);
        }
        recover_allocated(st, j);
    }
}

/// The lowest-tier hyper-node holding every allocated node of the sub-job.
fn recover_sub_job(st: &SessionState, s: SubJobId) -> Option<HyperNodeId> {
    let h = &st.snap.hyper_nodes;
    let mut cand: Option<Vec<HyperNodeId>> = None;
    for &t in &st.snap.sub_jobs.tasks[s.idx()] {
        if !st.tasks.status[t].is_allocated() {
            continue;
        }
        let Some(n) = st.tasks.node[t] else {
            continue;
        };
        let search: Vec<HyperNodeId> = match &cand {
            None => (0..h.len() as u32).map(HyperNodeId).collect(),
            Some(c) => c.clone(),
        };
        let next: Vec<HyperNodeId> = search
            .into_iter()
            .filter(|hn| h.real_nodes[hn.idx()].contains(n.idx()))
            .collect();
        let empty = next.is_empty();
        cand = Some(next);
        if empty {
            break;
        }
    }
    cand?.into_iter().min_by_key(|hn| (h.tier[hn.idx()], hn.0))
}

fn recover_allocated(st: &mut SessionState, j: JobId) {
    let snap = st.snap.clone();
    let mut updated = false;
    for &s in &snap.jobs.sub_jobs[j.idx()] {
        if st.sub_jobs.topology[s].is_none() || st.sub_jobs.allocated_hyper_node[s].is_some() {
            continue;
        }
        let best = recover_sub_job(st, s);
        if best != st.sub_jobs.allocated_hyper_node[s] {
            st.sub_jobs.allocated_hyper_node.set(s, best);
            updated = true;
        }
    }
    if st.jobs.allocated_hyper_node[j].is_none() || updated {
        let mut lca = None;
        for &s in &snap.jobs.sub_jobs[j.idx()] {
            if let Some(h) = st.sub_jobs.allocated_hyper_node[s] {
                lca = snap.hyper_nodes.lca(lca, Some(h));
            }
        }
        st.jobs.allocated_hyper_node.set(j, lca);
    }
}
