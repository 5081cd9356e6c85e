//! The job table (one row per PodGroup in the session) and the sub-job table.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{IdLists, JobTaskSums};
use crate::api::{PodGroup, PodGroupStatus, Time};
use crate::model::{JobId, QueueId, Resource, SubJobId, TaskId};

/// `networkTopology.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologyMode {
    Hard,
    Soft,
}

/// A job's or sub-job's network-topology constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkTopology {
    pub mode: TopologyMode,
    pub highest_tier_allowed: Option<i32>,
    pub highest_tier_name: String,
}

/// Jobs, sorted by UID (`namespace/name`).
#[derive(Debug, Default)]
pub struct JobTable {
    /// Shared with the PodGroup's memoised row (`JobRow`).
    pub uid: Vec<Arc<str>>,
    pub name: Vec<Arc<str>>,
    pub namespace: Vec<Arc<str>>,
    pub queue: Vec<QueueId>,
    /// `spec.minMember`.
    pub min_available: Vec<i32>,
    /// From the PodGroup's PriorityClass (or the global default, or 0).
    pub priority: Vec<i32>,
    pub min_resources: Vec<Option<Resource>>,
    /// `spec.minTaskMember` (role → n).
    pub task_min_available: Vec<BTreeMap<String, i32>>,
    pub task_min_available_total: Vec<i32>,
    pub preemptable: Vec<bool>,
    pub created: Vec<Time>,
    pub podgroup: Vec<Arc<PodGroup>>,
    /// The PodGroup's `status.phase` when it is one Volcano names (`known_phase`), so the many
    /// reads of a cycle find it in the table; `None` for any other text, read from the PodGroup.
    pub phase: Vec<Option<&'static str>>,
    /// The PodGroup's `status` task counts, beside `phase` for the same reason: close compares
    /// every job's new status with them.
    pub status_counts: Vec<PodGroupCounts>,
    /// Tasks of the job, in table order.
    pub tasks: IdLists<TaskId>,
    /// What the job's tasks add up to (`job_task_sums`).
    pub task_sums: Vec<JobTaskSums>,
    pub network_topology: Vec<Option<NetworkTopology>>,
    /// True when the PodGroup has a `subGroupPolicy`.
    pub has_sub_group_policy: Vec<bool>,
    /// The job's sub-jobs (the default one, when some task falls into it, is first).
    pub sub_jobs: IdLists<SubJobId>,
    /// `minSubGroups` per policy group id (`<job>/<policy>`).
    pub min_sub_jobs: Vec<BTreeMap<String, i32>>,
}

/// A PodGroup status's task counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PodGroupCounts {
    pub running: i32,
    pub failed: i32,
    pub succeeded: i32,
}

impl PodGroupCounts {
    /// The counts of `status`.
    pub fn of(status: &PodGroupStatus) -> PodGroupCounts {
        PodGroupCounts {
            running: status.running,
            failed: status.failed,
            succeeded: status.succeeded,
        }
    }
}

/// `phase` as a static string when it is a PodGroup phase Volcano names, or empty.
pub fn known_phase(phase: &str) -> Option<&'static str> {
    ["", "Pending", "Inqueue", "Running", "Unknown", "Completed"]
        .into_iter()
        .find(|&known| known == phase)
}

impl JobTable {
    /// Number of jobs.
    pub fn len(&self) -> usize {
        self.uid.len()
    }

    /// True when there are no jobs.
    pub fn is_empty(&self) -> bool {
        self.uid.is_empty()
    }

    /// All job ids.
    pub fn ids(&self) -> impl Iterator<Item = JobId> + use<> {
        (0..self.uid.len() as u32).map(JobId)
    }

    /// The phase job `j`'s PodGroup reports. The PodGroup is read only for a phase the table
    /// does not name: the PodGroups of a long-running cluster lie scattered over the heap, and
    /// reading each one's string was a cache miss per job (most of backfill, a part of close).
    pub fn pod_group_phase(&self, j: JobId) -> &str {
        self.phase[j.idx()].unwrap_or_else(|| &self.podgroup[j.idx()].status.phase)
    }
}

/// Sub-jobs (Volcano's `SubJobInfo`), grouped by job.
#[derive(Debug, Default)]
pub struct SubJobTable {
    pub uid: Vec<Arc<str>>,
    pub job: Vec<JobId>,
    /// The policy group id (`<job>/<policy name>`); the job UID for a default sub-job.
    pub gid: Vec<Arc<str>>,
    pub min_available: Vec<i32>,
    pub match_index: Vec<i64>,
    pub network_topology: Vec<Option<NetworkTopology>>,
    pub tasks: IdLists<TaskId>,
    pub is_default: Vec<bool>,
}

impl SubJobTable {
    /// Appends a sub-job and returns its id; its tasks are set with the others' once all are
    /// known (`tasks` is built in one piece).
    #[allow(
        clippy::too_many_arguments,
        reason = "one value per job column, filled in one call"
    )]
    pub fn push(
        &mut self,
        uid: Arc<str>,
        job: JobId,
        gid: Arc<str>,
        min_available: i32,
        match_index: i64,
        network_topology: Option<NetworkTopology>,
        is_default: bool,
    ) -> SubJobId {
        let id = SubJobId(self.uid.len() as u32);
        self.uid.push(uid);
        self.job.push(job);
        self.gid.push(gid);
        self.min_available.push(min_available);
        self.match_index.push(match_index);
        self.network_topology.push(network_topology);
        self.is_default.push(is_default);
        id
    }

    /// Number of sub-jobs.
    pub fn len(&self) -> usize {
        self.uid.len()
    }

    /// True when there are no sub-jobs.
    pub fn is_empty(&self) -> bool {
        self.uid.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::known_phase;
    use crate::model::{SubJobId, TaskId};

    #[test]
    fn volcanos_phases_are_known_and_any_other_text_is_read_from_the_pod_group() {
        for phase in ["", "Pending", "Inqueue", "Running", "Unknown", "Completed"] {
            assert_eq!(known_phase(phase), Some(phase));
        }
        assert_eq!(known_phase("running"), None);
        assert_eq!(known_phase("Custom"), None);
    }

    /// Per PodGroup (by name): its tasks, and its sub-jobs' tasks in sub-job order (names
    /// sorted within each), after checking that every task's sub-job column points back.
    fn job_lists(groups: &str, pods: &[(&str, &str, &str)]) -> BTreeMap<String, JobLists> {
        let mut yaml = groups.to_string();
        for (name, group, label) in pods {
            yaml += &format!(
                "---\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: ns-{name}, labels: {{{label}}}, annotations: {{scheduling.k8s.io/group-name: {group}}}}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: '1'}}}}}}]}}\nstatus: {{phase: Pending}}\n"
            );
        }
        let conf = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n";
        let ssn = crate::harness::Harness::new(conf)
            .queue("q", 1)
            .manifests(&yaml)
            .open()
            .unwrap();
        let snap = &ssn.state.snap;
        for (s, ts) in snap.sub_jobs.tasks.iter().enumerate() {
            for t in ts {
                assert_eq!(snap.tasks.sub_job[t.idx()], Some(SubJobId(s as u32)));
            }
        }
        let names = |ts: &[TaskId]| -> Vec<String> {
            let mut v: Vec<String> = ts
                .iter()
                .map(|t| snap.tasks.name[t.idx()].to_string())
                .collect();
            v.sort();
            v
        };
        (0..snap.jobs.len())
            .map(|j| {
                let subs = snap.jobs.sub_jobs[j]
                    .iter()
                    .map(|s| names(&snap.sub_jobs.tasks[s.idx()]))
                    .collect();
                (
                    snap.jobs.name[j].to_string(),
                    (names(&snap.jobs.tasks[j]), subs),
                )
            })
            .collect()
    }

    type JobLists = (Vec<String>, Vec<Vec<String>>);

    const GROUPS: &str = "kind: PodGroup\nmetadata: {name: plain, namespace: ns}\nspec: {queue: q, minMember: 1}\n---\nkind: PodGroup\nmetadata: {name: empty, namespace: ns}\nspec: {queue: q, minMember: 1}\n";

    fn lists(tasks: &[&str], subs: &[&[&str]]) -> JobLists {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        (owned(tasks), subs.iter().map(|s| owned(s)).collect())
    }

    #[test]
    fn without_a_policy_a_job_with_tasks_has_one_default_sub_job_holding_them_all() {
        let got = job_lists(GROUPS, &[("p1", "plain", ""), ("p2", "plain", "")]);
        assert_eq!(got["plain"], lists(&["p1", "p2"], &[&["p1", "p2"]]));
        assert_eq!(got["empty"], lists(&[], &[]));
    }

    #[test]
    fn a_policy_splits_a_jobs_tasks_by_label_value_after_its_default_sub_job() {
        let split = "---\nkind: PodGroup\nmetadata: {name: split, namespace: ns}\nspec: {queue: q, minMember: 1, subGroupPolicy: [{name: g, matchLabelKeys: [sg]}]}\n";
        let got = job_lists(
            &format!("{GROUPS}{split}"),
            &[
                ("p1", "plain", ""),
                ("s1", "split", "sg: '2'"),
                ("s2", "split", ""),
                ("s3", "split", "sg: '1'"),
                ("s4", "split", "sg: '2'"),
            ],
        );
        assert_eq!(got["plain"], lists(&["p1"], &[&["p1"]]));
        assert_eq!(got["empty"], lists(&[], &[]));
        assert_eq!(
            got["split"],
            lists(
                &["s1", "s2", "s3", "s4"],
                &[&["s2"], &["s3"], &["s1", "s4"]]
            )
        );
    }
}
