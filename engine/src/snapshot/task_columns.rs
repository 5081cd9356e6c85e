//! The task table's columns, row by row from where each row comes from: the earlier snapshot's
//! table for pods that did not change (moved out of it when nothing else holds it), the pods'
//! own rows for the others.
//!
//! In a steady cluster nine jobs in ten are unchanged from one cycle to the next, and most of the
//! others lost or gained one pod, so most rows are moved rather than read from 400k scattered pod
//! memos and their node looked up again.

use std::cmp::Ordering;
use std::convert::identity;
use std::sync::{Arc, Mutex};

use rayon::iter::Either;
use rayon::prelude::*;
use smallvec::SmallVec;

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

/// Sources as the columns take them: consecutive earlier sources whose rows follow one another
/// in the earlier table as one run, a fresh source alone. The 50k unchanged jobs of a steady
/// large cluster are a few thousand runs, and each of the twenty columns went through every job.
enum Span<'s, 'p> {
    Earlier {
        start: usize,
        len: usize,
        sources: &'s [Source<'p>],
    },
    Fresh(&'p Arc<Pod>, &'s TaskRow),
}

impl<'s, 'p> Span<'s, 'p> {
    /// The spans of `sources`, in order.
    fn of(sources: &'s [Source<'p>]) -> Vec<Span<'s, 'p>> {
        let mut spans = Vec::new();
        let mut i = 0;
        while let Some(source) = sources.get(i) {
            i += 1;
            match source {
                Source::Fresh(pod, row) => spans.push(Span::Fresh(pod, row)),
                &Source::Earlier { start, pods } => {
                    let (from, mut len) = (i - 1, pods.len());
                    while let Some(Source::Earlier { start: next, pods }) = sources.get(i)
                        && *next == start + len
                    {
                        len += pods.len();
                        i += 1;
                    }
                    spans.push(Span::Earlier {
                        start,
                        len,
                        sources: &sources[from..i],
                    });
                }
            }
        }
        spans
    }
}

/// The pods of earlier sources (a run's, when its rows must be derived after all).
fn pods_of<'s, 'p>(sources: &'s [Source<'p>]) -> impl Iterator<Item = &'p Arc<Pod>> + 's {
    sources.iter().flat_map(|source| match *source {
        Source::Earlier { pods, .. } => pods,
        Source::Fresh(pod, _) => std::slice::from_ref(pod),
    })
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

/// Where a job's task rows come from in the earlier snapshot.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Reuse {
    /// Nowhere: a new job, or none of its pods is a version the earlier snapshot had.
    Nothing,
    /// All of them, from this earlier row on: the very same pod versions in the same order.
    Whole(usize),
    /// Some: runs of pods that are the very same versions as consecutive earlier rows (a job
    /// one of whose pods finished or was bound); the others are fresh.
    Runs(SmallVec<[Run; 2]>),
}

/// Pods `pod..pod + len` of a job are the earlier rows `row..row + len`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Run {
    pub pod: usize,
    pub row: usize,
    pub len: usize,
}

/// How far past the last earlier row taken a pod of a changed job is looked for (by address):
/// enough for the pods that left a job between two snapshots, without a scan of the whole job
/// for each of its changed pods (a job of thousands of pods whose versions all changed).
const REUSE_WINDOW: usize = 64;

/// For each new job, where its rows come from in the earlier snapshot. Both job tables are
/// sorted by UID, so the jobs are paired in one merge; a PodGroup that did not change shares its
/// UID with the earlier table (its memoised row's), so most pairs compare one pointer, not text.
/// The pods are then compared, by address, on the pool: a pod that is the very version the
/// earlier snapshot had has the same row.
pub(super) fn earlier_reuse(
    earlier: &TaskTables,
    uids: &[Arc<str>],
    members: &[&[Arc<Pod>]],
) -> Vec<Reuse> {
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
            let Some(e) = e else {
                return Reuse::Nothing;
            };
            let Some(start) = jobs.tasks[e].first().map(|t| t.idx()) else {
                return Reuse::Nothing;
            };
            let Some(rows) = tasks.pod.get(start..start + jobs.tasks[e].len()) else {
                return Reuse::Nothing;
            };
            reuse(rows, pods, start)
        })
        .collect()
}

/// Which of `pods` are the earlier `rows` (which begin at row `start`), in order.
fn reuse(rows: &[Arc<Pod>], pods: &[Arc<Pod>], start: usize) -> Reuse {
    if rows.len() == pods.len() && rows.iter().zip(pods).all(|(a, b)| Arc::ptr_eq(a, b)) {
        return Reuse::Whole(start);
    }
    let mut runs: SmallVec<[Run; 2]> = SmallVec::new();
    let mut from = 0;
    for (i, pod) in pods.iter().enumerate() {
        let mut window = rows[from..].iter().take(REUSE_WINDOW);
        let Some(skipped) = window.position(|p| Arc::ptr_eq(p, pod)) else {
            continue;
        };
        let row = from + skipped;
        match runs.last_mut() {
            Some(r) if r.pod + r.len == i && r.row + r.len == start + row => r.len += 1,
            _ => runs.push(Run {
                pod: i,
                row: start + row,
                len: 1,
            }),
        }
        from = row + 1;
    }
    if runs.is_empty() {
        Reuse::Nothing
    } else {
        Reuse::Runs(runs)
    }
}

/// The sources of a job's rows: its pods as `reuse` says, the others fresh.
pub(super) fn job_sources<'p>(
    pods: &'p [Arc<Pod>],
    reuse: &Reuse,
) -> impl Iterator<Item = Source<'p>> + 'p {
    let fresh = |p| Source::Fresh(p, TaskRow::lent(p));
    let runs: SmallVec<[Run; 2]> = match reuse {
        Reuse::Nothing => SmallVec::new(),
        &Reuse::Whole(row) => smallvec::smallvec![Run {
            pod: 0,
            row,
            len: pods.len(),
        }],
        Reuse::Runs(runs) => runs.clone(),
    };
    let mut next = 0;
    let mut sources: SmallVec<[Source<'p>; 4]> = SmallVec::new();
    for r in runs {
        sources.extend(pods[next..r.pod].iter().map(fresh));
        sources.push(Source::Earlier {
            start: r.row,
            pods: &pods[r.pod..r.pod + r.len],
        });
        next = r.pod + r.len;
    }
    sources.extend(pods[next..].iter().map(fresh));
    sources.into_iter()
}

/// One task column of `rows` rows: `fresh` for rows from a pod, `carry` for values of the
/// earlier table, moved out of it a run at a time when it is owned (earlier rows are taken at
/// increasing positions), else copied. Values of an owned earlier table that no row takes are
/// handed to `unused`.
fn column<T: Clone + Send + Sync + 'static>(
    spans: &[Span],
    rows: Rows,
    earlier: EarlierColumn<T>,
    carry: impl Fn(T) -> T + Sync,
    fresh: impl Fn(&Arc<Pod>, &TaskRow) -> T + Sync,
    unused: &Mutex<Released>,
) -> Vec<T> {
    let derive = |sources| derived(pods_of(sources), &fresh);
    match earlier {
        EarlierColumn::Owned(values) => {
            let total = values.len();
            let mut values = values.into_iter();
            let mut at = 0;
            let mut left = Vec::new();
            let mut out = Vec::with_capacity(rows.count);
            for span in spans {
                match *span {
                    Span::Earlier { start, len, .. } if start >= at && start + len <= total => {
                        left.extend(values.by_ref().take(start - at));
                        out.extend(values.by_ref().take(len).map(&carry));
                        at = start + len;
                    }
                    // Rows are taken in table order; were some asked for out of order, they
                    // are derived again.
                    Span::Earlier { sources, .. } => out.extend(derive(sources)),
                    Span::Fresh(pod, row) => out.push(fresh(pod, row)),
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
        EarlierColumn::Shared(values) => spans
            .par_iter()
            .flat_map_iter(|span| match *span {
                Span::Earlier {
                    start,
                    len,
                    sources,
                } => match values.get(start..start + len) {
                    Some(run) => Either::Left(Either::Left(run.iter().cloned().map(&carry))),
                    None => Either::Left(Either::Right(derive(sources))),
                },
                Span::Fresh(pod, row) => Either::Right(std::iter::once(fresh(pod, row))),
            })
            .collect(),
        // Only fresh rows (a first snapshot): collected by index, with no pieces to join.
        EarlierColumn::None if rows.all_fresh => spans
            .par_iter()
            .map(|span| match *span {
                Span::Fresh(pod, row) => fresh(pod, row),
                Span::Earlier { .. } => unreachable!("all sources are fresh"),
            })
            .collect(),
        EarlierColumn::None => spans
            .par_iter()
            .flat_map_iter(|span| match *span {
                Span::Earlier { sources, .. } => Either::Left(derive(sources)),
                Span::Fresh(pod, row) => Either::Right(std::iter::once(fresh(pod, row))),
            })
            .collect(),
    }
}

/// `column` for plain-data values: the earlier column, owned or shared, is only read, a run at
/// a time in one copy (moving value by value cost more than the values: most columns are a
/// byte or a few). Values that `carry` maps are copied one by one.
fn copied_column<T: Copy + Send + Sync + 'static>(
    spans: &[Span],
    rows: Rows,
    earlier: EarlierColumn<T>,
    carry: Option<&(dyn Fn(T) -> T + Sync)>,
    fresh: impl Fn(&Arc<Pod>, &TaskRow) -> T + Sync,
    unused: &Mutex<Released>,
) -> Vec<T> {
    let owned;
    let values: &[T] = match earlier {
        EarlierColumn::Owned(values) => {
            owned = values;
            &owned
        }
        EarlierColumn::Shared(values) => values,
        EarlierColumn::None => {
            return column(spans, rows, EarlierColumn::None, identity, fresh, unused);
        }
    };
    let mut out = Vec::with_capacity(rows.count);
    for span in spans {
        match *span {
            Span::Earlier {
                start,
                len,
                sources,
            } => match values.get(start..start + len) {
                Some(run) => match carry {
                    None => out.extend_from_slice(run),
                    Some(carry) => out.extend(run.iter().map(|&v| carry(v))),
                },
                None => out.extend(derived(pods_of(sources), &fresh)),
            },
            Span::Fresh(pod, row) => out.push(fresh(pod, row)),
        }
    }
    out
}

/// The rows of `pods` derived from the pods themselves.
fn derived<'a, T>(
    pods: impl Iterator<Item = &'a Arc<Pod>> + 'a,
    fresh: &'a impl Fn(&Arc<Pod>, &TaskRow) -> T,
) -> impl Iterator<Item = T> + 'a {
    pods.map(|pod| fresh(pod, &TaskRow::lent(pod)))
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
    let rows = Rows::of(sources);
    let spans = &Span::of(sources)[..];
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
    let preferred_node_affinity = earlier!(preferred_node_affinity);
    let nominated = earlier!(nominated);
    rayon::scope(|s| {
        let t = &mut t;
        macro_rules! from_row {
            ($($field:ident),*) => {$(
                s.spawn(|_| {
                    let value = |_: &Arc<Pod>, r: &TaskRow| Clone::clone(&r.$field);
                    t.$field = column(spans, rows, $field, identity, value, unused)
                });
            )*};
        }
        macro_rules! copied_from_row {
            ($($field:ident),*) => {$(
                s.spawn(|_| {
                    let value = |_: &Arc<Pod>, r: &TaskRow| r.$field;
                    t.$field = copied_column(spans, rows, $field, None, value, unused)
                });
            )*};
        }
        from_row!(uid, name, namespace, role, resreq);
        copied_from_row!(
            priority,
            preemptable,
            sch_gated,
            status,
            created,
            name_index,
            signature,
            inter_pod,
            preferred_node_affinity,
            nominated
        );
        s.spawn(|_| {
            let empty = |_: &Arc<Pod>, r: &TaskRow| r.resreq.is_empty();
            t.best_effort = copied_column(spans, rows, best_effort, None, empty, unused)
        });
        s.spawn(|_| {
            let carry_node =
                node_ids.map(|ids| move |n: Option<NodeId>| n.and_then(|n| ids[n.idx()]));
            let carry = carry_node.as_ref().map(|c| c as &(dyn Fn(_) -> _ + Sync));
            t.node = copied_column(spans, rows, node, carry, node_of, unused)
        });
        s.spawn(|_| t.pod = column(spans, rows, pod, identity, |p, _| Arc::clone(p), unused));
    });
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pods(n: usize) -> Vec<Arc<Pod>> {
        (0..n).map(|_| Arc::new(Pod::default())).collect()
    }

    fn run(pod: usize, row: usize, len: usize) -> Run {
        Run { pod, row, len }
    }

    #[test]
    fn a_job_with_the_very_same_pod_versions_takes_all_its_earlier_rows() {
        let earlier = pods(3);
        assert_eq!(reuse(&earlier, &earlier.clone(), 10), Reuse::Whole(10));
    }

    #[test]
    fn a_job_that_lost_a_pod_takes_the_rows_of_the_others_in_two_runs() {
        let earlier = pods(5);
        let now = [&earlier[..2], &earlier[3..]].concat();
        let Reuse::Runs(runs) = reuse(&earlier, &now, 100) else {
            panic!("expected runs");
        };
        let expected = [run(0, 100, 2), run(2, 103, 2)];
        assert_eq!(runs.as_slice(), expected);
    }

    #[test]
    fn a_new_pod_version_is_fresh_and_its_neighbours_keep_their_rows() {
        let earlier = pods(4);
        let mut now = earlier.clone();
        now[1] = Arc::new(Pod::default());
        let Reuse::Runs(runs) = reuse(&earlier, &now, 0) else {
            panic!("expected runs");
        };
        let expected = [run(0, 0, 1), run(2, 2, 2)];
        assert_eq!(runs.as_slice(), expected);
        let sources: Vec<Source> = job_sources(&now, &Reuse::Runs(runs)).collect();
        let kinds: Vec<&str> = sources
            .iter()
            .map(|s| match s {
                Source::Earlier { .. } => "earlier",
                Source::Fresh(..) => "fresh",
            })
            .collect();
        assert_eq!(kinds, ["earlier", "fresh", "earlier"]);
        assert_eq!(sources.iter().map(Source::rows).sum::<usize>(), now.len());
    }

    #[test]
    fn plain_data_columns_copy_earlier_runs_map_carried_values_and_derive_the_rest() {
        let pods = pods(4);
        let unused = Mutex::new(Released::default());
        let sources = [
            Source::Earlier {
                start: 2,
                pods: &pods[..2],
            },
            Source::Fresh(&pods[2], TaskRow::lent(&pods[2])),
            Source::Earlier {
                start: 0,
                pods: &pods[3..],
            },
            Source::Earlier {
                start: 9,
                pods: &pods[3..],
            },
        ];
        let rows = Rows::of(&sources);
        let spans = Span::of(&sources);
        let fresh = |_: &Arc<Pod>, _: &TaskRow| -1;
        let earlier = || EarlierColumn::Owned(vec![10, 11, 12, 13]);
        let plain = copied_column(&spans, rows, earlier(), None, fresh, &unused);
        assert_eq!(plain, [12, 13, -1, 10, -1], "out of range: derived again");
        let double = |v: i32| v * 2;
        let carried = copied_column(&spans, rows, earlier(), Some(&double), fresh, &unused);
        assert_eq!(carried, [24, 26, -1, 20, -1]);
        let shared = copied_column(
            &spans,
            rows,
            EarlierColumn::Shared(&[10, 11, 12, 13]),
            None,
            fresh,
            &unused,
        );
        assert_eq!(shared, plain);
    }

    #[test]
    fn earlier_sources_with_consecutive_rows_are_one_run_and_derived_together_when_out_of_range() {
        let pods = pods(6);
        let earlier = |start, range: std::ops::Range<usize>| Source::Earlier {
            start,
            pods: &pods[range],
        };
        let sources = [
            earlier(0, 0..2),
            earlier(2, 2..3),
            Source::Fresh(&pods[3], TaskRow::lent(&pods[3])),
            earlier(3, 4..5),
            earlier(5, 5..6),
        ];
        let spans = Span::of(&sources);
        let shape: Vec<(usize, usize, usize)> = spans
            .iter()
            .map(|span| match span {
                Span::Earlier {
                    start,
                    len,
                    sources,
                } => (*start, *len, sources.len()),
                Span::Fresh(..) => (usize::MAX, 1, 0),
            })
            .collect();
        assert_eq!(
            shape,
            [(0, 3, 2), (usize::MAX, 1, 0), (3, 1, 1), (5, 1, 1)],
            "a fresh source and a gap in the rows end a run"
        );
        let unused = Mutex::new(Released::default());
        let rows = Rows::of(&sources);
        let fresh = |_: &Arc<Pod>, _: &TaskRow| -1;
        let short = || EarlierColumn::Owned(vec![10, 11]);
        let column = copied_column(&spans, rows, short(), None, fresh, &unused);
        assert_eq!(
            column,
            [-1, -1, -1, -1, -1, -1],
            "past the end: every pod derived"
        );
        let owned = || EarlierColumn::Owned((10..16).collect());
        let column = copied_column(&spans, rows, owned(), None, fresh, &unused);
        assert_eq!(column, [10, 11, 12, -1, 13, 15]);
    }

    #[test]
    fn a_job_whose_pods_all_changed_reuses_nothing() {
        assert_eq!(reuse(&pods(3), &pods(3), 0), Reuse::Nothing);
    }

    #[test]
    fn an_earlier_row_further_than_the_window_past_the_last_taken_is_not_looked_for() {
        let earlier = pods(REUSE_WINDOW + 2);
        let now = vec![earlier[REUSE_WINDOW + 1].clone()];
        assert_eq!(reuse(&earlier, &now, 0), Reuse::Nothing);
        let near = vec![earlier[REUSE_WINDOW - 1].clone()];
        let expected = run(0, REUSE_WINDOW - 1, 1);
        assert_eq!(
            reuse(&earlier, &near, 0),
            Reuse::Runs(smallvec::smallvec![expected])
        );
    }
}
