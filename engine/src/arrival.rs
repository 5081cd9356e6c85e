//! Work done once per object version when the object arrives, so the cycle finds it done.
//!
//! Everything a cycle derives from one pod alone (its task row, its parsed kube terms) is kept in
//! the pod's memo, a node's snapshot row in the node's and a PodGroup's job row in the
//! PodGroup's. The cache calls `prepare_pod`, `prepare_node` and `prepare_pod_group` as objects
//! come in, off the cycle's critical path; an object it did not prepare
//! is derived by the snapshot or the plugins that need it, with the same result.
//!
//! A pod's memo holds its task row, its parsed kube terms and, while it is pending, its
//! NodeAffinity PreFilter answer; a node's holds its node row; a PodGroup's its job row, whose UID
//! the job table shares, so a snapshot pairs a job with its earlier self by pointer. The cache
//! lends its objects to `SnapshotBuilder` and the rows are lent from the memos (`Memo::lend`), so a
//! snapshot touches no reference count per pod.

use crate::api::{Node, Pod, PodGroup};
use crate::plugins::k8s::node_affinity;
use crate::plugins::k8s::pod_info::PodInfo;
use crate::snapshot::{prepare_job_row, prepare_node_row, prepare_task_row};

/// Derives and memoises what the snapshot and the built-in plugins read from `pod`; for a pod
/// still to be placed, also its NodeAffinity PreFilter answer.
pub fn prepare_pod(pod: &Pod) {
    prepare_task_row(pod);
    pod.memo.get_or_init(|| PodInfo::new(pod));
    if pod.spec.node_name.is_empty() {
        let _ = node_affinity::pre_filter_memoised(pod);
    }
}

/// Derives and memoises the PodGroup's job row.
pub fn prepare_pod_group(pg: &PodGroup) {
    prepare_job_row(pg);
}

/// Derives and memoises the node's snapshot row.
pub fn prepare_node(node: &Node) {
    prepare_node_row(node);
}
