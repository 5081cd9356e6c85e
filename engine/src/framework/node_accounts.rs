//! Each node's accounting (idle, used, releasing, pipelined: `NodeInfo`'s sums) and where a
//! session's columns of it start from: the sums of the tasks on each node, or, for the nodes
//! that did not change since the last session, that session's own columns as it closed.

use fixedbitset::FixedBitSet;

use super::{Carryover, ClosedSession};
use crate::model::{DimDefault, Resource, TaskStatus};
use crate::snapshot::Snapshot;

/// One node's accounting columns, borrowed together.
pub(super) struct NodeAccount<'a> {
    pub idle: &'a mut Resource,
    pub used: &'a mut Resource,
    pub releasing: &'a mut Resource,
    pub pipelined: &'a mut Resource,
}

impl NodeAccount<'_> {
    /// `NodeInfo.AddTask`'s arithmetic for a task in `status` requesting `r`; false (nothing
    /// changed) for a Binding task that does not fit in idle.
    pub fn add(&mut self, status: TaskStatus, r: &Resource) -> bool {
        match status {
            TaskStatus::Releasing => {
                self.idle.sub(r);
                self.releasing.add(r);
                self.used.add(r);
            }
            TaskStatus::Pipelined => {
                self.pipelined.add(r);
            }
            TaskStatus::Binding if !r.less_equal(self.idle, DimDefault::Zero) => {
                return false;
            }
            _ => {
                self.idle.sub(r);
                self.used.add(r);
            }
        }
        true
    }

    /// `NodeInfo.RemoveTask`'s arithmetic: undoes `add` of a task added in `status`.
    pub fn remove(&mut self, status: TaskStatus, r: &Resource) {
        match status {
            TaskStatus::Releasing => {
                self.idle.add(r);
                self.releasing.sub(r);
                self.used.sub(r);
            }
            TaskStatus::Pipelined => {
                self.pipelined.sub(r);
            }
            _ => {
                self.idle.add(r);
                self.used.sub(r);
            }
        }
    }
}

/// The four accounting columns, one value per node.
#[derive(Debug)]
pub(super) struct NodeAccounting {
    pub idle: Vec<Resource>,
    pub used: Vec<Resource>,
    pub releasing: Vec<Resource>,
    pub pipelined: Vec<Resource>,
}

/// The columns as the last session closed them, left for the next one (`Carryover`). A node
/// neither that session nor the cache changed since (`ClosedSession`,
/// `Snapshot::changed_since`) holds the very same pod versions, so the same sums: a steady
/// `large` open adds up the requests on the few thousand nodes that changed, not all 400k.
struct ClosedNodeColumns {
    serial: u64,
    columns: NodeAccounting,
}

impl NodeAccounting {
    /// Every node with nothing on it: idle is allocatable.
    fn empty(snap: &Snapshot) -> NodeAccounting {
        let nodes = snap.nodes.len();
        NodeAccounting {
            idle: snap.nodes.allocatable.clone(),
            used: vec![Resource::empty(); nodes],
            releasing: vec![Resource::empty(); nodes],
            pipelined: vec![Resource::empty(); nodes],
        }
    }

    /// The columns a session on `snap` opens with, and which nodes still need their tasks
    /// added (`None`: all of them; those listed start empty). The last session's columns are
    /// taken when it closed on the snapshot `snap` says its changed nodes are counted from.
    pub fn open(snap: &Snapshot, carryover: &Carryover) -> (NodeAccounting, Option<FixedBitSet>) {
        let Some(since) = &snap.changed_since else {
            return (NodeAccounting::empty(snap), None);
        };
        let carried = carryover.take::<ClosedNodeColumns>();
        let closed = carryover.get::<ClosedSession>();
        let (Some(carried), Some(closed)) = (carried, closed) else {
            return (NodeAccounting::empty(snap), None);
        };
        let nodes = snap.nodes.len();
        if carried.serial != since.since
            || closed.serial != since.since
            || carried.columns.idle.len() != nodes
            || closed.changed.len() != nodes
        {
            return (NodeAccounting::empty(snap), None);
        }
        let mut changed = closed.changed;
        since.nodes.iter().for_each(|n| changed.insert(n.idx()));
        let mut columns = carried.columns;
        for n in changed.ones() {
            columns.idle[n] = snap.nodes.allocatable[n].clone();
            columns.used[n] = Resource::empty();
            columns.releasing[n] = Resource::empty();
            columns.pipelined[n] = Resource::empty();
        }
        (columns, Some(changed))
    }

    /// Leaves the closing session's columns for the next session on a snapshot built after
    /// the one numbered `serial`. Only `SessionState::node_add` and `node_remove` change them,
    /// and both record the node in `node_changes`, which `ClosedSession` keeps.
    pub fn leave(self, serial: u64, carryover: &Carryover) {
        carryover.put(ClosedNodeColumns {
            serial,
            columns: self,
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::framework::{Carryover, Session, SessionOptions};
    use crate::harness::Harness;
    use crate::model::NodeId;

    fn running(name: &str, node: &str) -> String {
        format!(
            "- {{kind: Pod, metadata: {{name: {name}, namespace: ns, uid: ns-{name}, \
             annotations: {{scheduling.k8s.io/group-name: pg}}}}, spec: {{nodeName: {node}, \
             schedulerName: volcano, containers: [{{name: c, resources: {{requests: \
             {{cpu: '1'}}}}}}]}}, status: {{phase: Running}}}}\n"
        )
    }

    fn cluster(pods: &str) -> Harness {
        Harness::new("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n")
            .queue("q", 1)
            .node("n1", "4", "8Gi", &[])
            .node("n2", "4", "8Gi", &[])
            .pod_group("ns", "pg", "q", 1)
            .manifests(pods)
    }

    /// Milli-CPU used on n1 and n2.
    fn used(ssn: &Session) -> (f64, f64) {
        let used = &ssn.state.nodes.used;
        (used[NodeId(0)].milli_cpu, used[NodeId(1)].milli_cpu)
    }

    #[test]
    fn nodes_unchanged_since_the_last_session_open_with_its_closing_columns() {
        let carryover = Arc::new(Carryover::default());
        let options = || SessionOptions {
            carryover: carryover.clone(),
            ..Default::default()
        };
        let apart = [running("a", "n1"), running("b", "n2")].concat();
        let mut first = cluster(&apart)
            .pod("ns", "p", "pg", "1", "1Gi")
            .open_with(options())
            .unwrap();
        crate::actions::run(&mut first, crate::config::Action::Allocate);
        assert_eq!(first.binds.len(), 1);
        assert_eq!(
            used(&first),
            (2000.0, 1000.0),
            "p went to n1, first in table order"
        );
        let serial = first.state.snap.serial;
        first.close();
        // b has moved to n1, and the snapshot lists no node: n2, which the first session did
        // not change, keeps its columns; n1, where p was allocated, is summed afresh.
        let together = [running("a", "n1"), running("b", "n1")].concat();
        let second = cluster(&together)
            .nodes_changed_since(serial, &[])
            .open_with(options())
            .unwrap();
        assert_eq!(used(&second), (2000.0, 1000.0));
        assert_eq!(second.state.nodes.idle[NodeId(1)].milli_cpu, 3000.0);
        let serial = second.state.snap.serial;
        second.close();
        let third = cluster(&together)
            .nodes_changed_since(serial, &["n2"])
            .open_with(options())
            .unwrap();
        assert_eq!(used(&third), (2000.0, 0.0), "listed: summed afresh");
        assert_eq!(third.state.nodes.idle[NodeId(1)].milli_cpu, 4000.0);
    }
}
