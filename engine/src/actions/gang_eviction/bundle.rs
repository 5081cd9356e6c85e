//! Victim bundles (Volcano's `actions/utils/bundle.go`): a victim job's candidate tasks in one
//! domain, split into the tasks it can lose while staying gang-ready (a *safe* bundle) and the
//! rest, whose eviction breaks the gang and so costs the whole job (a *whole* bundle).

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

use crate::framework::{Session, SessionState};
use crate::model::{JobId, Resource, SubJobId, TaskId, TaskStatus};

/// Safe bundles are always taken before whole ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BundleKind {
    Safe,
    Whole,
}

/// Candidate victims of one job, evicted together.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub kind: BundleKind,
    pub job: JobId,
    /// Lowest task priority first, then task UID.
    pub tasks: Vec<TaskId>,
    /// Σ Resreq of `tasks`: what evicting them frees in the domain.
    pub local: Resource,
    /// What evicting them costs beyond the domain: nothing for a safe bundle, every task of the
    /// job for a whole one.
    pub global: Resource,
}

/// How many more tasks (or ready sub-jobs) each gang constraint of a job can lose.
struct Surplus {
    job: i32,
    /// Per role with a `minTaskMember` entry, while roles are enforced.
    roles: Option<BTreeMap<String, i32>>,
    /// Per sub-group, while the job has sub-group minimums.
    groups: Option<BTreeMap<String, i32>>,
    /// Sub-jobs that are already not ready (losing more of them costs nothing more).
    broken: Vec<SubJobId>,
}

impl Surplus {
    /// Mirrors the gang plugin's readiness checks: `IsReady`, `CheckTaskReady` (which gives up
    /// on roles when `minAvailable` is below the sum of role minimums) and `CheckSubJobReady`.
    fn of(st: &SessionState, job: JobId) -> Surplus {
        let snap = &st.snap;
        let j = job.idx();
        let roles =
            (snap.jobs.min_available[j] >= snap.jobs.task_min_available_total[j]).then(|| {
                let mut ready: BTreeMap<&str, i32> = BTreeMap::new();
                for &t in &snap.jobs.tasks[j] {
                    let s = st.tasks.status[t];
                    let pending_best_effort =
                        s == TaskStatus::Pending && snap.tasks.best_effort[t.idx()];
                    if s.is_allocated() || s == TaskStatus::Succeeded || pending_best_effort {
                        *ready.entry(&*snap.tasks.role[t.idx()]).or_default() += 1;
                    }
                }
                snap.jobs.task_min_available[j]
                    .iter()
                    .map(|(role, min)| {
                        let have = ready.get(role.as_str()).copied().unwrap_or(0);
                        (role.clone(), have - min)
                    })
                    .collect()
            });
        let mut broken = Vec::new();
        let groups = (!snap.jobs.min_sub_jobs[j].is_empty()).then(|| {
            let mut groups: BTreeMap<String, i32> = BTreeMap::new();
            for &sj in &snap.jobs.sub_jobs[j] {
                if st.sub_job_is_ready(sj) {
                    *groups
                        .entry(snap.sub_jobs.gid[sj.idx()].to_string())
                        .or_default() += 1;
                } else {
                    broken.push(sj);
                }
            }
            for (gid, min) in &snap.jobs.min_sub_jobs[j] {
                *groups.entry(gid.clone()).or_default() -= min;
            }
            groups
        });
        Surplus {
            job: st.ready_task_num(job) - snap.jobs.min_available[j],
            roles,
            groups,
            broken,
        }
    }

    /// Takes `t` out of the surplus when the job stays gang-ready without it.
    fn spare(&mut self, st: &SessionState, t: TaskId) -> bool {
        let snap = &st.snap;
        let role = &*snap.tasks.role[t.idx()];
        let role_left = self.roles.as_ref().and_then(|r| r.get(role).copied());
        let sub_job = snap.tasks.sub_job[t.idx()];
        let group_safe = match (&self.groups, sub_job) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(g), Some(sj)) => {
                self.broken.contains(&sj)
                    || g.get(&*snap.sub_jobs.gid[sj.idx()]).copied().unwrap_or(0) > 0
            }
        };
        if self.job <= 0 || role_left.is_some_and(|left| left <= 0) || !group_safe {
            return false;
        }
        self.job -= 1;
        if let (Some(roles), Some(_)) = (self.roles.as_mut(), role_left) {
            *roles.entry(role.to_string()).or_default() -= 1;
        }
        if let (Some(groups), Some(sj)) = (self.groups.as_mut(), sub_job)
            && !self.broken.contains(&sj)
        {
            self.broken.push(sj);
            *groups
                .entry(snap.sub_jobs.gid[sj.idx()].to_string())
                .or_default() -= 1;
        }
        true
    }
}

/// `CreateJobBundles`: `job`'s candidate `tasks` in one domain as at most one safe and one
/// whole bundle. A job that is already not gang-ready has nothing left to break: all its
/// candidates are safe.
pub fn for_victim_job(st: &SessionState, job: JobId, mut tasks: Vec<TaskId>) -> Vec<Bundle> {
    if tasks.is_empty() {
        return Vec::new();
    }
    let snap = &st.snap;
    tasks.sort_by(|&a, &b| {
        let key = |t: TaskId| (snap.tasks.priority[t.idx()], &snap.tasks.uid[t.idx()]);
        key(a).cmp(&key(b))
    });
    let mut surplus = Surplus::of(st, job);
    if surplus.job < 0 {
        return vec![bundle(st, BundleKind::Safe, job, tasks)];
    }
    let (safe, whole): (Vec<TaskId>, Vec<TaskId>) =
        tasks.into_iter().partition(|&t| surplus.spare(st, t));
    [(BundleKind::Safe, safe), (BundleKind::Whole, whole)]
        .into_iter()
        .filter(|(_, tasks)| !tasks.is_empty())
        .map(|(kind, tasks)| bundle(st, kind, job, tasks))
        .collect()
}

fn bundle(st: &SessionState, kind: BundleKind, job: JobId, tasks: Vec<TaskId>) -> Bundle {
    let global = match kind {
        BundleKind::Safe => Resource::empty(),
        BundleKind::Whole => st.total_resreq(&st.snap.jobs.tasks[job.idx()]),
    };
    Bundle {
        kind,
        job,
        local: st.total_resreq(&tasks),
        tasks,
        global,
    }
}

/// `ApplyAllowedTasks`: a safe bundle keeps its allowed tasks, a whole bundle survives only
/// when all its tasks are allowed (evicting part of it would break the gang for less).
pub fn keep_allowed(st: &SessionState, bundles: Vec<Bundle>, allowed: &[TaskId]) -> Vec<Bundle> {
    let allowed: HashSet<TaskId> = allowed.iter().copied().collect();
    bundles
        .into_iter()
        .filter_map(|b| {
            let kept: Vec<TaskId> = b
                .tasks
                .iter()
                .copied()
                .filter(|t| allowed.contains(t))
                .collect();
            match b.kind {
                BundleKind::Whole => (kept.len() == b.tasks.len()).then_some(b),
                BundleKind::Safe if kept.is_empty() => None,
                BundleKind::Safe => Some(Bundle {
                    local: st.total_resreq(&kept),
                    tasks: kept,
                    ..b
                }),
            }
        })
        .collect()
}

/// Σ over the dimensions `need` asks for of `res / need`, each term capped at 1 when `cap`.
fn score_against(res: &Resource, need: &Resource, cap: bool) -> f64 {
    need.resource_names()
        .filter(|&n| need.get(n) > 0.0)
        .map(|n| {
            let ratio = res.get(n) / need.get(n);
            if cap { ratio.min(1.0) } else { ratio }
        })
        .sum()
}

/// Return on eviction: how much of `need` the bundle covers locally per unit of what it costs
/// globally; free (a safe bundle) is infinitely good.
fn roi(b: &Bundle, need: &Resource) -> f64 {
    let global = score_against(&b.global, need, false);
    if global == 0.0 {
        f64::INFINITY
    } else {
        score_against(&b.local, need, true) / global
    }
}

/// `SortBundlesFor{Preempt,Reclaim}` (stable): safe before whole; then the action's victim
/// order (`first(l, r)`: `l`'s bundles go before `r`'s); then higher ROI; then job UID, first
/// task UID and size, so the order never depends on how candidates were collected.
pub fn sort(
    ssn: &Session,
    bundles: &mut [Bundle],
    need: &Resource,
    first: impl Fn(JobId, JobId) -> bool,
) {
    let snap = &ssn.state.snap;
    let tie = |b: &Bundle| {
        (
            &snap.jobs.uid[b.job.idx()],
            b.tasks.first().map(|t| &snap.tasks.uid[t.idx()]),
            b.tasks.len(),
        )
    };
    bundles.sort_by(|l, r| {
        l.kind
            .cmp(&r.kind)
            .then_with(|| match (first(l.job, r.job), first(r.job, l.job)) {
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                _ => Ordering::Equal,
            })
            .then_with(|| {
                let (a, b) = (roi(l, need), roi(r, need));
                b.partial_cmp(&a).unwrap_or(Ordering::Equal)
            })
            .then_with(|| tie(l).cmp(&tie(r)))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Harness;
    use crate::model::ResourceName;

    const CONF: &str =
        "actions: gangpreempt\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n";

    /// A running pod of `ns/v` on n1: `name`, cpu, priority and role (`""`: none).
    type Running<'a> = (&'a str, &'a str, i32, &'a str);

    /// Job ns/v (`minMember` `min`, role minimums `roles`) with `running` pods on n1 and
    /// `pending` more 1-cpu pods.
    fn session(min: i32, roles: &str, running: &[Running], pending: usize) -> Session {
        let mut yaml = format!(
            "kind: Node\nmetadata: {{name: n1}}\nstatus: {{allocatable: {{cpu: '64', memory: 64Gi, pods: '110'}}}}\n---\nkind: PodGroup\nmetadata: {{name: v, namespace: ns}}\nspec: {{queue: q, minMember: {min}, minTaskMember: {{{roles}}}}}\nstatus: {{phase: Running}}\n"
        );
        let pod = |name: &str, cpu: &str, prio: i32, role: &str, node: &str, phase: &str| {
            format!(
                "---\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: ns-{name}, labels: {{volcano.sh/task-spec: '{role}'}}, annotations: {{scheduling.k8s.io/group-name: v}}}}\nspec: {{nodeName: '{node}', priority: {prio}, containers: [{{name: c0, resources: {{requests: {{cpu: '{cpu}', memory: 1Gi}}}}}}]}}\nstatus: {{phase: {phase}}}\n"
            )
        };
        for &(name, cpu, prio, role) in running {
            yaml += &pod(name, cpu, prio, role, "n1", "Running");
        }
        for i in 0..pending {
            yaml += &pod(&format!("v-pending-{i}"), "1", 0, "", "", "Pending");
        }
        Harness::new(CONF)
            .queue("q", 1)
            .manifests(&yaml)
            .open()
            .unwrap()
    }

    fn job(ssn: &Session, key: &str) -> JobId {
        ssn.state.snap.job_id(key).unwrap()
    }

    fn running_tasks(ssn: &Session) -> Vec<TaskId> {
        let st = &ssn.state;
        st.snap.jobs.tasks[job(ssn, "ns/v").idx()]
            .iter()
            .copied()
            .filter(|t| st.tasks.status[t] == TaskStatus::Running)
            .collect()
    }

    /// Each bundle as (kind, pod names).
    fn shape(ssn: &Session, bundles: &[Bundle]) -> Vec<(BundleKind, Vec<String>)> {
        bundles
            .iter()
            .map(|b| {
                let names = b
                    .tasks
                    .iter()
                    .map(|t| ssn.state.snap.tasks.name[t.idx()].to_string());
                (b.kind, names.collect())
            })
            .collect()
    }

    fn bundles_of(ssn: &Session) -> Vec<Bundle> {
        for_victim_job(&ssn.state, job(ssn, "ns/v"), running_tasks(ssn))
    }

    fn cpu(millis: f64) -> Resource {
        Resource::cpu_mem(millis, 0.0)
    }

    #[test]
    fn tasks_above_the_gang_minimum_are_safe_lowest_priority_first_the_rest_whole() {
        let ssn = session(
            2,
            "",
            &[("a", "1", 5, ""), ("b", "1", 1, ""), ("c", "1", 9, "")],
            1,
        );
        let bundles = bundles_of(&ssn);
        assert_eq!(
            shape(&ssn, &bundles),
            [
                (BundleKind::Safe, vec!["b".to_string()]),
                (BundleKind::Whole, vec!["a".to_string(), "c".to_string()]),
            ]
        );
        assert!(bundles[0].global.is_empty());
        // A whole bundle costs every task of the job, the pending one included.
        assert_eq!(bundles[1].global.get(ResourceName::Cpu), 4000.0);
        assert_eq!(bundles[1].local.get(ResourceName::Cpu), 2000.0);
    }

    #[test]
    fn equal_priorities_are_taken_in_task_uid_order() {
        let ssn = session(
            1,
            "",
            &[("z", "1", 0, ""), ("m", "1", 0, ""), ("a", "1", 0, "")],
            0,
        );
        assert_eq!(
            shape(&ssn, &bundles_of(&ssn)),
            [
                (BundleKind::Safe, vec!["a".to_string(), "m".to_string()]),
                (BundleKind::Whole, vec!["z".to_string()]),
            ]
        );
    }

    #[test]
    fn a_gang_exactly_at_its_minimum_has_only_a_whole_bundle() {
        let ssn = session(2, "", &[("a", "1", 0, ""), ("b", "1", 0, "")], 0);
        assert_eq!(
            shape(&ssn, &bundles_of(&ssn)),
            [(BundleKind::Whole, vec!["a".to_string(), "b".to_string()])]
        );
    }

    #[test]
    fn a_gang_already_below_its_minimum_loses_nothing_more_so_all_is_safe() {
        let ssn = session(3, "", &[("a", "1", 0, ""), ("b", "1", 0, "")], 1);
        assert_eq!(
            shape(&ssn, &bundles_of(&ssn)),
            [(BundleKind::Safe, vec!["a".to_string(), "b".to_string()])]
        );
    }

    #[test]
    fn a_role_at_its_minimum_keeps_its_tasks_out_of_the_safe_bundle() {
        // ps: 1 running of 1 required; worker: 2 running of 1 required; the gang spares 1.
        let running = [
            ("ps", "1", 0, "ps"),
            ("w1", "1", 0, "worker"),
            ("w2", "1", 0, "worker"),
        ];
        let ssn = session(2, "ps: 1, worker: 1", &running, 0);
        assert_eq!(
            shape(&ssn, &bundles_of(&ssn)),
            [
                (BundleKind::Safe, vec!["w1".to_string()]),
                (BundleKind::Whole, vec!["ps".to_string(), "w2".to_string()]),
            ]
        );
    }

    #[test]
    fn a_sub_group_at_its_minimum_keeps_ready_sub_jobs_whole_but_a_broken_one_is_safe() {
        // Sub-group g needs 2 ready sub-jobs of 2 pods; sub-job 1 is already short of a pod,
        // 2 and 3 are ready. The gang (minMember 3, 5 running) could spare 2 pods, but only
        // the broken sub-job can lose one without taking g below its minimum.
        let mut yaml = "kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '64', memory: 64Gi, pods: '110'}}\n---\nkind: PodGroup\nmetadata: {name: v, namespace: ns}\nspec: {queue: q, minMember: 3, subGroupPolicy: [{name: g, subGroupSize: 2, minSubGroups: 2, matchLabelKeys: [sg]}]}\nstatus: {phase: Running}\n".to_string();
        for (name, sg, prio) in [
            ("a1", 1, 1),
            ("b1", 2, 2),
            ("b2", 2, 3),
            ("c1", 3, 4),
            ("c2", 3, 5),
        ] {
            yaml += &format!(
                "---\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: ns-{name}, labels: {{sg: '{sg}'}}, annotations: {{scheduling.k8s.io/group-name: v}}}}\nspec: {{nodeName: n1, priority: {prio}, containers: [{{name: c0, resources: {{requests: {{cpu: '1', memory: 1Gi}}}}}}]}}\nstatus: {{phase: Running}}\n"
            );
        }
        let ssn = Harness::new(CONF)
            .queue("q", 1)
            .manifests(&yaml)
            .open()
            .unwrap();
        let snap = &ssn.state.snap;
        let local = ["ns/a1", "ns/b1", "ns/c1"].map(|k| snap.task_id(k).unwrap());
        let bundles = for_victim_job(&ssn.state, job(&ssn, "ns/v"), local.to_vec());
        assert_eq!(
            shape(&ssn, &bundles),
            [
                (BundleKind::Safe, vec!["a1".to_string()]),
                (BundleKind::Whole, vec!["b1".to_string(), "c1".to_string()]),
            ]
        );
    }

    #[test]
    fn a_safe_bundle_costs_nothing_beyond_the_domain_so_its_roi_is_infinite() {
        let ssn = session(1, "", &[("a", "1", 0, ""), ("b", "1", 0, "")], 0);
        let bundles = bundles_of(&ssn);
        assert_eq!(roi(&bundles[0], &cpu(1000.0)), f64::INFINITY);
        // The whole bundle frees 1 of the 1 cpu needed and costs the job's 2: ROI 1/2.
        assert_eq!(roi(&bundles[1], &cpu(1000.0)), 0.5);
        // Freeing more than the need does not count: 4 cpu needed, 1 freed, 2 lost.
        assert_eq!(roi(&bundles[1], &cpu(4000.0)), 0.5);
    }

    fn whole(job: u32, local: f64, global: f64) -> Bundle {
        Bundle {
            kind: BundleKind::Whole,
            job: JobId(job),
            tasks: vec![TaskId(job)],
            local: cpu(local),
            global: cpu(global),
        }
    }

    #[test]
    fn bundles_sort_safe_first_then_victim_order_then_higher_roi_then_job_uid() {
        let ssn = Harness::new(CONF)
            .queue("q", 1)
            .node("n1", "8", "8Gi", &[])
            .pod_group("ns", "a", "q", 1)
            .pod_group("ns", "b", "q", 1)
            .pod_group("ns", "c", "q", 1)
            .pod("ns", "a-0", "a", "1", "1Gi")
            .pod("ns", "b-0", "b", "1", "1Gi")
            .pod("ns", "c-0", "c", "1", "1Gi")
            .open()
            .unwrap();
        let (a, b, c) = (0, 1, 2);
        let need = cpu(2000.0);
        let safe_c = Bundle {
            kind: BundleKind::Safe,
            global: Resource::empty(),
            ..whole(c, 1000.0, 0.0)
        };
        // a: ROI 1 / 4 = 0.25; b: ROI 1 / 2 = 0.5; equal ROI falls back to the job UID.
        let mut bundles = vec![
            whole(a, 2000.0, 8000.0),
            whole(b, 2000.0, 4000.0),
            safe_c.clone(),
        ];
        sort(&ssn, &mut bundles, &need, |_, _| false);
        let jobs: Vec<u32> = bundles.iter().map(|x| x.job.0).collect();
        assert_eq!(jobs, [c, b, a]);
        let mut bundles = vec![whole(b, 2000.0, 4000.0), whole(a, 2000.0, 4000.0)];
        sort(&ssn, &mut bundles, &need, |_, _| false);
        let jobs: Vec<u32> = bundles.iter().map(|x| x.job.0).collect();
        assert_eq!(jobs, [a, b]);
        // The action's victim order outranks ROI.
        let mut bundles = vec![whole(b, 2000.0, 4000.0), whole(a, 2000.0, 8000.0)];
        sort(&ssn, &mut bundles, &need, |l, r| l.0 == a && r.0 != a);
        let jobs: Vec<u32> = bundles.iter().map(|x| x.job.0).collect();
        assert_eq!(jobs, [a, b]);
    }

    #[test]
    fn a_whole_bundle_is_kept_only_when_every_task_is_allowed_a_safe_one_shrinks() {
        let ssn = session(
            1,
            "",
            &[("a", "1", 0, ""), ("b", "2", 0, ""), ("c", "1", 0, "")],
            0,
        );
        let bundles = bundles_of(&ssn);
        assert_eq!(shape(&ssn, &bundles)[0].1, ["a", "b"]);
        let a = bundles[0].tasks[0];
        let kept = keep_allowed(&ssn.state, bundles.clone(), &[a]);
        assert_eq!(
            shape(&ssn, &kept),
            [(BundleKind::Safe, vec!["a".to_string()])]
        );
        assert_eq!(kept[0].local.get(ResourceName::Cpu), 1000.0);
        let all: Vec<TaskId> = bundles.iter().flat_map(|b| b.tasks.clone()).collect();
        assert_eq!(keep_allowed(&ssn.state, bundles, &all).len(), 2);
    }
}
