//! NUMA sets the scheduler chose for pods it placed, held on their nodes until each node's
//! Numatopology reports the pods (Volcano: pkg/scheduler/api/node_info.go,
//! `UnassignedNumaPods` and RefreshNumaSchedulerInfoByCrd): the resource exporter reports what
//! the kubelet assigned some time after the bind, and until then the next cycles must not hand
//! the same CPUs out again.

use std::collections::BTreeMap;

use tephra_engine::api::{NumaSets, Numatopology};
use tephra_engine::framework::NumaBooking;

/// A pod as Volcano's `PodMeta` names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct PodMeta {
    uid: String,
    name: String,
    namespace: String,
}

/// Per node name, the sets each pod holds.
#[derive(Debug, Clone, Default)]
pub(crate) struct NumaBookings {
    by_node: BTreeMap<String, BTreeMap<PodMeta, NumaSets>>,
}

impl NumaBookings {
    /// Holds the sets of a pod placed this cycle (a later booking of the pod replaces it).
    pub(crate) fn add(&mut self, b: &NumaBooking) {
        let meta = PodMeta {
            uid: b.uid.to_string(),
            name: b.name.to_string(),
            namespace: b.namespace.to_string(),
        };
        self.by_node
            .entry(b.node.clone())
            .or_default()
            .insert(meta, b.sets.clone());
    }

    /// Lets go of what a deleted pod held (a delete event names the pod by namespace and
    /// name; a later pod of that name cannot have been booked before this one was deleted).
    pub(crate) fn forget_pod(&mut self, namespace: &str, name: &str) {
        for pods in self.by_node.values_mut() {
            pods.retain(|m, _| !(m.namespace == namespace && m.name == name));
        }
        self.by_node.retain(|_, pods| !pods.is_empty());
    }

    /// What pods still hold on the node `topology` describes. Once the node reports every one
    /// of them (by UID, or by namespace and name), they are let go of all together, as Volcano
    /// does, since its choice may differ from the kubelet's.
    pub(crate) fn held(&mut self, topology: &Numatopology) -> Option<NumaSets> {
        let node = &topology.metadata.name;
        let pods = self.by_node.get(node)?;
        let reported = |m: &PodMeta| {
            topology
                .spec
                .pod_allocations
                .iter()
                .any(|a| a.uid == m.uid || (a.name == m.name && a.namespace == m.namespace))
        };
        if pods.keys().all(reported) {
            self.by_node.remove(node);
            return None;
        }
        let mut held = NumaSets::new();
        for sets in pods.values() {
            for (resource, cpus) in sets {
                held.entry(resource.clone()).or_default().extend(cpus);
            }
        }
        Some(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::api::PodAllocation;

    fn booking(name: &str, cpus: &[i32]) -> NumaBooking {
        NumaBooking {
            namespace: "ns".into(),
            name: name.into(),
            uid: format!("u-{name}").into(),
            node: "n1".into(),
            sets: NumaSets::from([("cpu".into(), cpus.iter().copied().collect())]),
        }
    }

    fn topology(reported: &[&str]) -> Numatopology {
        let mut t = Numatopology::default();
        t.metadata.name = "n1".into();
        t.spec.pod_allocations = reported
            .iter()
            .map(|n| PodAllocation {
                uid: format!("u-{n}"),
                ..PodAllocation::default()
            })
            .collect();
        t
    }

    #[test]
    fn sets_are_held_until_the_node_reports_every_booked_pod() {
        let mut b = NumaBookings::default();
        b.add(&booking("a", &[0, 1]));
        b.add(&booking("b", &[4]));
        let held = b.held(&topology(&["a"])).unwrap();
        assert_eq!(held["cpu"], [0, 1, 4].into());
        assert_eq!(b.held(&topology(&["a", "b"])), None);
        assert_eq!(b.held(&topology(&[])), None, "let go of for good");
    }

    #[test]
    fn a_deleted_pod_holds_nothing() {
        let mut b = NumaBookings::default();
        b.add(&booking("a", &[0]));
        b.forget_pod("ns", "a");
        assert_eq!(b.held(&topology(&[])), None);
    }
}
