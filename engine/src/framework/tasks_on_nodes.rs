//! Each node's tasks at session open, in task order, listed on the pool.
//!
//! The snapshot's tasks come by job, so a node's tasks lie all over the table. Listing them one
//! task after another on one thread was a tenth of a steady large open. Here the table is cut
//! into one run per thread; each run counts its tasks per node and writes them into one flat
//! array of its own, node by node (a counting sort); then each node's list joins its slices of
//! the runs, in run order. Every run is in task order and the runs follow one another, so the
//! lists are the same at any thread count.

use rayon::prelude::*;

use super::NodeTasks;
use crate::model::{NodeId, TaskId, TaskStatus};

/// One run's tasks per node: node `n`'s are `tasks[starts[n]..starts[n + 1]]`.
struct RunLists {
    starts: Vec<u32>,
    tasks: Vec<TaskId>,
}

/// The node a snapshot task with `node` and `status` is accounted on: its own, unless it has
/// completed.
pub(super) fn accounted_node(node: Option<NodeId>, status: TaskStatus) -> Option<NodeId> {
    node.filter(|_| !status.is_completed())
}

/// The tasks on each of `nodes` nodes, in task order: those with an `accounted_node` (`node`
/// and `status` are the task columns).
pub(super) fn tasks_on_nodes(
    node: &[Option<NodeId>],
    status: &[TaskStatus],
    nodes: usize,
) -> Vec<NodeTasks> {
    let run = node.len().div_ceil(rayon::current_num_threads()).max(1);
    let runs: Vec<RunLists> = (0..node.len().div_ceil(run))
        .into_par_iter()
        .map(|i| {
            let rows = i * run..((i + 1) * run).min(node.len());
            run_lists(rows, node, status, nodes)
        })
        .collect();
    (0..nodes)
        .into_par_iter()
        .map(|n| {
            let slices = runs
                .iter()
                .map(|r| &r.tasks[r.starts[n] as usize..r.starts[n + 1] as usize]);
            let mut list = NodeTasks::with_capacity(slices.clone().map(<[_]>::len).sum());
            for slice in slices {
                list.extend_from_slice(slice);
            }
            list
        })
        .collect()
}

/// The tasks of `rows` per node.
fn run_lists(
    rows: std::ops::Range<usize>,
    node: &[Option<NodeId>],
    status: &[TaskStatus],
    nodes: usize,
) -> RunLists {
    let placed = || {
        rows.clone()
            .filter_map(|t| accounted_node(node[t], status[t]).map(|n| (n.idx(), TaskId(t as u32))))
    };
    let mut starts = vec![0u32; nodes + 1];
    placed().for_each(|(n, _)| starts[n + 1] += 1);
    for n in 0..nodes {
        starts[n + 1] += starts[n];
    }
    let mut next = starts.clone();
    let mut tasks = vec![TaskId(0); starts[nodes] as usize];
    placed().for_each(|(n, t)| {
        tasks[next[n] as usize] = t;
        next[n] += 1;
    });
    RunLists { starts, tasks }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists one task after another, as a single thread would make them.
    fn listed_in_order(
        node: &[Option<NodeId>],
        status: &[TaskStatus],
        nodes: usize,
    ) -> Vec<Vec<TaskId>> {
        let mut lists = vec![Vec::new(); nodes];
        for (t, (n, s)) in node.iter().zip(status).enumerate() {
            if let Some(n) = n
                && !s.is_completed()
            {
                lists[n.idx()].push(TaskId(t as u32));
            }
        }
        lists
    }

    #[test]
    fn each_node_lists_its_unfinished_tasks_in_task_order_at_any_thread_count() {
        let nodes = 7;
        let statuses = [
            TaskStatus::Running,
            TaskStatus::Succeeded,
            TaskStatus::Bound,
            TaskStatus::Failed,
            TaskStatus::Releasing,
        ];
        let node: Vec<Option<NodeId>> = (0..1000u32)
            .map(|t| (t % 11 != 0).then_some(NodeId((t * 7 + t / 13) % nodes as u32)))
            .collect();
        let status: Vec<TaskStatus> = (0..1000).map(|t| statuses[t % 5]).collect();
        let expected = listed_in_order(&node, &status, nodes);
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let lists = pool.install(|| tasks_on_nodes(&node, &status, nodes));
            let lists: Vec<Vec<TaskId>> = lists.iter().map(|l| l.to_vec()).collect();
            assert_eq!(lists, expected, "{threads} threads");
        }
    }

    #[test]
    fn no_tasks_leave_every_node_without_a_list() {
        let lists = tasks_on_nodes(&[], &[], 3);
        assert_eq!(lists.len(), 3);
        assert!(lists.iter().all(|l| l.is_empty()));
    }
}
