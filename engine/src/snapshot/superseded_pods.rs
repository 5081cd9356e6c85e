//! Letting kept task tables go of the pod versions the cache is about to replace.
//!
//! A cache keeps the last snapshot's task tables so the next build can take the rows of
//! unchanged pods (`earlier_tasks`), and a row holds its pod. When a cycle binds many pods, the
//! cache makes a new version of each while the kept rows still hold the old one: both would live
//! until the next snapshot, and on `large`'s first cycle (50k binds) that would set the
//! process's peak memory. A row whose pod is about to be replaced can never be taken again (rows
//! are matched to pods by address), so it may as well hold nothing of it.

use std::sync::{Arc, LazyLock};

use super::TaskTables;
use crate::api::Pod;
use crate::model::TaskId;

/// What a row holds once its pod was let go of: a pod no cache holds, so no row holding it is
/// ever taken as a current pod's.
static LET_GO: LazyLock<Arc<Pod>> = LazyLock::new(|| Arc::new(Pod::default()));

impl TaskTables {
    /// Makes the task rows `rows` hold nothing of their pods (`Decisions::replaced_tasks`, the
    /// pods a cycle's decisions replace), so each old version is freed as soon as its other
    /// holders let go; the next build derives those rows afresh, as it would a replaced pod's.
    /// Returns false, and changes nothing, while something else (a snapshot) holds the task
    /// table too.
    pub fn let_go_of(&mut self, rows: &[TaskId]) -> bool {
        let Some(tasks) = Arc::get_mut(&mut self.tasks) else {
            return false;
        };
        for t in rows {
            if let Some(pod) = tasks.pod.get_mut(t.idx()) {
                *pod = Arc::clone(&LET_GO);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::SnapshotBuilder;

    fn pod(name: &str) -> Arc<Pod> {
        let mut pod = Pod::default();
        pod.metadata.name = name.into();
        pod.metadata.namespace = "ns".into();
        pod.metadata.uid = format!("uid-{name}");
        Arc::new(pod)
    }

    #[test]
    fn a_let_go_row_frees_its_pod_and_the_other_rows_keep_theirs() {
        let (a, b) = (pod("a"), pod("b"));
        let snap = SnapshotBuilder::new("q")
            .pod(a.clone())
            .pod(b.clone())
            .build();
        let mut tables = snap.task_tables();
        let a_row = TaskId(
            (0..2)
                .find(|&t| Arc::ptr_eq(&snap.tasks.pod[t], &a))
                .unwrap() as u32,
        );
        let a_held = Arc::downgrade(&a);
        drop((snap, a));
        assert!(tables.let_go_of(&[a_row]));
        assert!(a_held.upgrade().is_none(), "the let-go pod is freed");
        assert_eq!(
            Arc::strong_count(&b),
            2,
            "the other row still holds its pod"
        );
        assert!(!Arc::ptr_eq(&tables.tasks.pod[a_row.idx()], &b));
    }

    #[test]
    fn rows_a_snapshot_still_holds_are_kept() {
        let a = pod("a");
        let snap = SnapshotBuilder::new("q").pod(a.clone()).build();
        let mut tables = snap.task_tables();
        assert!(!tables.let_go_of(&[TaskId(0)]));
        assert!(Arc::ptr_eq(&tables.tasks.pod[0], &a));
        drop(snap);
        assert!(
            tables.let_go_of(&[TaskId(0), TaskId(7)]),
            "a row past the end is ignored"
        );
        assert_eq!(Arc::strong_count(&a), 1);
    }
}
