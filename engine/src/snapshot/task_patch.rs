//! The task table patched in place: the earlier snapshot's table, owned, keeps the rows of every
//! job whose pods did not change since, under the same ids, and only the rows of the jobs that
//! changed are written.
//!
//! A cache that knows which PodGroups' pods came, went or changed since its last snapshot
//! (`SnapshotBuilder::groups_changed_since`) makes the task side of a steady snapshot
//! proportional to that churn instead of to the cluster: the rows of the changed jobs, and of
//! the pods of no session job, leave holes; the new rows fill the holes first, and when fewer
//! rows come than left, the last rows of the table move into the holes that remain, so the table
//! stays dense. The ids of the moved rows change; no decision depends on how ids are assigned
//! (`SnapshotBuilder::ids_shuffled` checks that), so only the job lists need to follow them.
//!
//! What stays a pass over every task is light: which rows are kept (a bitmap), the job lists
//! (ids copied), and the job column, as job ids are still given in UID order at each snapshot.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use fixedbitset::FixedBitSet;
use foldhash::fast::FixedState;
use rayon::prelude::*;

use super::pods_by_group::task_order;
use super::task_columns::{fresh_value, node_of, row_columns};
use super::task_row::TaskRow;
use super::{IdLists, JobTable, NodeTable, TaskTable};
use crate::api::{Lent, Pod};
use crate::model::{JobId, TaskId};

/// The new snapshot's jobs as the patch sees them.
pub(super) struct NewJobs<'a> {
    /// Per new job, the earlier job with its UID, if any.
    pub earlier: &'a [Option<usize>],
    /// Per new job, whether its group changed: some of its pods may have come, gone or changed
    /// since (the others keep all their earlier rows).
    pub changed: &'a [bool],
    /// Per new job, its pods in task order.
    pub members: &'a [&'a [Arc<Pod>]],
    /// The pods of no session job, in task order.
    pub jobless: &'a [&'a Arc<Pod>],
}

/// Where a new job's rows come from: all the rows of an earlier job (an unchanged job), or
/// slot by slot (a changed or new one).
enum JobRows {
    Kept(usize),
    Slots(Vec<Slot>),
}

/// Where one task of a changed job comes from: a row of the earlier table, or a fresh one.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot {
    Kept(TaskId),
    Fresh,
}

/// The slots of a changed job's `pods` (task order) against its `earlier` rows (task order
/// too): a pod that is the very version an earlier row has keeps the row. The rows no pod keeps
/// are left out.
fn slots(t: &TaskTable, earlier: &[TaskId], pods: &[Arc<Pod>]) -> Vec<Slot> {
    let mut rows = earlier.iter().peekable();
    pods.iter()
        .map(|pod| {
            while let Some(&&row) = rows.peek() {
                let had = &t.pod[row.idx()];
                if Arc::ptr_eq(had, pod) {
                    rows.next();
                    return Slot::Kept(row);
                }
                match task_order(had, pod) {
                    Ordering::Less => {
                        rows.next();
                    }
                    Ordering::Equal => {
                        rows.next();
                        return Slot::Fresh;
                    }
                    Ordering::Greater => return Slot::Fresh,
                }
            }
            Slot::Fresh
        })
        .collect()
}

/// A patched table (`patched`).
pub(super) struct Patched {
    pub tasks: TaskTable,
    /// Each new job's tasks.
    pub job_tasks: IdLists<TaskId>,
    /// The pods of the rows written over or removed, for the caller to free: often the last
    /// holder of a pod that finished, whose freeing the cycle need not wait for.
    pub released: Vec<Arc<Pod>>,
}

/// `earlier` (the table `earlier_jobs` lists the tasks of) patched into the table of `jobs`,
/// with each new job's task list. Only the job and sub-job columns are written for every row;
/// the sub-jobs are set later, as for a table built afresh.
pub(super) fn patched(
    mut earlier: TaskTable,
    earlier_jobs: &JobTable,
    jobs: &NewJobs,
    nodes: &NodeTable,
) -> Patched {
    let t = &mut earlier;
    // The changed jobs' slots, on the pool.
    let job_rows: Vec<JobRows> = (jobs.earlier, jobs.changed, jobs.members)
        .into_par_iter()
        .map(|(&earlier, &changed, pods)| match earlier {
            Some(e) if !changed => JobRows::Kept(e),
            Some(e) => JobRows::Slots(slots(t, &earlier_jobs.tasks[e], pods)),
            None => JobRows::Slots(vec![Slot::Fresh; pods.len()]),
        })
        .collect();
    let mut keep = FixedBitSet::with_capacity(t.len());
    for rows in &job_rows {
        match rows {
            JobRows::Kept(e) => {
                for task in &earlier_jobs.tasks[*e] {
                    keep.insert(task.idx());
                }
            }
            JobRows::Slots(slots) => {
                for slot in slots {
                    if let Slot::Kept(task) = slot {
                        keep.insert(task.idx());
                    }
                }
            }
        }
    }
    let holes: Vec<usize> = keep.zeroes().collect();
    // The pods of the fresh slots, in job order, then the pods of no job, their rows read on
    // the pool.
    let fresh_pods: Vec<&Arc<Pod>> = jobs
        .members
        .iter()
        .zip(&job_rows)
        .filter_map(|(pods, rows)| match rows {
            JobRows::Kept(_) => None,
            JobRows::Slots(slots) => Some(pods.iter().zip(slots)),
        })
        .flatten()
        .filter(|(_, slot)| **slot == Slot::Fresh)
        .map(|(pod, _)| pod)
        .chain(jobs.jobless.iter().copied())
        .collect();
    let fresh_rows: Vec<Lent<TaskRow>> = fresh_pods.par_iter().map(|p| TaskRow::lent(p)).collect();
    // Fresh rows fill the lowest holes, then go to the end; the holes left over, highest first,
    // each take the last row (unless it is the hole itself), so every row above the hole in
    // hand is a kept one. Column by column on the pool; the pods written over or removed are
    // held for the caller to free.
    let released: Vec<Arc<Pod>> = holes.iter().map(|&h| Arc::clone(&t.pod[h])).collect();
    let (filled, removed) = holes.split_at(holes.len().min(fresh_pods.len()));
    let fresh = (&fresh_pods[..], &fresh_rows[..]);
    let before = t.len();
    rayon::scope(|s| {
        macro_rules! patch {
            ($($field:ident),*) => {$(
                let column = &mut t.$field;
                s.spawn(move |_| {
                    for (i, (pod, row)) in fresh.0.iter().zip(fresh.1).enumerate() {
                        let row = (*pod, &**row);
                        let value = fresh_value!(row, nodes, $field);
                        match filled.get(i) {
                            Some(&at) => column[at] = value,
                            None => column.push(value),
                        }
                    }
                    for &at in removed.iter().rev() {
                        column.swap_remove(at);
                    }
                });
            )*};
        }
        row_columns!(patch);
    });
    let placed: Vec<TaskId> = (0..fresh_pods.len())
        .map(|i| TaskId(filled.get(i).copied().unwrap_or(before + i - filled.len()) as u32))
        .collect();
    // Which earlier row each removal moved where (holes are left over only when no row was
    // pushed); a row moved twice counts once, from where it was to where it ends.
    let mut origin: HashMap<u32, u32, FixedState> = HashMap::default();
    let mut len = before;
    for &hole in removed.iter().rev() {
        len -= 1;
        let last = len;
        if last != hole {
            let from = origin.remove(&(last as u32)).unwrap_or(last as u32);
            origin.insert(hole as u32, from);
        }
    }
    let moved: HashMap<u32, u32, FixedState> =
        origin.into_iter().map(|(to, from)| (from, to)).collect();
    let now = |task: TaskId| moved.get(&task.0).map_or(task, |&to| TaskId(to));
    // Earlier jobs some of whose rows moved: their lists are copied through `moved`. The job
    // column still has the earlier rows' jobs, by the rows' earlier ids.
    let mut renumbered = FixedBitSet::with_capacity(earlier_jobs.len());
    for &from in moved.keys() {
        if let Some(e) = t.job[from as usize] {
            renumbered.insert(e.idx());
        }
    }
    let mut items: Vec<TaskId> = Vec::with_capacity(t.len());
    let mut lengths: Vec<usize> = Vec::with_capacity(jobs.earlier.len());
    let mut fresh_ids = placed.iter().copied();
    for rows in &job_rows {
        match rows {
            JobRows::Kept(e) => {
                let list = &earlier_jobs.tasks[*e];
                if renumbered.contains(*e) {
                    items.extend(list.iter().map(|&task| now(task)));
                } else {
                    items.extend_from_slice(list);
                }
                lengths.push(list.len());
            }
            JobRows::Slots(slots) => {
                items.extend(slots.iter().map(|slot| match *slot {
                    Slot::Kept(task) => now(task),
                    Slot::Fresh => fresh_ids.next().expect("a fresh row per fresh slot"),
                }));
                lengths.push(slots.len());
            }
        }
    }
    drop(fresh_rows);
    let job_tasks = IdLists::from_lengths(lengths, items);
    let rows = t.len();
    t.job = vec![None; rows];
    for (j, tasks) in job_tasks.iter().enumerate() {
        for task in tasks {
            t.job[task.idx()] = Some(JobId(j as u32));
        }
    }
    t.sub_job = vec![None; rows];
    Patched {
        tasks: earlier,
        job_tasks,
        released,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::{GROUP_NAME_ANNOTATION, NodeTables, Snapshot, SnapshotBuilder};
    use super::*;
    use crate::api::{Node, PodGroup, Queue};

    /// A cluster: nodes `n0..n3`, PodGroups by name, pods by name with the group they name
    /// (`""`: none) and the node they are bound to (`""`: pending), and a version counter per
    /// pod (a new version is a new object).
    #[derive(Clone)]
    struct Cluster {
        groups: Vec<&'static str>,
        pods: BTreeMap<String, Arc<Pod>>,
    }

    fn pod(name: &str, group: &str, node: &str) -> Arc<Pod> {
        let mut p = Pod::default();
        p.metadata.namespace = "ns".into();
        p.metadata.name = name.into();
        p.metadata.uid = format!("uid-{name}");
        if !group.is_empty() {
            p.metadata
                .annotations
                .insert(GROUP_NAME_ANNOTATION.into(), group.into());
        }
        p.spec.node_name = node.into();
        Arc::new(p)
    }

    impl Cluster {
        fn new() -> Cluster {
            let mut c = Cluster {
                groups: vec!["a", "b", "c", "d", "e"],
                pods: BTreeMap::new(),
            };
            for group in ["a", "b", "c", "d", "e"] {
                for i in 0..4 {
                    let node = if i % 2 == 0 { "n1" } else { "" };
                    c.put(&format!("{group}-{i}"), group, node);
                }
            }
            c.put("loose-0", "", "n2");
            c
        }

        fn put(&mut self, name: &str, group: &str, node: &str) {
            self.pods.insert(name.into(), pod(name, group, node));
        }

        fn builder(&self, nodes: Option<&NodeTables>) -> SnapshotBuilder<'static> {
            let mut b = SnapshotBuilder::new("q");
            let mut queue = Queue::default();
            queue.metadata.name = "q".into();
            b.queue(Arc::new(queue));
            match nodes {
                Some(tables) => {
                    b.node_tables(tables.clone());
                }
                None => {
                    for name in ["n0", "n1", "n2", "n3"] {
                        let mut n = Node::default();
                        n.metadata.name = name.into();
                        b.node(Arc::new(n));
                    }
                }
            }
            for &group in &self.groups {
                let mut pg = PodGroup::default();
                pg.metadata.namespace = "ns".into();
                pg.metadata.name = group.into();
                pg.spec.queue = "q".into();
                b.pod_group(Arc::new(pg));
            }
            for p in self.pods.values() {
                b.pod(p.clone());
            }
            b
        }
    }

    /// Every task as its uid, job, node and status, and every job's tasks in order: what a
    /// snapshot says whatever ids it gives.
    fn picture(s: &Snapshot) -> (Vec<String>, Vec<Vec<String>>) {
        let mut tasks: Vec<String> = (0..s.tasks.len())
            .map(|t| {
                let job = s.tasks.job[t].map(|j| s.jobs.uid[j.idx()].to_string());
                let pod = &s.tasks.pod[t];
                assert_eq!(s.tasks.uid[t], pod.metadata.uid.as_str().into());
                format!(
                    "{} job {job:?} node {:?} status {:?} sub-job {}",
                    s.tasks.uid[t],
                    s.tasks.node[t].map(|n| s.nodes.name[n.idx()].clone()),
                    s.tasks.status[t],
                    s.tasks.sub_job[t].is_some()
                )
            })
            .collect();
        tasks.sort();
        let jobs = s
            .jobs
            .tasks
            .iter()
            .map(|ts| {
                ts.iter()
                    .map(|t| s.tasks.uid[t.idx()].to_string())
                    .collect()
            })
            .collect();
        (tasks, jobs)
    }

    /// Builds `before`, then `after` twice: patched from `before`'s tables (given the groups
    /// that changed) and from scratch; both must say the same. Returns the two snapshots.
    fn patched_and_fresh(before: &Cluster, after: &Cluster, changed: &[&str]) -> [Snapshot; 2] {
        let first = before.builder(None).build();
        let (nodes, tables, serial) = (first.node_tables(), first.task_tables(), first.serial);
        drop(first);
        let mut b = after.builder(Some(&nodes));
        b.earlier_tasks(tables);
        b.groups_changed_since(serial, changed.iter().map(|g| format!("ns/{g}")));
        let patched = b.build();
        let fresh = after.builder(Some(&nodes)).build();
        assert_eq!(picture(&patched), picture(&fresh));
        [patched, fresh]
    }

    #[test]
    fn fewer_rows_than_left_move_the_last_rows_into_the_holes_and_the_jobs_follow_them() {
        let before = Cluster::new();
        let mut after = before.clone();
        // Group a loses three pods, e (the last rows) one; b's pod 1 gets a new version.
        for name in ["a-0", "a-1", "a-3", "e-2"] {
            after.pods.remove(name);
        }
        after.put("b-1", "b", "n3");
        let [patched, _] = patched_and_fresh(&before, &after, &["a", "b", "e"]);
        assert_eq!(patched.tasks.len(), 17);
    }

    #[test]
    fn more_rows_than_left_fill_the_holes_then_grow_the_table() {
        let before = Cluster::new();
        let mut after = before.clone();
        after.pods.remove("c-2");
        for i in 4..9 {
            after.put(&format!("c-{i}"), "c", "");
        }
        after.put("loose-1", "", "");
        let [patched, _] = patched_and_fresh(&before, &after, &["c", ""]);
        assert_eq!(patched.tasks.len(), 26);
    }

    #[test]
    fn a_pod_that_moves_to_another_group_and_a_group_that_goes_are_both_followed() {
        let before = Cluster::new();
        let mut after = before.clone();
        after.put("b-0", "d", "n1");
        after.groups.retain(|g| *g != "c");
        let [patched, fresh] = patched_and_fresh(&before, &after, &["b", "d"]);
        let jobless = |s: &Snapshot| s.tasks.job.iter().filter(|j| j.is_none()).count();
        assert_eq!(jobless(&patched), 5, "c's four pods and the loose one");
        assert_eq!(jobless(&fresh), 5);
    }

    #[test]
    fn an_unchanged_job_keeps_its_rows_and_their_ids() {
        let before = Cluster::new();
        let first = before.builder(None).build();
        let b_tasks: Vec<TaskId> = first.jobs.tasks[1].to_vec();
        let mut after = before.clone();
        after.put("a-9", "a", "");
        let (nodes, tables, serial) = (first.node_tables(), first.task_tables(), first.serial);
        drop(first);
        let mut builder = after.builder(Some(&nodes));
        builder.earlier_tasks(tables);
        builder.groups_changed_since(serial, ["ns/a".to_string()]);
        let patched = builder.build();
        assert_eq!(patched.jobs.tasks[1], b_tasks[..]);
        assert_eq!(patched.tasks.len(), 22);
    }
}
