//! The task table's columns, row by row from where each row comes from: the earlier snapshot's
//! table for jobs whose pods did not change (moved out of it when nothing else holds it), the
//! pods' own rows for the others.
//!
//! In a steady cluster nine jobs in ten are unchanged from one cycle to the next, so most rows
//! are moved rather than read from 400k scattered pod memos and their node looked up again.

use std::convert::identity;
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::task_row::{RowRef, TaskRow};
use super::{NodeTable, TaskTable, TaskTables};
use crate::api::Pod;
use crate::model::NodeId;

/// Values a snapshot build let go of from the earlier tables (`SnapshotBuilder::take_released`).
#[derive(Default)]
pub struct Released(Vec<Box<dyn Send>>);

impl Released {
    /// Keeps `value` to be freed with the rest.
    pub(super) fn push(&mut self, value: Box<dyn Send>) {
        self.0.push(value);
    }
}

impl std::fmt::Debug for Released {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Released({} parts)", self.0.len())
    }
}

/// Where a new task row comes from: a row of the earlier snapshot, or the pod's own row.
pub(super) enum Source<'p> {
    Earlier(usize, &'p Arc<Pod>),
    Fresh(&'p Arc<Pod>, RowRef<'p>),
}

/// The earlier task table: owned (its rows are moved out), shared (they are copied), or none.
pub(super) enum Earlier<'e> {
    Owned(Box<TaskTable>),
    Shared(&'e TaskTable),
    None,
}

/// One column of the earlier task table, as `Earlier` holds it.
enum EarlierColumn<'e, T> {
    Owned(Vec<T>),
    Shared(&'e [T]),
    None,
}

/// For each new job, the first row of its tasks in the earlier snapshot, when the job was there
/// with the very same pod versions in the same order (so its rows are the same). Both job
/// tables are sorted by UID, so one walk pairs them.
pub(super) fn earlier_starts(
    earlier: &TaskTables,
    uids: &[String],
    members: &[&[Arc<Pod>]],
) -> Vec<Option<usize>> {
    let (jobs, tasks) = (&earlier.jobs, &earlier.tasks);
    let mut e = 0;
    uids.iter()
        .zip(members)
        .map(|(uid, pods)| {
            while e < jobs.len() && jobs.uid[e] < *uid {
                e += 1;
            }
            if e == jobs.len() || jobs.uid[e] != *uid || jobs.tasks[e].len() != pods.len() {
                return None;
            }
            let start = jobs.tasks[e].first()?.idx();
            let rows = tasks.pod.get(start..start + pods.len())?;
            rows.iter()
                .zip(*pods)
                .all(|(a, b)| Arc::ptr_eq(a, b))
                .then_some(start)
        })
        .collect()
}

/// One task column: `fresh` for rows from a pod, `carry` for values of the earlier table, moved
/// out of it when it is owned (earlier rows are taken at increasing positions), else copied.
/// Values of an owned earlier table that no row takes are handed to `unused`.
fn column<T: Clone + Send + Sync + 'static>(
    sources: &[Source],
    earlier: EarlierColumn<T>,
    carry: impl Fn(T) -> T + Sync,
    fresh: impl Fn(&Arc<Pod>, &TaskRow) -> T + Sync,
    unused: &Mutex<Released>,
) -> Vec<T> {
    match earlier {
        EarlierColumn::Owned(values) => {
            let mut values = values.into_iter().enumerate();
            let mut left = Vec::new();
            let mut out = Vec::with_capacity(sources.len());
            for source in sources {
                out.push(match source {
                    Source::Earlier(i, pod) => loop {
                        match values.next() {
                            Some((at, v)) if at == *i => break carry(v),
                            Some((_, v)) => left.push(v),
                            // Rows are taken in table order; were one asked for out of order,
                            // it is derived again.
                            None => break fresh(pod, &TaskRow::lent(pod)),
                        }
                    },
                    Source::Fresh(pod, row) => fresh(pod, row),
                });
            }
            left.extend(values.map(|(_, v)| v));
            unused
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .0
                .push(Box::new(left));
            out
        }
        EarlierColumn::Shared(values) => sources
            .par_iter()
            .map(|source| match source {
                Source::Earlier(i, _) => carry(values[*i].clone()),
                Source::Fresh(pod, row) => fresh(pod, row),
            })
            .collect(),
        EarlierColumn::None => sources
            .par_iter()
            .map(|source| match source {
                Source::Earlier(_, pod) => fresh(pod, &TaskRow::lent(pod)),
                Source::Fresh(pod, row) => fresh(pod, row),
            })
            .collect(),
    }
}

/// The task table's columns from `sources`, all at once on the pool. `node_ids` maps the
/// earlier snapshot's node ids to this one's (`None`: the node table is the same).
pub(super) fn task_columns(
    sources: &[Source],
    nodes: &NodeTable,
    mut earlier: Earlier,
    node_ids: Option<&[Option<NodeId>]>,
    unused: &Mutex<Released>,
) -> TaskTable {
    macro_rules! earlier {
        ($field:ident) => {
            match &mut earlier {
                Earlier::Owned(t) => EarlierColumn::Owned(std::mem::take(&mut t.$field)),
                Earlier::Shared(t) => {
                    let t: &TaskTable = *t;
                    EarlierColumn::Shared(&t.$field[..])
                }
                Earlier::None => EarlierColumn::None,
            }
        };
    }
    let node_of = |pod: &Arc<Pod>, _: &TaskRow| {
        let name = &pod.spec.node_name;
        if name.is_empty() {
            None
        } else {
            nodes.id(name)
        }
    };
    let carry_node = |n: Option<NodeId>| match node_ids {
        Some(ids) => n.and_then(|n| ids[n.idx()]),
        None => n,
    };
    let mut t = TaskTable::default();
    let uid = earlier!(uid);
    let name = earlier!(name);
    let namespace = earlier!(namespace);
    let role = earlier!(role);
    let resreq = earlier!(resreq);
    let best_effort = earlier!(best_effort);
    let priority = earlier!(priority);
    let preemptable = earlier!(preemptable);
    let sch_gated = earlier!(sch_gated);
    let status = earlier!(status);
    let created = earlier!(created);
    let name_index = earlier!(name_index);
    let node = earlier!(node);
    let pod = earlier!(pod);
    rayon::scope(|s| {
        let t = &mut t;
        s.spawn(|_| t.uid = column(sources, uid, identity, |_, r| r.uid.clone(), unused));
        s.spawn(|_| t.name = column(sources, name, identity, |_, r| r.name.clone(), unused));
        s.spawn(|_| {
            t.namespace = column(
                sources,
                namespace,
                identity,
                |_, r| r.namespace.clone(),
                unused,
            )
        });
        s.spawn(|_| t.role = column(sources, role, identity, |_, r| r.role.clone(), unused));
        s.spawn(|_| t.resreq = column(sources, resreq, identity, |_, r| r.resreq.clone(), unused));
        s.spawn(|_| {
            let empty = |_: &Arc<Pod>, r: &TaskRow| r.resreq.is_empty();
            t.best_effort = column(sources, best_effort, identity, empty, unused)
        });
        s.spawn(|_| t.priority = column(sources, priority, identity, |_, r| r.priority, unused));
        s.spawn(|_| {
            t.preemptable = column(sources, preemptable, identity, |_, r| r.preemptable, unused)
        });
        s.spawn(|_| t.sch_gated = column(sources, sch_gated, identity, |_, r| r.sch_gated, unused));
        s.spawn(|_| t.status = column(sources, status, identity, |_, r| r.status, unused));
        s.spawn(|_| t.created = column(sources, created, identity, |_, r| r.created, unused));
        s.spawn(|_| {
            t.name_index = column(sources, name_index, identity, |_, r| r.name_index, unused)
        });
        s.spawn(|_| t.node = column(sources, node, carry_node, node_of, unused));
        s.spawn(|_| t.pod = column(sources, pod, identity, |p, _| Arc::clone(p), unused));
    });
    t
}
