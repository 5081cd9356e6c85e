//! `conformance` (Volcano: pkg/scheduler/plugins/conformance/conformance.go): never evict critical system pods.

use crate::config::{ArgumentError, Arguments};
use crate::framework::{EvictionContext, Plugin, SessionState};
use crate::model::TaskId;

/// The plugin (no arguments).
#[derive(Debug, Default)]
pub struct Conformance;

/// Builds the plugin.
pub fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Conformance))
}

fn evictable(ssn: &SessionState, candidates: &[TaskId]) -> Vec<TaskId> {
    candidates
        .iter()
        .copied()
        .filter(|t| {
            let pod = &ssn.snap.tasks.pod[t.idx()];
            let class = pod.spec.priority_class_name.as_str();
            class != "system-cluster-critical"
                && class != "system-node-critical"
                && pod.metadata.namespace != "kube-system"
        })
        .collect()
}

impl Plugin for Conformance {
    fn name(&self) -> &str {
        "conformance"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn preemptable(
        &self,
        ssn: &SessionState,
        _: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(evictable(ssn, candidates))
    }

    fn reclaimable(
        &self,
        ssn: &SessionState,
        _: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(evictable(ssn, candidates))
    }

    fn unified_evictable(
        &self,
        ssn: &SessionState,
        _: &EvictionContext,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(evictable(ssn, candidates))
    }
}
