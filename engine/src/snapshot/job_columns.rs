//! The job table's columns from the PodGroups' rows, in UID order.
//!
//! A large snapshot has 54k jobs, whose rows lie in their PodGroups' memos all over the heap.
//! Sorting them compared UIDs read through two rows and two strings per comparison, and a pass
//! per column read every row again; here a sort reads a prefix held beside each row, and each
//! row is read once.

use std::cmp::Ordering;
use std::sync::Arc;

use rayon::prelude::*;

use super::JobTable;
use super::job_row::JobRow;
use crate::api::{Lent, PodGroup};
use crate::model::QueueId;

/// A UID's first bytes, zero-padded: prefixes order as their UIDs do wherever they differ, and
/// where they tie the UIDs themselves decide. Long enough for `namespace/name` keys that share
/// their namespace and the start of their name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct UidPrefix([u8; 32]);

impl UidPrefix {
    pub(super) fn of(uid: &str) -> UidPrefix {
        let mut prefix = [0; 32];
        let bytes = &uid.as_bytes()[..uid.len().min(prefix.len())];
        prefix[..bytes.len()].copy_from_slice(bytes);
        UidPrefix(prefix)
    }

    /// The namespace and name of the job whose UID (`namespace/name`) this is the prefix of,
    /// read from the prefix when the whole UID is in it (the lengths come from the job's own
    /// strings, without reading them); `None` when it is not.
    pub(super) fn key_parts(&self, namespace: &str, name: &str) -> Option<(&str, &str)> {
        let (ns, len) = (namespace.len(), namespace.len() + 1 + name.len());
        let uid = std::str::from_utf8(self.0.get(..len)?).ok()?;
        Some((uid.get(..ns)?, uid.get(ns + 1..)?))
    }
}

/// A job to be: its UID prefix (the row's, copied beside it so that sorting reads no row), row,
/// PodGroup and queue.
pub(super) type JobSource<'a> = (UidPrefix, Lent<'a, JobRow>, &'a Arc<PodGroup>, QueueId);

/// Sorts `jobs` by UID, keeping the first of any that share one, as a stable sort and a dedup by
/// UID would.
pub(super) fn sort_by_uid(jobs: &mut Vec<JobSource>) {
    jobs.par_sort_by(|a, b| uid_order(a, b));
    jobs.dedup_by(|a, b| a.0 == b.0 && a.1.uid == b.1.uid);
}

fn uid_order(a: &JobSource, b: &JobSource) -> Ordering {
    a.0.cmp(&b.0).then_with(|| a.1.uid.cmp(&b.1.uid))
}

/// Jobs whose columns one task of the pool fills before the pieces are joined.
const JOB_CHUNK: usize = 2048;

/// The job table's row columns for `jobs` (their task and sub-job lists are set later), with
/// each job's priority from `priority_of`.
pub(super) fn job_columns(
    jobs: &[JobSource],
    priority_of: impl Fn(&PodGroup) -> i32 + Sync,
) -> JobTable {
    let chunks: Vec<JobTable> = jobs
        .par_chunks(JOB_CHUNK)
        .map(|chunk| {
            let mut t = JobTable::default();
            reserve_rows(&mut t, chunk.len());
            for (_, row, pg, queue) in chunk {
                push_row(&mut t, row, pg, *queue, priority_of(pg));
            }
            t
        })
        .collect();
    let mut table = JobTable::default();
    reserve_rows(&mut table, jobs.len());
    for chunk in chunks {
        append_rows(&mut table, chunk);
    }
    table
}

fn push_row(t: &mut JobTable, row: &JobRow, pg: &Arc<PodGroup>, queue: QueueId, priority: i32) {
    t.uid.push(row.uid.clone());
    t.name.push(row.name.clone());
    t.namespace.push(row.namespace.clone());
    t.queue.push(queue);
    t.min_available.push(row.min_available);
    t.priority.push(priority);
    t.min_resources.push(row.min_resources.clone());
    t.task_min_available.push(pg.spec.min_task_member.clone());
    t.task_min_available_total
        .push(row.task_min_available_total);
    t.preemptable.push(row.preemptable);
    t.created.push(row.created);
    t.podgroup.push(Arc::clone(pg));
    t.phase.push(row.phase);
    t.status_counts.push(row.status_counts);
    t.network_topology.push(row.network_topology.clone());
    t.has_sub_group_policy.push(row.has_sub_group_policy);
    t.min_sub_jobs.push(row.min_sub_jobs.clone());
}

/// Calls `$apply!` with every row column of `JobTable`: all but the task and sub-job lists,
/// which are set once the tasks are placed.
macro_rules! row_columns {
    ($apply:ident) => {
        $apply!(
            uid,
            name,
            namespace,
            queue,
            min_available,
            priority,
            min_resources,
            task_min_available,
            task_min_available_total,
            preemptable,
            created,
            podgroup,
            phase,
            status_counts,
            network_topology,
            has_sub_group_policy,
            min_sub_jobs
        )
    };
}

/// Room for `n` more rows in each row column, so none grows by copying itself.
fn reserve_rows(t: &mut JobTable, n: usize) {
    macro_rules! reserve {
        ($($column:ident),*) => {$( t.$column.reserve_exact(n); )*};
    }
    row_columns!(reserve);
}

/// Moves `rows`' row columns to the end of `t`'s.
fn append_rows(t: &mut JobTable, mut rows: JobTable) {
    macro_rules! append {
        ($($column:ident),*) => {$( t.$column.append(&mut rows.$column); )*};
    }
    row_columns!(append);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_order_as_their_uids_where_they_differ_and_tie_only_on_a_shared_start() {
        let uids = ["", "a", "a\0", "ab", "b", "ns/job-000123", "ns/job-000124"];
        for a in uids {
            for b in uids {
                let (pa, pb) = (UidPrefix::of(a), UidPrefix::of(b));
                if pa != pb {
                    assert_eq!(pa.cmp(&pb), a.cmp(b), "{a:?} {b:?}");
                }
            }
        }
        assert_eq!(
            UidPrefix::of("a"),
            UidPrefix::of("a\0"),
            "padding ties, the UIDs decide"
        );
        let prefix = UidPrefix::of("ns/job-1");
        assert_eq!(prefix.key_parts("ns", "job-1"), Some(("ns", "job-1")));
        let long = format!("ns/{}", "n".repeat(30));
        let long_prefix = UidPrefix::of(&long);
        let not_all = long_prefix.key_parts("ns", &long[3..]);
        assert_eq!(not_all, None, "the whole UID is not in the prefix");
        let long = "x".repeat(40);
        assert_eq!(UidPrefix::of(&long), UidPrefix::of(&format!("{long}y")));
    }
}
