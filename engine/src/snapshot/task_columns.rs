//! The task table's columns, row by row from where each row comes from: the earlier snapshot's
//! table for pods that did not change (moved out of it when nothing else holds it), the pods'
//! own rows for the others.
//!
//! In a steady cluster nine jobs in ten are unchanged from one cycle to the next, and most of the
//! others lost or gained one pod, so most rows are moved rather than read from 400k scattered pod
//! memos and their node looked up again. The rows that are read from memos are read once, row by
//! row, and the columns then put together from runs of earlier rows and runs of fresh ones.

use std::cmp::Ordering;
use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use smallvec::SmallVec;

use super::moved_out::MovedOut;
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

/// A stretch of the new table's rows: the earlier table's rows `start..start + len`, taken as
/// they are, or the next `len` of the fresh rows (`fresh_columns`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Piece {
    Earlier { start: usize, len: usize },
    Fresh { len: usize },
}

/// A row not taken from the earlier table: a fresh source's, or one derived again from its pod.
enum FreshRow<'s, 'p> {
    Given(&'p Arc<Pod>, &'s TaskRow),
    Derived(&'p Arc<Pod>),
}

/// How the new table is put together: its pieces in order, and the rows the fresh pieces take,
/// in order. Consecutive earlier sources whose rows follow one another are one piece (the 50k
/// unchanged jobs of a steady large cluster are a few thousand). An owned earlier table gives
/// its rows up by moving them out, so only at increasing positions; rows that cannot be taken
/// (out of order, or past the earlier table's end) are derived again from their pods.
struct Plan<'s, 'p> {
    pieces: Vec<Piece>,
    fresh: Vec<FreshRow<'s, 'p>>,
    rows: usize,
}

impl<'s, 'p> Plan<'s, 'p> {
    /// The plan for `sources` over the `earlier` table.
    fn of(sources: &'s [Source<'p>], earlier: &Earlier) -> Self {
        let mut plan = Plan {
            pieces: Vec::new(),
            fresh: Vec::new(),
            rows: 0,
        };
        // The first row of an owned earlier table not yet moved past.
        let mut at = 0;
        let mut i = 0;
        while let Some(source) = sources.get(i) {
            i += 1;
            match source {
                Source::Fresh(pod, row) => plan.push_fresh(FreshRow::Given(pod, row)),
                &Source::Earlier { start, pods } => {
                    let (from, mut len) = (i - 1, pods.len());
                    while let Some(Source::Earlier { start: next, pods }) = sources.get(i)
                        && *next == start + len
                    {
                        len += pods.len();
                        i += 1;
                    }
                    let taken = match earlier {
                        Earlier::Owned(t) => start >= at && start + len <= t.len(),
                        Earlier::Shared(t) => start + len <= t.len(),
                        Earlier::None => false,
                    };
                    if taken {
                        plan.pieces.push(Piece::Earlier { start, len });
                        plan.rows += len;
                        at = start + len;
                    } else {
                        for pod in pods_of(&sources[from..i]) {
                            plan.push_fresh(FreshRow::Derived(pod));
                        }
                    }
                }
            }
        }
        plan
    }

    fn push_fresh(&mut self, row: FreshRow<'s, 'p>) {
        self.fresh.push(row);
        self.rows += 1;
        match self.pieces.last_mut() {
            Some(Piece::Fresh { len }) => *len += 1,
            _ => self.pieces.push(Piece::Fresh { len: 1 }),
        }
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
    /// All of them: the very same pod versions in the same order as earlier job `job`'s, whose
    /// rows begin at earlier row `row`.
    Whole { job: usize, row: usize },
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
            reuse(rows, pods, e, start)
        })
        .collect()
}

/// Which of `pods` are the earlier `rows` of job `job` (which begin at row `start`), in order.
fn reuse(rows: &[Arc<Pod>], pods: &[Arc<Pod>], job: usize, start: usize) -> Reuse {
    if rows.len() == pods.len() && rows.iter().zip(pods).all(|(a, b)| Arc::ptr_eq(a, b)) {
        return Reuse::Whole { job, row: start };
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
        &Reuse::Whole { row, .. } => smallvec::smallvec![Run {
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

/// Calls `$apply!` with every row column of `TaskTable`: all but the job and sub-job, which
/// are set once the rows are placed.
macro_rules! row_columns {
    ($apply:ident) => {
        $apply!(
            uid,
            name,
            namespace,
            role,
            resreq,
            best_effort,
            priority,
            preemptable,
            sch_gated,
            status,
            node,
            created,
            name_index,
            signature,
            inter_pod,
            preferred_node_affinity,
            nominated,
            claims,
            pod
        )
    };
}

/// Fresh rows one task of the pool reads into one piece.
const FRESH_CHUNK: usize = 4096;

/// Column `$field`'s value for `$row`, a pod and its row (the row's own field, unless named
/// here); the pod's node is looked up in `$nodes`.
macro_rules! fresh_value {
    ($row:ident, $nodes:ident, best_effort) => {
        $row.1.resreq.is_empty()
    };
    ($row:ident, $nodes:ident, node) => {
        node_of($row.0, $nodes)
    };
    ($row:ident, $nodes:ident, pod) => {
        Arc::clone($row.0)
    };
    ($row:ident, $nodes:ident, $field:ident) => {
        Clone::clone(&$row.1.$field)
    };
}

/// The fresh rows' values, column by column, in pieces of consecutive rows. When the table has
/// earlier rows, each fresh row is read once, row by row, a piece per task of the pool: the rows
/// lie in the pods' memos all over the heap, and a pass per column would read each row once per
/// column. The columns then take the pieces' values in order, without joining them first. When
/// every row is fresh (a first build), each column is collected on the pool by index instead, in
/// one piece: row-by-row pieces of the whole table would take memory from what open reuses.
fn fresh_columns(rows: &[FreshRow], nodes: &NodeTable, all_fresh: bool) -> Vec<TaskTable> {
    if all_fresh {
        let mut t = TaskTable::default();
        rayon::scope(|s| {
            let t = &mut t;
            macro_rules! by_column {
                ($($field:ident),*) => {$(
                    s.spawn(|_| {
                        t.$field = rows
                            .par_iter()
                            .map(|row| match *row {
                                FreshRow::Given(pod, r) => {
                                    let row = (pod, r);
                                    fresh_value!(row, nodes, $field)
                                }
                                FreshRow::Derived(pod) => {
                                    let row = (pod, &*TaskRow::lent(pod));
                                    fresh_value!(row, nodes, $field)
                                }
                            })
                            .collect()
                    });
                )*};
            }
            row_columns!(by_column);
        });
        return vec![t];
    }
    rows.par_chunks(FRESH_CHUNK)
        .map(|chunk| {
            let mut t = TaskTable::default();
            reserve_rows(&mut t, chunk.len());
            for row in chunk {
                match *row {
                    FreshRow::Given(pod, r) => push_row(&mut t, pod, r, nodes),
                    FreshRow::Derived(pod) => push_row(&mut t, pod, &TaskRow::lent(pod), nodes),
                }
            }
            t
        })
        .collect()
}

fn push_row(t: &mut TaskTable, pod: &Arc<Pod>, r: &TaskRow, nodes: &NodeTable) {
    let row = (pod, r);
    macro_rules! push {
        ($($field:ident),*) => {$( t.$field.push(fresh_value!(row, nodes, $field)); )*};
    }
    row_columns!(push);
}

/// The node `pod` is bound to, when it is in the snapshot.
fn node_of(pod: &Pod, nodes: &NodeTable) -> Option<NodeId> {
    let name = &pod.spec.node_name;
    if name.is_empty() {
        None
    } else {
        nodes.id(name)
    }
}

/// Room for `n` more rows in each row column, so none grows by copying itself.
fn reserve_rows(t: &mut TaskTable, n: usize) {
    macro_rules! reserve {
        ($($column:ident),*) => {$( t.$column.reserve_exact(n); )*};
    }
    row_columns!(reserve);
}

/// A column's fresh values in pieces, as one column: a single piece as it is.
fn joined<T>(mut fresh: Vec<Vec<T>>) -> Vec<T> {
    match fresh.len() {
        1 => fresh.swap_remove(0),
        _ => fresh.into_iter().flatten().collect(),
    }
}

/// One column of `rows` rows: the pieces in order, each fresh one moved from `fresh` and each
/// earlier one written by `earlier(out, start, len)`. The one walk over the pieces that every
/// kind of earlier column shares.
fn assemble<T>(
    pieces: &[Piece],
    rows: usize,
    fresh: Vec<Vec<T>>,
    mut earlier: impl FnMut(&mut Vec<T>, usize, usize),
) -> Vec<T> {
    let mut out = Vec::with_capacity(rows);
    let mut fresh = fresh.into_iter().flatten();
    for piece in pieces {
        match *piece {
            Piece::Earlier { start, len } => earlier(&mut out, start, len),
            Piece::Fresh { len } => out.extend(fresh.by_ref().take(len)),
        }
    }
    out
}

/// One column of `rows` rows: the earlier pieces moved out of the owned earlier column a run at
/// a time, each run in one copy (`MovedOut`; its values no piece takes are handed to `unused`,
/// to be freed between cycles), or cloned from a shared one; the fresh pieces moved from
/// `fresh`, in order.
fn column<T: Clone + Send + 'static>(
    pieces: &[Piece],
    rows: usize,
    earlier: EarlierColumn<T>,
    fresh: Vec<Vec<T>>,
    unused: &Mutex<Released>,
) -> Vec<T> {
    match earlier {
        EarlierColumn::None => joined(fresh),
        EarlierColumn::Owned(values) => {
            let mut values = MovedOut::new(values);
            let mut left = Vec::new();
            let out = assemble(pieces, rows, fresh, |out, start, len| {
                values.move_to(start, &mut left);
                values.move_to(start + len, out);
            });
            values.move_to(values.len(), &mut left);
            unused
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Box::new(left));
            out
        }
        EarlierColumn::Shared(values) => assemble(pieces, rows, fresh, |out, start, len| {
            out.extend_from_slice(&values[start..start + len]);
        }),
    }
}

/// `column` for plain-data values: the earlier column, owned or shared, is only read, a run at
/// a time in one copy (moving value by value cost more than the values: most columns are a
/// byte or a few). `carry` maps the earlier values, when given.
fn copied_column<T: Copy + Send + Sync + 'static>(
    pieces: &[Piece],
    rows: usize,
    earlier: EarlierColumn<T>,
    carry: Option<&(dyn Fn(T) -> T + Sync)>,
    fresh: Vec<Vec<T>>,
) -> Vec<T> {
    let owned;
    let values: &[T] = match earlier {
        EarlierColumn::Owned(values) => {
            owned = values;
            &owned
        }
        EarlierColumn::Shared(values) => values,
        EarlierColumn::None => return joined(fresh),
    };
    assemble(pieces, rows, fresh, |out, start, len| {
        let run = &values[start..start + len];
        match carry {
            None => out.extend_from_slice(run),
            Some(carry) => out.extend(run.iter().map(|&v| carry(v))),
        }
    })
}

/// The task table's columns from `sources`: the fresh rows read once on the pool, then every
/// column put together from its pieces, all at once on the pool. `node_ids` maps the earlier
/// snapshot's node ids to this one's (`None`: the node table is the same).
pub(super) fn task_columns(
    sources: &[Source],
    nodes: &NodeTable,
    mut earlier: Earlier,
    node_ids: Option<&[Option<NodeId>]>,
    unused: &Mutex<Released>,
) -> TaskTable {
    let plan = Plan::of(sources, &earlier);
    let all_fresh = matches!(earlier, Earlier::None);
    let mut fresh = fresh_columns(&plan.fresh, nodes, all_fresh);
    macro_rules! fresh {
        ($field:ident) => {
            fresh
                .iter_mut()
                .map(|piece| std::mem::take(&mut piece.$field))
                .collect::<Vec<_>>()
        };
    }
    let (pieces, rows) = (&plan.pieces[..], plan.rows);
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
    let mut t = TaskTable::default();
    rayon::scope(|s| {
        let t = &mut t;
        macro_rules! moved {
            ($($field:ident),*) => {$(
                let (earlier_values, fresh_values) =
                    (earlier!($field), fresh!($field));
                s.spawn(|_| {
                    t.$field = column(pieces, rows, earlier_values, fresh_values, unused)
                });
            )*};
        }
        macro_rules! copied {
            ($($field:ident),*) => {$(
                let (earlier_values, fresh_values) =
                    (earlier!($field), fresh!($field));
                s.spawn(|_| {
                    t.$field = copied_column(pieces, rows, earlier_values, None, fresh_values)
                });
            )*};
        }
        moved!(uid, name, namespace, role, resreq, pod);
        copied!(
            best_effort,
            priority,
            preemptable,
            sch_gated,
            status,
            created,
            name_index,
            signature,
            inter_pod,
            preferred_node_affinity,
            nominated,
            claims
        );
        let (earlier_nodes, fresh_nodes) = (earlier!(node), fresh!(node));
        s.spawn(|_| {
            let carry_node =
                node_ids.map(|ids| move |n: Option<NodeId>| n.and_then(|n| ids[n.idx()]));
            let carry = carry_node.as_ref().map(|c| c as &(dyn Fn(_) -> _ + Sync));
            t.node = copied_column(pieces, rows, earlier_nodes, carry, fresh_nodes)
        });
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

    /// An earlier table of `rows` rows (only its length matters to a plan).
    fn table(rows: usize) -> TaskTable {
        TaskTable {
            uid: vec![Arc::from(""); rows],
            ..Default::default()
        }
    }

    /// `table(rows)`, owned.
    fn owned(rows: usize) -> Earlier<'static> {
        Earlier::Owned(Box::new(table(rows)))
    }

    #[test]
    fn a_job_with_the_very_same_pod_versions_takes_all_its_earlier_rows() {
        let earlier = pods(3);
        assert_eq!(
            reuse(&earlier, &earlier.clone(), 3, 10),
            Reuse::Whole { job: 3, row: 10 }
        );
    }

    #[test]
    fn a_job_that_lost_a_pod_takes_the_rows_of_the_others_in_two_runs() {
        let earlier = pods(5);
        let now = [&earlier[..2], &earlier[3..]].concat();
        let Reuse::Runs(runs) = reuse(&earlier, &now, 0, 100) else {
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
        let Reuse::Runs(runs) = reuse(&earlier, &now, 0, 0) else {
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
        let plan = Plan::of(&sources, &owned(4));
        assert_eq!(plan.rows, now.len());
    }

    /// The pods a plan reads fresh, as indexes into `pods`, and whether each is a fresh
    /// source's own row ("given") or derived again.
    fn fresh_of(plan: &Plan, pods: &[Arc<Pod>]) -> Vec<(usize, &'static str)> {
        let index = |p: &Arc<Pod>| pods.iter().position(|q| Arc::ptr_eq(p, q)).unwrap();
        plan.fresh
            .iter()
            .map(|row| match row {
                FreshRow::Given(p, _) => (index(p), "given"),
                FreshRow::Derived(p) => (index(p), "derived"),
            })
            .collect()
    }

    #[test]
    fn an_owned_earlier_table_gives_rows_only_in_order_a_shared_one_in_any_and_the_rest_are_read_afresh()
     {
        let pods = pods(4);
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
        let owned = Plan::of(&sources, &owned(4));
        use Piece::{Earlier, Fresh};
        assert_eq!(
            owned.pieces,
            [Earlier { start: 2, len: 2 }, Fresh { len: 3 }],
            "row 0 comes after row 3 was moved past, row 9 is past the end"
        );
        assert_eq!(
            fresh_of(&owned, &pods),
            [(2, "given"), (3, "derived"), (3, "derived")]
        );
        // The fresh values in two pieces, as the pool reads them.
        let fresh = vec![vec![-1, -2], vec![-3]];
        let earlier = || EarlierColumn::Owned(vec![10, 11, 12, 13]);
        let plain = copied_column(&owned.pieces, owned.rows, earlier(), None, fresh.clone());
        assert_eq!(plain, [12, 13, -1, -2, -3]);
        let four = table(4);
        let shared = Plan::of(&sources, &super::Earlier::Shared(&four));
        assert_eq!(
            shared.pieces,
            [
                Earlier { start: 2, len: 2 },
                Fresh { len: 1 },
                Earlier { start: 0, len: 1 },
                Fresh { len: 1 }
            ]
        );
        let values = [10, 11, 12, 13];
        let double = |v: i32| v * 2;
        let carried = copied_column(
            &shared.pieces,
            shared.rows,
            EarlierColumn::Shared(&values),
            Some(&double),
            vec![vec![-1], vec![-2]],
        );
        assert_eq!(carried, [24, 26, -1, 20, -2]);
        let none = Plan::of(&sources, &super::Earlier::None);
        assert_eq!(none.pieces, [Fresh { len: 5 }]);
        let all_fresh = copied_column(&none.pieces, none.rows, EarlierColumn::None, None, fresh);
        assert_eq!(all_fresh, [-1, -2, -3]);
    }

    #[test]
    fn earlier_sources_with_consecutive_rows_are_one_piece_and_read_afresh_together_when_out_of_range()
     {
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
        use Piece::{Earlier, Fresh};
        let whole = Plan::of(&sources, &owned(6));
        assert_eq!(
            whole.pieces,
            [
                Earlier { start: 0, len: 3 },
                Fresh { len: 1 },
                Earlier { start: 3, len: 1 },
                Earlier { start: 5, len: 1 }
            ],
            "a fresh source and a gap in the rows end a piece"
        );
        let column = copied_column(
            &whole.pieces,
            whole.rows,
            EarlierColumn::Owned((10..16).collect()),
            None,
            vec![vec![-1]],
        );
        assert_eq!(column, [10, 11, 12, -1, 13, 15]);
        let short = Plan::of(&sources, &owned(2));
        assert_eq!(
            short.pieces,
            [Fresh { len: 6 }],
            "past the end: every pod read"
        );
        let order: Vec<usize> = fresh_of(&short, &pods).into_iter().map(|f| f.0).collect();
        assert_eq!(order, [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn moved_columns_take_earlier_runs_and_fresh_values_in_order_and_release_the_rest() {
        use Piece::{Earlier, Fresh};
        let pieces = [Earlier { start: 1, len: 2 }, Fresh { len: 1 }];
        let text = |s: &str| s.to_string();
        let earlier = EarlierColumn::Owned(vec![text("a"), text("b"), text("c"), text("d")]);
        let unused = Mutex::new(Released::default());
        let out = column(&pieces, 3, earlier, vec![vec![text("x")]], &unused);
        assert_eq!(out, ["b", "c", "x"]);
        assert_eq!(
            unused.lock().unwrap().0.len(),
            1,
            "a and d, to be freed later"
        );
        let values = [text("a"), text("b"), text("c")];
        let shared = column(
            &pieces,
            3,
            EarlierColumn::Shared(&values),
            vec![Vec::new(), vec![text("y")]],
            &unused,
        );
        assert_eq!(shared, ["b", "c", "y"]);
    }

    #[test]
    fn fresh_rows_give_the_same_columns_read_row_by_row_in_pieces_or_column_by_column() {
        let pods: Vec<Arc<Pod>> = (0..FRESH_CHUNK + 3)
            .map(|i| {
                let mut pod = Pod::default();
                pod.metadata.name = format!("p-{i}");
                Arc::new(pod)
            })
            .collect();
        let own_rows: Vec<Arc<TaskRow>> = pods.iter().map(|p| TaskRow::of(p)).collect();
        let rows: Vec<FreshRow> = pods
            .iter()
            .zip(&own_rows)
            .enumerate()
            .map(|(i, (p, r))| match i % 2 {
                0 => FreshRow::Derived(p),
                _ => FreshRow::Given(p, r),
            })
            .collect();
        let nodes = NodeTable::default();
        // Each row as text, from the pieces in order.
        let texts = |pieces: &[TaskTable]| -> Vec<String> {
            pieces
                .iter()
                .flat_map(|t| {
                    (0..t.len()).map(move |i| {
                        format!(
                            "{} {:?} {:?} {:?} {:?} {:p}",
                            t.name[i], t.uid[i], t.resreq[i], t.status[i], t.node[i], t.pod[i]
                        )
                    })
                })
                .collect()
        };
        let (by_row, by_column) = (
            fresh_columns(&rows, &nodes, false),
            fresh_columns(&rows, &nodes, true),
        );
        assert_eq!((by_row.len(), by_column.len()), (2, 1), "pieces");
        assert_eq!(texts(&by_row), texts(&by_column));
        let in_order = by_column[0]
            .pod
            .iter()
            .zip(&pods)
            .all(|(a, b)| Arc::ptr_eq(a, b));
        assert!(in_order && by_column[0].len() == pods.len());
    }

    #[test]
    fn a_job_whose_pods_all_changed_reuses_nothing() {
        assert_eq!(reuse(&pods(3), &pods(3), 0, 0), Reuse::Nothing);
    }

    #[test]
    fn an_earlier_row_further_than_the_window_past_the_last_taken_is_not_looked_for() {
        let earlier = pods(REUSE_WINDOW + 2);
        let now = vec![earlier[REUSE_WINDOW + 1].clone()];
        assert_eq!(reuse(&earlier, &now, 0, 0), Reuse::Nothing);
        let near = vec![earlier[REUSE_WINDOW - 1].clone()];
        let expected = run(0, REUSE_WINDOW - 1, 1);
        assert_eq!(
            reuse(&earlier, &near, 0, 0),
            Reuse::Runs(smallvec::smallvec![expected])
        );
    }
}
