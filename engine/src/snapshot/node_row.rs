//! What a node row takes from its node object alone, derived once per version of the node.
//!
//! The cache hands every snapshot the same `Arc<Node>` until the node changes, and the row is
//! kept in the node's memo (the cache prepares it as the node arrives). A snapshot whose node
//! tables must be rebuilt, because some node changed, then parses only the changed nodes'
//! resources and images. Labels and taints are copied into the table, not shared: plugins look
//! them up for every node they check, and a pointer more per lookup would cost allocate more
//! than the copy saves here.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::api::{Node, StringMap};
use crate::model::Resource;

/// One node's row, before it is given an id.
#[derive(Debug)]
pub(super) struct NodeRow {
    pub allocatable: Resource,
    pub capacity: Resource,
    /// Image name → size in bytes.
    pub images: Arc<BTreeMap<String, i64>>,
    pub annotations: Arc<StringMap>,
}

/// Derives and memoises the row of `node` (the cache calls it as nodes arrive).
pub fn prepare_node_row(node: &Node) {
    NodeRow::of(node);
}

impl NodeRow {
    /// The row of this version of `node` (derived the first time it is asked for).
    pub fn of(node: &Node) -> Arc<NodeRow> {
        node.memo.get_or_init(|| NodeRow::derive(node))
    }

    fn derive(n: &Node) -> NodeRow {
        let mut images = BTreeMap::new();
        for img in &n.status.images {
            for name in &img.names {
                images.insert(name.clone(), img.size_bytes);
            }
        }
        NodeRow {
            allocatable: Resource::from_list(&n.status.allocatable),
            capacity: Resource::from_list(&n.status.capacity),
            images: Arc::new(images),
            annotations: Arc::new(n.metadata.annotations.clone()),
        }
    }
}
