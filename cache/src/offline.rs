//! The offline stand-in for kubelets and the API server between two simulated cycles.

use crate::ClusterState;
use crate::state::prepare_pods;

impl ClusterState {
    /// What the cluster would do between cycles: bound pods start (phase Running) and pods
    /// being deleted disappear. The started pods are new versions, prepared as arrivals are.
    pub fn complete_offline(&mut self) {
        self.pods
            .retain(|p| p.metadata.deletion_timestamp.is_none());
        let started = self.pods.change_where(
            |pod| {
                let pending = pod.status.phase.is_empty() || pod.status.phase == "Pending";
                pending && !pod.spec.node_name.is_empty()
            },
            |pod| pod.status.phase = "Running".into(),
        );
        prepare_pods(&started);
    }
}

#[cfg(test)]
mod tests {
    use tephra_engine::api::{ClusterObject, Pod, Time};

    use crate::ClusterState;

    fn pod(name: &str, phase: &str, node: &str, deleting: bool) -> ClusterObject {
        let mut p = Pod::default();
        p.metadata.namespace = "ns".into();
        p.metadata.name = name.into();
        p.status.phase = phase.into();
        p.spec.node_name = node.into();
        p.metadata.deletion_timestamp = deleting.then_some(Time(1));
        ClusterObject::Pod(Box::new(p))
    }

    #[test]
    fn bound_pods_start_running() {
        let mut s = ClusterState::from_objects([
            pod("bound", "Pending", "n1", false),
            pod("waiting", "Pending", "", false),
        ]);
        s.complete_offline();
        assert_eq!(s.pod("ns", "bound").unwrap().status.phase, "Running");
        assert_eq!(s.pod("ns", "waiting").unwrap().status.phase, "Pending");
    }

    #[test]
    fn deleting_pods_disappear() {
        let mut s = ClusterState::from_objects([
            pod("gone", "Running", "n1", true),
            pod("kept", "Running", "n1", false),
        ]);
        s.complete_offline();
        assert!(s.pod("ns", "gone").is_none());
        assert!(s.pod("ns", "kept").is_some());
    }

    #[test]
    fn finished_pods_keep_their_phase() {
        let mut s = ClusterState::from_objects([pod("done", "Succeeded", "n1", false)]);
        s.complete_offline();
        assert_eq!(s.pod("ns", "done").unwrap().status.phase, "Succeeded");
    }
}
