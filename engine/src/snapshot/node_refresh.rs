//! Node tables refreshed in place when nodes were updated but none came or went.
//!
//! Nodes report their status all the time: rebuilding every row for each such update would
//! copy every node's labels and taints and build both indexes again, work proportional to the
//! cluster for a change to a few nodes.

use std::sync::Arc;

use super::node_row::NodeRow;
use super::{LabelIndex, NodeTables, NodeUsage, TaintIndex};
use crate::api::{Node, NodeMetrics};
use crate::model::NodeId;

impl NodeTables {
    /// Replaces the rows of the `changed` nodes (each with its metrics, if any) in place,
    /// keeping every node id; the label and taint indexes are rebuilt only when some changed
    /// node's labels or taints differ. The tables then equal ones built afresh from the same
    /// nodes. `None`, with nothing changed, when the node table is shared or a node is not in
    /// it: the caller then builds the tables afresh.
    pub fn refresh(&mut self, changed: &[(&Node, Option<&NodeMetrics>)]) -> Option<Refreshed> {
        let table = Arc::get_mut(&mut self.nodes)?;
        let ids: Option<Vec<NodeId>> = changed
            .iter()
            .map(|(node, _)| table.id(&node.metadata.name))
            .collect();
        let ids = ids?;
        let (mut labels_changed, mut taints_changed) = (false, false);
        let mut images_changed = false;
        for (&(node, metrics), id) in changed.iter().zip(ids) {
            let i = id.idx();
            let row = NodeRow::of(node);
            labels_changed |= table.labels[i] != node.metadata.labels;
            taints_changed |= table.taints[i] != node.spec.taints;
            table.labels[i] = node.metadata.labels.clone();
            table.taints[i] = node.spec.taints.clone();
            table.unschedulable[i] = node.spec.unschedulable;
            table.allocatable[i] = row.allocatable.clone();
            table.capacity[i] = row.capacity.clone();
            images_changed |= table.images[i] != row.images;
            table.images[i] = row.images.clone();
            table.annotations[i] = row.annotations.clone();
            table.usage[i] = metrics.map(|m| NodeUsage::of(m, &table.allocatable[i]));
        }
        if labels_changed {
            self.labels = Arc::new(LabelIndex::build(table.labels.iter(), table.len()));
        }
        if taints_changed {
            self.taints = Arc::new(TaintIndex::build(table.taints.iter(), table.len()));
        }
        self.total = table.total_allocatable();
        Some(Refreshed { images_changed })
    }
}

/// What an in-place refresh changed beyond the refreshed nodes' own rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refreshed {
    /// Some node's images differ: image locality scores every node by how many nodes hold an
    /// image, so every node's scores may have moved.
    pub images_changed: bool,
}
