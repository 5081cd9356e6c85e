//! The hyper-node aware path of allocate (Volcano: pkg/scheduler/actions/allocate/allocate.go, allocateForJob with hyper-nodes): for jobs with a hard network topology
//! or a sub-group policy, dry-run the job in each candidate hyper-node of a gradient, keep the
//! best plan, replay it.

use std::collections::BTreeMap;

use super::NodeSearch;
use super::nomination::allocate_from_nomination;
use super::tasks::allocate_resources_for_tasks;
use super::worksheet::Worksheet;
use crate::actions::PriorityQueue;
use crate::framework::{Op, SearchPurpose, Session, Statement};
use crate::model::{HyperNodeId, JobId, SubJobId, TaskId};

/// Decisions to apply when a job's statement is committed (Volcano's allocate recorder).
#[derive(Debug, Default)]
pub struct Recorder {
    job: BTreeMap<JobId, HyperNodeId>,
    sub_jobs: BTreeMap<(JobId, HyperNodeId), BTreeMap<SubJobId, Option<HyperNodeId>>>,
}

impl Recorder {
    /// `UpdateDecisionToJob`: the job's and its sub-jobs' allocated hyper-nodes take the
    /// chosen hyper-nodes into account; the sub-jobs' nominations are redeemed.
    pub fn apply(&self, ssn: &mut Session, job: JobId) {
        let Some(&hj) = self.job.get(&job) else {
            return;
        };
        let snap = ssn.state.snap.clone();
        let h = &snap.hyper_nodes;
        let allocated = h.lca(ssn.state.jobs.allocated_hyper_node[job], Some(hj));
        ssn.state.set_job_allocated_hyper_node(job, allocated);
        if let Some(subs) = self.sub_jobs.get(&(job, hj)) {
            for (&sj, &hn) in subs {
                let cur = ssn.state.sub_jobs.allocated_hyper_node[sj];
                ssn.state
                    .set_sub_job_allocated_hyper_node(sj, h.lca(cur, hn));
                ssn.state.set_sub_job_nominated_hyper_node(sj, None);
            }
        }
    }
}

struct Candidate<W> {
    hn: HyperNodeId,
    ops: Vec<Op>,
    rest: W,
    score: f64,
}

/// `allocateForJob`: the best hyper-node of the first gradient that yields a ready or
/// pipelined plan; `ws` becomes the winning attempt's remaining work.
pub fn allocate_for_job(
    ssn: &mut Session,
    job: JobId,
    ws: &mut Worksheet,
    top: HyperNodeId,
    rec: &mut Recorder,
    search: &mut NodeSearch,
) -> Option<Statement> {
    if ws.is_empty() {
        return None;
    }
    let snap = ssn.state.snap.clone();
    let saved_alloc: Vec<(SubJobId, Option<HyperNodeId>)> = snap.jobs.sub_jobs[job.idx()]
        .iter()
        .map(|&s| (s, ssn.state.sub_jobs.allocated_hyper_node[s]))
        .collect();
    for gradient in ssn.hyper_node_gradient_for_job(job, top, SearchPurpose::Allocate) {
        let mut cands: Vec<Candidate<Worksheet>> = Vec::new();
        for hn in gradient {
            ssn.state.clear_fit_errors(job);
            let mut attempt = ws.clone();
            let mut stmts: Vec<Statement> = Vec::new();
            let mut score = 0.0;
            while let Some(sj) = attempt.pop_sub_job(ssn) {
                let mut tasks = attempt.tasks.remove(&sj).unwrap_or_default();
                let (st, s) = allocate_for_sub_job(ssn, job, sj, &mut tasks, hn, rec, search);
                let had_tasks = !tasks.is_empty();
                attempt.tasks.insert(sj, tasks);
                if let Some(st) = st.filter(|st| !st.is_empty()) {
                    stmts.push(st);
                    score += s;
                    if had_tasks {
                        attempt.push_sub_job(ssn, sj);
                    }
                    if ssn.job_ready(job) {
                        break;
                    }
                }
            }
            for &(s, h) in &saved_alloc {
                ssn.state.set_sub_job_allocated_hyper_node(s, h);
            }
            let ops: Vec<Op> = stmts.iter().flat_map(|s| s.ops().iter().copied()).collect();
            if ops.is_empty() {
                continue;
            }
            if ssn.job_ready(job) || ssn.job_pipelined(job) {
                cands.push(Candidate {
                    hn,
                    ops,
                    rest: attempt,
                    score,
                });
            }
            for mut st in stmts {
                st.discard(ssn);
            }
        }
        let Some(best) = pick_best(cands) else {
            continue;
        };
        let mut fin = Statement::new();
        if fin.replay(ssn, &best.ops).is_err() {
            fin.discard(ssn);
            return None;
        }
        *ws = best.rest;
        rec.job.insert(job, best.hn);
        return Some(fin);
    }
    None
}

/// Highest score; on equal scores the first candidate (gradient order) wins.
fn pick_best<W>(cands: Vec<Candidate<W>>) -> Option<Candidate<W>> {
    let mut best: Option<Candidate<W>> = None;
    for c in cands {
        if best.as_ref().is_none_or(|b| c.score > b.score) {
            best = Some(c);
        }
    }
    best
}

/// `allocateForSubJob`: dry-run the sub-job in each hyper-node of its first productive
/// gradient, score the candidates with HyperNodeOrder, replay the best.
fn allocate_for_sub_job(
    ssn: &mut Session,
    job: JobId,
    sj: SubJobId,
    tasks: &mut PriorityQueue<TaskId>,
    hn_job: HyperNodeId,
    rec: &mut Recorder,
    search: &mut NodeSearch,
) -> (Option<Statement>, f64) {
    if tasks.is_empty() {
        return (None, 0.0);
    }
    if let Some(st) = allocate_from_nomination(ssn, sj, tasks, search.error_cache) {
        let alloc = ssn.state.sub_jobs.allocated_hyper_node[sj];
        rec.sub_jobs
            .entry((job, hn_job))
            .or_default()
            .insert(sj, alloc);
        return (Some(st), 0.0);
    }
    let snap = ssn.state.snap.clone();
    for gradient in ssn.hyper_node_gradient_for_sub_job(sj, hn_job, SearchPurpose::Allocate) {
        let mut cands: Vec<Candidate<PriorityQueue<TaskId>>> = Vec::new();
        for hn in gradient {
            for t in &snap.sub_jobs.tasks[sj.idx()] {
                ssn.state.forget_fit_errors(job, t);
            }
            let mut copy = tasks.clone();
            if let Some(mut st) = allocate_resources_for_tasks(ssn, sj, &mut copy, hn, search)
                && !st.is_empty()
            {
                cands.push(Candidate {
                    hn,
                    ops: st.ops().to_vec(),
                    rest: copy,
                    score: 0.0,
                });
                st.discard(ssn);
            }
        }
        if cands.is_empty() {
            continue;
        }
        let hns: Vec<HyperNodeId> = cands.iter().map(|c| c.hn).collect();
        for (c, s) in cands.iter_mut().zip(ssn.hyper_node_order(sj, &hns)) {
            c.score = s;
        }
        let Some(best) = pick_best(cands) else {
            continue;
        };
        let mut fin = Statement::new();
        if fin.replay(ssn, &best.ops).is_err() {
            fin.discard(ssn);
            return (None, 0.0);
        }
        let cur = ssn.state.sub_jobs.allocated_hyper_node[sj];
        let alloc = snap.hyper_nodes.lca(cur, Some(best.hn));
        ssn.state.set_sub_job_allocated_hyper_node(sj, alloc);
        *tasks = best.rest;
        rec.sub_jobs
            .entry((job, hn_job))
            .or_default()
            .insert(sj, alloc);
        return (Some(fin), best.score);
    }
    (None, 0.0)
}
