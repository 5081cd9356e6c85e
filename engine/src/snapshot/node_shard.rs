//! Node sharding: several schedulers over one cluster, each scheduling on the nodes of its own
//! NodeShard (Volcano: pkg/scheduler/util/predicate_helper.go, PredicateNodes and
//! GetPredicatedNodeByShard; cmd/scheduler/app/options/options.go, the sharding flags).
//!
//! The shard reaches a cycle as data: the cache works out which nodes the scheduler's shard
//! lets it use (`ClusterState`, from the NodeShard objects) and the snapshot carries them as a
//! bitmap over the node table. Actions ask it where Volcano's consult `ssn.NodesInShard`.

use std::fmt;

use fixedbitset::FixedBitSet;

use super::NodeTable;
use crate::model::NodeId;

/// How a scheduler uses its shard (`--scheduler-sharding-mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ShardingMode {
    /// Every node, as with no sharding controller at all.
    #[default]
    None,
    /// Only the nodes in the shard; every other node fails the predicates.
    Hard,
    /// The shard's nodes first; the others when none of them will do.
    Soft,
}

impl ShardingMode {
    /// Parses the flag's value: `none`, `hard` or `soft`, as Volcano spells them.
    pub fn parse(text: &str) -> Result<ShardingMode, String> {
        match text {
            "none" => Ok(ShardingMode::None),
            "hard" => Ok(ShardingMode::Hard),
            "soft" => Ok(ShardingMode::Soft),
            other => Err(format!(
                "{other:?} is not a sharding mode (none, hard or soft)"
            )),
        }
    }
}

impl fmt::Display for ShardingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShardingMode::None => "none",
            ShardingMode::Hard => "hard",
            ShardingMode::Soft => "soft",
        })
    }
}

/// The nodes this scheduler's shard lets it use in one cycle (Volcano's `ssn.NodesInShard`),
/// with the mode that says what the others are. Names of nodes the cluster does not have are
/// dropped: they can match no node.
#[derive(Debug, Clone)]
pub struct NodesInShard {
    mode: ShardingMode,
    nodes: FixedBitSet,
}

impl NodesInShard {
    /// The shard of `names` over `table`'s nodes, used as `mode` says.
    pub fn new<'a>(
        mode: ShardingMode,
        names: impl IntoIterator<Item = &'a str>,
        table: &NodeTable,
    ) -> NodesInShard {
        let mut nodes = FixedBitSet::with_capacity(table.len());
        for n in names.into_iter().filter_map(|name| table.id(name)) {
            nodes.insert(n.idx());
        }
        NodesInShard { mode, nodes }
    }

    /// The mode.
    pub fn mode(&self) -> ShardingMode {
        self.mode
    }

    /// True when the node is in the shard.
    pub fn contains(&self, n: NodeId) -> bool {
        self.nodes.contains(n.idx())
    }

    /// True when hard sharding keeps the scheduler off the node.
    pub fn excludes(&self, n: NodeId) -> bool {
        self.mode == ShardingMode::Hard && !self.contains(n)
    }

    /// True when soft sharding ranks the node after the shard's own: it belongs to another.
    pub fn in_other_shard(&self, n: NodeId) -> bool {
        self.mode == ShardingMode::Soft && !self.contains(n)
    }

    /// `nodes` split, order kept, into the shard's own and then those of other shards (soft
    /// mode); in hard mode every node is the first group's (Volcano:
    /// pkg/scheduler/util/predicate_helper.go, GetPredicatedNodeByShard).
    pub fn own_then_others(&self, nodes: &[NodeId]) -> [Vec<NodeId>; 2] {
        let (others, own): (Vec<NodeId>, Vec<NodeId>) =
            nodes.iter().partition(|&&n| self.in_other_shard(n));
        [own, others]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Node;
    use crate::snapshot::SnapshotBuilder;

    fn table(names: &[&str]) -> std::sync::Arc<NodeTable> {
        let mut b = SnapshotBuilder::new("default");
        for name in names {
            let mut n = Node::default();
            n.metadata.name = name.to_string();
            b.node(std::sync::Arc::new(n));
        }
        b.build().nodes
    }

    #[test]
    fn modes_parse_as_volcano_spells_them_and_nothing_else() {
        assert_eq!(ShardingMode::parse("hard"), Ok(ShardingMode::Hard));
        assert_eq!(ShardingMode::parse("soft"), Ok(ShardingMode::Soft));
        assert_eq!(ShardingMode::parse("none"), Ok(ShardingMode::None));
        let e = ShardingMode::parse("Hard").unwrap_err();
        assert!(e.contains("\"Hard\""), "{e}");
    }

    #[test]
    fn names_of_missing_nodes_match_nothing() {
        let t = table(&["n1", "n2", "n3"]);
        let s = NodesInShard::new(ShardingMode::Hard, ["n3", "gone"], &t);
        assert!(s.contains(NodeId(2)));
        assert!(!s.contains(NodeId(0)) && !s.contains(NodeId(1)));
        assert!(s.excludes(NodeId(0)) && !s.excludes(NodeId(2)));
    }

    #[test]
    fn hard_mode_keeps_one_group_and_soft_mode_puts_other_shards_last() {
        let t = table(&["n1", "n2", "n3"]);
        let all = [NodeId(0), NodeId(1), NodeId(2)];
        let hard = NodesInShard::new(ShardingMode::Hard, ["n2"], &t);
        assert_eq!(hard.own_then_others(&all), [all.to_vec(), vec![]]);
        assert!(!hard.in_other_shard(NodeId(0)));
        let soft = NodesInShard::new(ShardingMode::Soft, ["n2"], &t);
        assert_eq!(
            soft.own_then_others(&all),
            [vec![NodeId(1)], vec![NodeId(0), NodeId(2)]]
        );
        assert!(!soft.excludes(NodeId(0)));
    }
}
