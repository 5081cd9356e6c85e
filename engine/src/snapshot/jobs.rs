//! The job table (one row per PodGroup in the session) and the sub-job table.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::IdLists;
use crate::api::{PodGroup, Time};
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
    /// Tasks of the job, in table order.
    pub tasks: IdLists<TaskId>,
    pub network_topology: Vec<Option<NetworkTopology>>,
    /// True when the PodGroup has a `subGroupPolicy`.
    pub has_sub_group_policy: Vec<bool>,
    /// The job's sub-jobs (the default one, when some task falls into it, is first).
    pub sub_jobs: IdLists<SubJobId>,
    /// `minSubGroups` per policy group id (`<job>/<policy>`).
    pub min_sub_jobs: Vec<BTreeMap<String, i32>>,
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
    #[allow(clippy::too_many_arguments)]
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
    use super::known_phase;

    #[test]
    fn volcanos_phases_are_known_and_any_other_text_is_read_from_the_pod_group() {
        for phase in ["", "Pending", "Inqueue", "Running", "Unknown", "Completed"] {
            assert_eq!(known_phase(phase), Some(phase));
        }
        assert_eq!(known_phase("running"), None);
        assert_eq!(known_phase("Custom"), None);
    }
}
