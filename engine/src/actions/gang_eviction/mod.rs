//! The machinery `gangpreempt` and `gangreclaim` share (Volcano: pkg/scheduler/actions/gangpreempt, gangreclaim and actions/utils):
//! for each starving job, look for a domain (hyper-node) where evicting whole victim bundles
//! frees enough for the job's pending demand, prove it with a dry run, and commit the
//! evictions and pipelined placements only when the job becomes pipelined. The placed
//! sub-jobs are nominated to their hyper-nodes for allocate's fast path (Volcano: pkg/scheduler/actions/allocate/allocate.go, the nominated hyper-node path).

mod bundle;
mod plan;

use crate::actions::action_arguments::{ErrorCacheArgs, GangEvictionArgs, lenient};
use std::collections::BTreeMap;

use bundle::{Bundle, BundleKind};
use plan::DryRun;

use super::allocate::Worksheet;
use super::starving_jobs::StarvingJobs;
use crate::framework::{EvictionContext, EvictionKind, SearchPurpose, Session, Statement};
use crate::model::{DimDefault, HyperNodeId, JobId, QueueId, Resource, SubJobId, TaskId};
use crate::snapshot::PREEMPTABLE_KEY;

/// What sets one gang eviction action apart; the rest of the action is shared.
pub(super) trait Flavor {
    /// The action: its name, its arguments and its evictions' reason.
    const KIND: EvictionKind;
    /// May the queue's starving jobs evict at all this cycle?
    fn queue_may_evict(ssn: &Session, q: QueueId) -> bool;
    /// May the queue evict for the job's pending `demand`?
    fn demand_may_evict(ssn: &Session, q: QueueId, demand: &[TaskId]) -> bool;
    /// Is `t`, found on a node of the domain, a candidate victim for `preemptor`?
    fn is_candidate(ssn: &Session, preemptor: JobId, t: TaskId) -> bool;
    /// Do `l`'s bundles go before `r`'s? False both ways when the action does not tell them
    /// apart (the bundles' ROI decides then).
    fn victim_first(ssn: &Session, preemptor: JobId, l: JobId, r: JobId) -> bool;
}

/// The action's arguments (`configurations` entry named after it).
#[derive(Debug, Clone, Copy)]
struct Args {
    /// Most domains tried per starving job (`maxDomains`, non-positive → 8).
    max_domains: usize,
    /// May a bundle that breaks a victim gang be taken (`allowWholeBundle`)?
    allow_whole_bundle: bool,
    /// allocate's `predicateErrorCacheEnable`, used by the dry runs.
    error_cache: bool,
}

impl Args {
    fn read(ssn: &Session, kind: EvictionKind) -> Args {
        let config = &ssn.state.config;
        let own = lenient(
            &config.action_arguments(kind.action_name()),
            GangEvictionArgs::parse,
        )
        .0;
        Args {
            max_domains: own.max_domains,
            allow_whole_bundle: own.allow_whole_bundle,
            error_cache: lenient(&config.action_arguments("allocate"), ErrorCacheArgs::parse)
                .0
                .error_cache,
        }
    }
}

/// Runs the action: queues in queue order, each queue's starving jobs in job order.
pub(super) fn execute<F: Flavor>(ssn: &mut Session) {
    let args = Args::read(ssn, F::KIND);
    let mut starving = StarvingJobs::of(ssn);
    while let Some(q) = starving.queues.pop(|l, r| ssn.queue_order_less(l, r)) {
        if !F::queue_may_evict(ssn, q) {
            continue;
        }
        while let Some(job) = starving.pop_job(ssn, q) {
            let mut stmt = Statement::new();
            let nominations = evict_for_job::<F>(ssn, &mut stmt, q, job, args);
            if ssn.job_pipelined(job) {
                stmt.commit_for(ssn, F::KIND.into());
                for (sj, hn) in nominations {
                    ssn.state.set_sub_job_nominated_hyper_node(sj, Some(hn));
                }
            } else {
                stmt.discard(ssn);
            }
        }
    }
}

/// Tries the candidate domains in order; in each, takes bundles in order until the domain's
/// idle and releasing resources plus the victims cover the demand and a dry run succeeds, then
/// replays that plan into `stmt`. Returns the placed sub-jobs' hyper-nodes.
fn evict_for_job<F: Flavor>(
    ssn: &mut Session,
    stmt: &mut Statement,
    queue: QueueId,
    job: JobId,
    args: Args,
) -> Vec<(SubJobId, HyperNodeId)> {
    let demand = pending_demand(ssn, job);
    if demand.is_empty() || !F::demand_may_evict(ssn, queue, &demand) {
        return Vec::new();
    }
    let need = ssn.state.total_resreq(&demand);
    let snap = ssn.state.snap.clone();
    let reason = F::KIND.action_name();
    for domain in candidate_domains(ssn, job, args.max_domains) {
        let nodes = &snap.hyper_nodes.real_node_list[domain.idx()];
        if nodes.is_empty() {
            continue;
        }
        let bundles = domain_bundles::<F>(ssn, job, domain, &need, args.allow_whole_bundle);
        let mut idle = Resource::empty();
        for &n in nodes {
            idle.add(&ssn.state.nodes.idle[n]);
            idle.add(&ssn.state.nodes.releasing[n]);
        }
        let mut victims: Vec<TaskId> = Vec::new();
        for b in bundles {
            victims.extend(b.tasks);
            let available = idle.plus(&ssn.state.total_resreq(&victims));
            if !need.less_equal(&available, DimDefault::Zero) {
                continue;
            }
            let dr = DryRun {
                queue,
                job,
                domain,
                error_cache: args.error_cache,
            };
            if let Some(plan) = plan::dry_run(ssn, dr, &victims, reason)
                && plan.apply(ssn, stmt, reason).is_ok()
            {
                return plan.nominations;
            }
        }
    }
    Vec::new()
}

/// `selectDomainBundles`: the candidates on the domain's nodes grouped into bundles per victim
/// job and ordered; `UnifiedEvictable` filters their tasks (asked in that order), whole bundles
/// go when `allow_whole` is off.
fn domain_bundles<F: Flavor>(
    ssn: &Session,
    job: JobId,
    domain: HyperNodeId,
    need: &Resource,
    allow_whole: bool,
) -> Vec<Bundle> {
    let snap = &ssn.state.snap;
    let mut by_job: BTreeMap<JobId, Vec<TaskId>> = BTreeMap::new();
    for &n in &snap.hyper_nodes.real_node_list[domain.idx()] {
        for &t in &ssn.state.nodes.tasks[n] {
            if let Some(vj) = ssn.state.job_of(t)
                && F::is_candidate(ssn, job, t)
            {
                by_job.entry(vj).or_default().push(t);
            }
        }
    }
    let mut bundles: Vec<Bundle> = by_job
        .into_iter()
        .flat_map(|(vj, tasks)| bundle::for_victim_job(&ssn.state, vj, tasks))
        .collect();
    if bundles.is_empty() {
        return bundles;
    }
    let first = |l: JobId, r: JobId| F::victim_first(ssn, job, l, r);
    bundle::sort(ssn, &mut bundles, need, first);
    let ordered: Vec<TaskId> = bundles.iter().flat_map(|b| b.tasks.clone()).collect();
    let ctx = EvictionContext { kind: F::KIND, job };
    let allowed = ssn.unified_evictable(&ctx, &ordered);
    if allowed.is_empty() {
        return Vec::new();
    }
    let mut valid = bundle::keep_allowed(&ssn.state, bundles, &allowed);
    bundle::sort(ssn, &mut valid, need, first);
    valid.retain(|b| allow_whole || b.kind != BundleKind::Whole);
    valid
}

/// `CollectPendingTasksForGangEviction`: a job already ready asks only for its first pending
/// sub-job (worksheet order); a starting job asks for every pending task.
fn pending_demand(ssn: &Session, job: JobId) -> Vec<TaskId> {
    let mut ws = eviction_worksheet(ssn, job);
    let ready = ssn.job_ready(job);
    let mut demand = Vec::new();
    while let Some(sj) = ws.pop_sub_job(ssn) {
        let Some(mut tasks) = ws.tasks.remove(&sj) else {
            continue;
        };
        while let Some(t) = tasks.pop(|l, r| ssn.task_order_less(l, r)) {
            demand.push(t);
        }
        if ready && !demand.is_empty() {
            break;
        }
    }
    demand
}

/// `GetCandidateDomains`: the job's eviction gradient flattened, without repeats, at most
/// `max`; a job without a hard topology falls back to the whole cluster.
fn candidate_domains(ssn: &Session, job: JobId, max: usize) -> Vec<HyperNodeId> {
    let top = ssn.state.snap.hyper_nodes.top();
    let mut domains: Vec<HyperNodeId> = Vec::new();
    for hn in ssn
        .hyper_node_gradient_for_job(job, top, SearchPurpose::Evict)
        .into_iter()
        .flatten()
    {
        if domains.len() >= max {
            break;
        }
        if !domains.contains(&hn) {
            domains.push(hn);
        }
    }
    if domains.is_empty() && !ssn.state.job_contains_hard_topology(job) {
        domains.push(top);
    }
    domains
}

/// `organizeEvictionWorksheet`: allocate's worksheet order over the Pending tasks that are
/// neither gated (by any scheduling gate) nor best-effort.
fn eviction_worksheet(ssn: &Session, job: JobId) -> Worksheet {
    let tasks = &ssn.state.snap.tasks;
    Worksheet::organize_where(ssn, job, |t| {
        !tasks.sch_gated[t.idx()] && !tasks.best_effort[t.idx()]
    })
}

/// `IsJobPreemptableForGangEviction`: a PodGroup that does not say is preemptable; one that
/// does (annotation or label `volcano.sh/preemptable`) is taken at its word.
pub(super) fn job_preemptable(ssn: &Session, job: JobId) -> bool {
    let jobs = &ssn.state.snap.jobs;
    let meta = &jobs.podgroup[job.idx()].metadata;
    let says =
        meta.annotations.contains_key(PREEMPTABLE_KEY) || meta.labels.contains_key(PREEMPTABLE_KEY);
    !says || jobs.preemptable[job.idx()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Harness;

    const CONF: &str = "actions: gangpreempt\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: network-topology-aware\n";

    fn pod_group(name: &str, extra: &str) -> String {
        format!(
            "---\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns{extra}}}\nspec: {{queue: q, minMember: 1}}\nstatus: {{phase: Running}}\n"
        )
    }

    #[test]
    fn a_pod_group_that_does_not_say_is_preemptable_by_gang_eviction() {
        let objects = [
            pod_group("silent", ""),
            pod_group(
                "forbids",
                ", annotations: {volcano.sh/preemptable: 'false'}",
            ),
            pod_group("allows", ", labels: {volcano.sh/preemptable: 'true'}"),
        ]
        .concat();
        let ssn = Harness::new(CONF)
            .queue("q", 1)
            .manifests(&objects)
            .open()
            .unwrap();
        let preemptable = |name: &str| {
            job_preemptable(&ssn, ssn.state.snap.job_id(&format!("ns/{name}")).unwrap())
        };
        assert!(preemptable("silent"));
        assert!(!preemptable("forbids"));
        assert!(preemptable("allows"));
    }

    /// s0 {n1} and s1 {n2} (tier 1) under s2 (tier 2); job ns/h has a hard topology up to
    /// `tier` and two pending pods, one of them gated.
    fn topology(tier: &str, extra_conf: &str) -> Session {
        let mut objects = String::new();
        for n in ["n1", "n2"] {
            objects += &format!(
                "---\nkind: Node\nmetadata: {{name: {n}}}\nstatus: {{allocatable: {{cpu: '4', memory: 8Gi, pods: '10'}}}}\n"
            );
        }
        for (h, member) in [("s0", "n1"), ("s1", "n2")] {
            objects += &format!(
                "---\nkind: HyperNode\nmetadata: {{name: {h}}}\nspec: {{tier: 1, members: [{{type: Node, selector: {{exactMatch: {{name: {member}}}}}}}]}}\n"
            );
        }
        objects += "---\nkind: HyperNode\nmetadata: {name: s2}\nspec: {tier: 2, members: [{type: HyperNode, selector: {exactMatch: {name: s0}}}, {type: HyperNode, selector: {exactMatch: {name: s1}}}]}\n";
        objects += &format!(
            "---\nkind: PodGroup\nmetadata: {{name: h, namespace: ns}}\nspec: {{queue: q, minMember: 1{tier}}}\nstatus: {{phase: Inqueue}}\n"
        );
        for (name, gates) in [
            ("h-p-1", "[]"),
            ("h-p-0", "[{name: hold}]"),
            ("h-p-2", "[]"),
        ] {
            objects += &format!(
                "---\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: ns-{name}, annotations: {{scheduling.k8s.io/group-name: h}}}}\nspec: {{schedulingGates: {gates}, containers: [{{name: c0, resources: {{requests: {{cpu: '1', memory: 1Gi}}}}}}]}}\nstatus: {{phase: Pending}}\n"
            );
        }
        Harness::new(&format!("{CONF}{extra_conf}"))
            .queue("q", 1)
            .manifests(&objects)
            .open()
            .unwrap()
    }

    fn names(ssn: &Session, hns: &[HyperNodeId]) -> Vec<String> {
        let h = &ssn.state.snap.hyper_nodes;
        hns.iter().map(|x| h.name[x.idx()].clone()).collect()
    }

    #[test]
    fn domains_follow_the_eviction_gradient_widest_first_up_to_max_domains() {
        let ssn = topology(", networkTopology: {mode: hard, highestTierAllowed: 2}", "");
        let h = ssn.state.snap.job_id("ns/h").unwrap();
        assert_eq!(
            names(&ssn, &candidate_domains(&ssn, h, 8)),
            ["s2", "s0", "s1"]
        );
        assert_eq!(names(&ssn, &candidate_domains(&ssn, h, 2)), ["s2", "s0"]);
    }

    #[test]
    fn a_job_without_a_hard_topology_looks_at_the_whole_cluster() {
        let ssn = topology("", "");
        let h = ssn.state.snap.job_id("ns/h").unwrap();
        let top = ssn.state.snap.hyper_nodes.top();
        assert_eq!(candidate_domains(&ssn, h, 8), [top]);
    }

    #[test]
    fn a_starting_job_asks_for_every_ungated_pending_task_in_task_order() {
        let ssn = topology("", "");
        let h = ssn.state.snap.job_id("ns/h").unwrap();
        let demand: Vec<String> = pending_demand(&ssn, h)
            .iter()
            .map(|&t| ssn.state.snap.tasks.name[t.idx()].to_string())
            .collect();
        assert_eq!(demand, ["h-p-1", "h-p-2"]);
    }

    #[test]
    fn arguments_fall_back_to_their_defaults() {
        let conf = "configurations:\n- name: gangreclaim\n  arguments: {maxDomains: 0, allowWholeBundle: false}\n- name: allocate\n  arguments: {predicateErrorCacheEnable: false}\n";
        let ssn = topology("", conf);
        let a = Args::read(&ssn, EvictionKind::GangReclaim);
        assert_eq!(
            (a.max_domains, a.allow_whole_bundle, a.error_cache),
            (8, false, false)
        );
        let a = Args::read(&ssn, EvictionKind::GangPreempt);
        assert_eq!((a.max_domains, a.allow_whole_bundle), (8, true));
    }
}
