//! The task table's columns, row by row from where each row comes from: the earlier snapshot's
//! table for jobs whose pods did not change (moved out of it when nothing else holds it), the
//! pods' own rows for the others.
//!
//! In a steady cluster nine jobs in ten are unchanged from one cycle to the next, so most rows
//! are moved rather than read from 400k scattered pod memos and their node looked up again.

use std::cmp::Ordering;
use std::convert::identity;
use std::sync::{Arc, Mutex};

use rayon::iter::Either;
use rayon::prelude::*;

use super::task_row::TaskRow;
use super::{NodeTable, TaskTable, TaskTables};
use crate::api::{Lent, Pod};
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

/// Where new task rows come from: the rows of an unchanged job in the earlier snapshot, from
/// `start` on, one per pod of `pods`; or one pod's own row.
pub(super) enum Source<'p> {
    Earlier { start: usize, pods: &'p [Arc<Pod>] },
    Fresh(&'p Arc<Pod>, Lent<'p, TaskRow>),
}

impl Source<'_> {
    /// How many rows this source gives.
    fn rows(&self) -> usize {
        match self {
            Source::Earlier { pods, .. } => pods.len(),
            Source::Fresh(..) => 1,
        }
    }
}

/// How many rows the sources give, and whether all are fresh.
#[derive(Clone, Copy)]
struct Rows {
    count: usize,
    all_fresh: bool,
}

impl Rows {
    fn of(sources: &[Source]) -> Rows {
        Rows {
            count: sources.iter().map(Source::rows).sum(),
            all_fresh: sources.iter().all(|s| matches!(s, Source::Fresh(..))),
        }
    }
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
/// with the very same pod versions in the same order (so its rows are the same). Both job tables
/// are sorted by UID, so the jobs are paired in one merge; a PodGroup that did not change shares
/// its UID with the earlier table (its memoised row's), so most pairs compare one pointer, not
/// text. The pods are then compared on the pool.
pub(super) fn earlier_starts(
    earlier: &TaskTables,
    uids: &[Arc<str>],
    members: &[&[Arc<Pod>]],
) -> Vec<Option<usize>> {
    let (jobs, tasks) = (&earlier.jobs, &earlier.tasks);
    let mut at = 0;
    let pairs: Vec<Option<usize>> = uids
        .iter()
        .map(|uid| {
            while let Some(e) = jobs.uid.get(at) {
                let order = if Arc::ptr_eq(e, uid) {
                    Ordering::Equal
                } else {
                    (**e).cmp(&**uid)
                };
                match order {
                    Ordering::Less => at += 1,
                    Ordering::Equal => return Some(at),
                    Ordering::Greater => return None,
                }
            }
            None
        })
        .collect();
    pairs
        .par_iter()
        .zip(members)
        .map(|(&e, pods)| {
            let e = e?;
            if jobs.tasks[e].len() != pods.len() {
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

/// One task column of `rows` rows: `fresh` for rows from a pod, `carry` for values of the
/// earlier table, moved out of it a job's run at a time when it is owned (earlier rows are taken
/// at increasing positions), else copied. Values of an owned earlier table that no row takes are
/// handed to `unused`.
fn column<T: Clone + Send + Sync + 'static>(
    sources: &[Source],
    rows: Rows,
    earlier: EarlierColumn<T>,
    carry: impl Fn(T) -> T + Sync,
    fresh: impl Fn(&Arc<Pod>, &TaskRow) -> T + Sync,
    unused: &Mutex<Released>,
) -> Vec<T> {
    let derive = |pods| derived(pods, &fresh);
    match earlier {
        EarlierColumn::Owned(values) => {
            let total = values.len();
            let mut values = values.into_iter();
            let mut at = 0;
            let mut left = Vec::new();
            let mut out = Vec::with_capacity(rows.count);
            for source in sources {
                match *source {
                    Source::Earlier { start, pods }
                        if start >= at && start + pods.len() <= total =>
                    {
                        left.extend(values.by_ref().take(start - at));
                        out.extend(values.by_ref().take(pods.len()).map(&carry));
                        at = start + pods.len();
                    }
                    // Rows are taken in table order; were some asked for out of order, they
                    // are derived again.
                    Source::Earlier { pods, .. } => out.extend(derive(pods)),
                    Source::Fresh(pod, ref row) => out.push(fresh(pod, row)),
                }
            }
            left.extend(values);
            unused
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .0
                .push(Box::new(left));
            out
        }
        // A source's rows without a vector each: most sources are one fresh row.
        EarlierColumn::Shared(values) => sources
            .par_iter()
            .flat_map_iter(|source| match *source {
                Source::Earlier { start, pods } => match values.get(start..start + pods.len()) {
                    Some(run) => Either::Left(Either::Left(run.iter().cloned().map(&carry))),
                    None => Either::Left(Either::Right(derive(pods))),
                },
                Source::Fresh(pod, ref row) => Either::Right(std::iter::once(fresh(pod, row))),
            })
            .collect(),
        // Only fresh rows (a first snapshot): collected by index, with no pieces to join.
        EarlierColumn::None if rows.all_fresh => sources
            .par_iter()
            .map(|source| match *source {
                Source::Fresh(pod, ref row) => fresh(pod, row),
                Source::Earlier { .. } => unreachable!("all sources are fresh"),
            })
            .collect(),
        EarlierColumn::None => sources
            .par_iter()
            .flat_map_iter(|source| match *source {
                Source::Earlier { pods, .. } => Either::Left(derive(pods)),
                Source::Fresh(pod, ref row) => Either::Right(std::iter::once(fresh(pod, row))),
            })
            .collect(),
    }
}

/// The rows of `pods` derived from the pods themselves.
fn derived<'a, T>(
    pods: &'a [Arc<Pod>],
    fresh: &'a impl Fn(&Arc<Pod>, &TaskRow) -> T,
) -> impl Iterator<Item = T> + 'a {
    pods.iter().map(|pod| fresh(pod, &TaskRow::lent(pod)))
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
    let rows = Rows::of(sources);
    let mut t = TaskTable::default();
    let best_effort = earlier!(best_effort);
    let node = earlier!(node);
    let pod = earlier!(pod);
    // The columns whose rows hold the very value.
    let uid = earlier!(uid);
    let name = earlier!(name);
    let namespace = earlier!(namespace);
    let role = earlier!(role);
    let resreq = earlier!(resreq);
    let priority = earlier!(priority);
    let preemptable = earlier!(preemptable);
    let sch_gated = earlier!(sch_gated);
    let status = earlier!(status);
    let created = earlier!(created);
    let name_index = earlier!(name_index);
    let signature = earlier!(signature);
    let inter_pod = earlier!(inter_pod);
    rayon::scope(|s| {
        let t = &mut t;
        macro_rules! from_row {
            ($($field:ident),*) => {$(
                s.spawn(|_| {
                    let value = |_: &Arc<Pod>, r: &TaskRow| Clone::clone(&r.$field);
                    t.$field = column(sources, rows, $field, identity, value, unused)
                });
            )*};
        }
        from_row!(
            uid,
            name,
            namespace,
            role,
            resreq,
            priority,
            preemptable,
            sch_gated,
            status,
            created,
            name_index,
            signature,
            inter_pod
        );
        s.spawn(|_| {
            let empty = |_: &Arc<Pod>, r: &TaskRow| r.resreq.is_empty();
            t.best_effort = column(sources, rows, best_effort, identity, empty, unused)
        });
        s.spawn(|_| t.node = column(sources, rows, node, carry_node, node_of, unused));
        s.spawn(|_| t.pod = column(sources, rows, pod, identity, |p, _| Arc::clone(p), unused));
    });
    t
}
