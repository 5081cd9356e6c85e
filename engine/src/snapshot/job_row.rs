//! What a job row takes from its PodGroup alone, derived once per version of the PodGroup.
//!
//! The cache hands every snapshot the same `Arc<PodGroup>` until the PodGroup changes (a status
//! the scheduler writes back unchanged makes no new version), so a snapshot formats no key,
//! parses no `minResources` and copies no string for the PodGroups that did not change: it
//! shares the row's strings. Sharing the UID also lets a snapshot find a job's earlier self by
//! pointer (`task_columns::earlier_reuse`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::build::{PREEMPTABLE_KEY, parse_go_bool, topology_of};
use super::few_text::few_text;
use super::job_columns::UidPrefix;
use super::jobs::{NetworkTopology, PodGroupCounts, known_phase};
use crate::api::{Lent, PodGroup, Time};
use crate::model::Resource;

/// One PodGroup's job row, before it is given an id, a queue and a priority (those depend on
/// other objects).
#[derive(Debug)]
pub(super) struct JobRow {
    /// `namespace/name`.
    pub uid: Arc<str>,
    pub name: Arc<str>,
    pub namespace: Arc<str>,
    /// The UID's sort prefix, beside the row (`job_columns`).
    pub uid_prefix: UidPrefix,
    /// `spec.queue` (empty for the default queue), the process's shared copy (`few_text`).
    pub queue: Arc<str>,
    pub min_available: i32,
    pub min_resources: Option<Resource>,
    pub task_min_available_total: i32,
    pub preemptable: bool,
    pub created: Time,
    pub phase: Option<&'static str>,
    pub status_counts: PodGroupCounts,
    pub network_topology: Option<NetworkTopology>,
    pub has_sub_group_policy: bool,
    /// `minSubGroups` per policy group id (`<job>/<policy>`).
    pub min_sub_jobs: BTreeMap<String, i32>,
}

/// Derives and memoises the job row of `pg` (the cache calls it as PodGroups arrive).
pub fn prepare_job_row(pg: &PodGroup) {
    JobRow::lent(pg);
}

impl JobRow {
    /// The row of `pg`, lent where its memo can lend it (no reference count touched).
    pub fn lent(pg: &PodGroup) -> Lent<'_, JobRow> {
        pg.memo.lend(|| JobRow::derive(pg))
    }

    fn derive(pg: &PodGroup) -> JobRow {
        let m = &pg.metadata;
        let uid = m.key();
        let min_sub_jobs = pg
            .spec
            .sub_group_policy
            .iter()
            .map(|p| (format!("{uid}/{}", p.name), p.min_sub_groups.unwrap_or(0)))
            .collect();
        JobRow {
            name: m.name.as_str().into(),
            namespace: m.namespace.as_str().into(),
            min_available: pg.spec.min_member.max(0),
            min_resources: pg.spec.min_resources.as_ref().map(Resource::from_list),
            task_min_available_total: pg.spec.min_task_member.values().sum(),
            preemptable: m
                .annotations
                .get(PREEMPTABLE_KEY)
                .or_else(|| m.labels.get(PREEMPTABLE_KEY))
                .is_some_and(|v| parse_go_bool(v).unwrap_or(false)),
            created: m.creation_timestamp.unwrap_or_default(),
            phase: known_phase(&pg.status.phase),
            status_counts: PodGroupCounts::of(&pg.status),
            network_topology: topology_of(&pg.spec.network_topology),
            has_sub_group_policy: !pg.spec.sub_group_policy.is_empty(),
            min_sub_jobs,
            uid_prefix: UidPrefix::of(&uid),
            queue: few_text(&pg.spec.queue),
            uid: uid.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::JobRow;
    use crate::api::PodGroup;

    fn pod_group(yaml: &str) -> PodGroup {
        crate::harness::Harness::parse(yaml)
    }

    #[test]
    fn a_pod_group_version_derives_its_row_once_and_a_changed_copy_derives_its_own() {
        let pg = pod_group(
            "metadata: {namespace: ns, name: g, annotations: {volcano.sh/preemptable: 'true'}}\n\
             spec: {minMember: 3, minResources: {cpu: '2'}}\nstatus: {phase: Running}",
        );
        let (a, b) = (JobRow::lent(&pg), JobRow::lent(&pg));
        assert!(std::ptr::eq(&*a, &*b));
        assert_eq!(&*a.uid, "ns/g");
        assert_eq!(
            (a.min_available, a.preemptable, a.phase),
            (3, true, Some("Running"))
        );
        assert_eq!(a.min_resources.as_ref().map(|r| r.milli_cpu), Some(2000.0));
        let mut changed = pg.clone();
        changed.status.phase = "Custom".into();
        let c = JobRow::lent(&changed);
        assert!(!std::ptr::eq(&*a, &*c));
        assert_eq!((&*c.uid, c.phase), ("ns/g", None));
    }
}
