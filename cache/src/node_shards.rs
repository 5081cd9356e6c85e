//! The NodeShards and what this scheduler derives from them: the nodes its shard lets it use
//! and the status it reports on its shard (Volcano: pkg/scheduler/cache/shard_coordinator.go,
//! RefreshNodeShards, getAvailableNodesFromShard and generateNodeShardWithStatus).
//!
//! A node moves between shards in two steps, so that two schedulers never both count it as
//! theirs: the sharding controller takes it out of one shard's `nodesDesired` and puts it into
//! another's; the first scheduler stops using it and reports so (`status.nodesInUse` without
//! it); only then does the second scheduler, which reads the first's status, start using it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use tephra_engine::api::{NodeShard, NodeShardStatus};
use tephra_engine::snapshot::{NodeTable, NodesInShard, ShardingMode};

/// The scheduler's sharding flags: `--scheduler-sharding-mode` and `--scheduler-sharding-name`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sharding {
    pub mode: ShardingMode,
    /// The NodeShard this scheduler owns.
    pub name: String,
}

/// The cluster's NodeShards and the scheduler's view of its own.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeShards {
    sharding: Sharding,
    shards: BTreeMap<String, Arc<NodeShard>>,
    /// The nodes this scheduler may use: its shard's desired nodes that no other shard reports
    /// in use. Kept as it was while the scheduler's own shard does not exist, as Volcano does.
    usable: BTreeSet<String>,
    /// `usable` was worked out again since the status was last compared with the shard's.
    status_due: bool,
}

impl NodeShards {
    /// Sets the flags and works the usable nodes out again.
    pub fn set_sharding(&mut self, sharding: Sharding) {
        self.sharding = sharding;
        self.refresh();
    }

    /// Stores a created or changed NodeShard.
    pub fn upsert(&mut self, shard: NodeShard) {
        self.shards
            .insert(shard.metadata.name.clone(), Arc::new(shard));
        self.refresh();
    }

    /// Forgets a deleted NodeShard; false when there was none.
    pub fn remove(&mut self, name: &str) -> bool {
        let removed = self.shards.remove(name).is_some();
        if removed {
            self.refresh();
        }
        removed
    }

    /// Works out the usable nodes from the shards, when sharding is on and the scheduler's
    /// shard exists; otherwise they stay as they were.
    fn refresh(&mut self) {
        if self.sharding.mode == ShardingMode::None {
            return;
        }
        let Some(own) = self.shards.get(&self.sharding.name) else {
            return;
        };
        let used_by_others: BTreeSet<&str> = self
            .shards
            .values()
            .filter(|s| s.metadata.name != self.sharding.name)
            .flat_map(|s| s.status.nodes_in_use.iter().map(String::as_str))
            .collect();
        self.usable = own
            .spec
            .nodes_desired
            .iter()
            .filter(|n| !used_by_others.contains(n.as_str()))
            .cloned()
            .collect();
        self.status_due = true;
    }

    /// The usable nodes over `table`, for a snapshot; `None` without sharding.
    pub fn nodes_in_shard(&self, table: &NodeTable) -> Option<Arc<NodesInShard>> {
        (self.sharding.mode != ShardingMode::None).then(|| {
            Arc::new(NodesInShard::new(
                self.sharding.mode,
                self.usable.iter().map(String::as_str),
                table,
            ))
        })
    }

    /// The scheduler's shard with the status it should report, once after each time the
    /// usable nodes were worked out again, and only when that status differs from the one
    /// the shard holds (compared as sets; lists are written sorted). `nodesToAdd`: desired
    /// nodes not usable yet; `nodesToRemove`: usable nodes no longer desired.
    pub fn status_update(&mut self) -> Option<NodeShard> {
        if !std::mem::take(&mut self.status_due) {
            return None;
        }
        let own = self.shards.get(&self.sharding.name)?;
        let desired: BTreeSet<&String> = own.spec.nodes_desired.iter().collect();
        let usable: BTreeSet<&String> = self.usable.iter().collect();
        let status = NodeShardStatus {
            nodes_in_use: self.usable.iter().cloned().collect(),
            nodes_to_add: desired.difference(&usable).map(|n| (*n).clone()).collect(),
            nodes_to_remove: usable.difference(&desired).map(|n| (*n).clone()).collect(),
        };
        let as_set = |v: &[String]| v.iter().cloned().collect::<BTreeSet<String>>();
        let same = |a: &[String], b: &[String]| as_set(a) == as_set(b);
        let held = &own.status;
        if same(&held.nodes_in_use, &status.nodes_in_use)
            && same(&held.nodes_to_add, &status.nodes_to_add)
            && same(&held.nodes_to_remove, &status.nodes_to_remove)
        {
            return None;
        }
        let mut updated = NodeShard::clone(own);
        updated.status = status;
        Some(updated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(name: &str, desired: &[&str], in_use: &[&str]) -> NodeShard {
        let mut s = NodeShard::default();
        s.metadata.name = name.into();
        s.spec.nodes_desired = desired.iter().map(|n| n.to_string()).collect();
        s.status.nodes_in_use = in_use.iter().map(|n| n.to_string()).collect();
        s
    }

    fn shards(own: &str, mode: ShardingMode) -> NodeShards {
        let mut s = NodeShards::default();
        s.upsert(shard(
            "test-shard",
            &["node-1", "node-2", "node-3", "node-4"],
            &["node-1", "node-2"],
        ));
        s.upsert(shard("other-shard-1", &["node-2", "node-3"], &["node-2"]));
        s.upsert(shard(
            "other-shard-2",
            &["node-3", "node-4"],
            &["node-3", "node-4"],
        ));
        s.set_sharding(Sharding {
            mode,
            name: own.into(),
        });
        s
    }

    fn usable(s: &NodeShards) -> Vec<&str> {
        s.usable.iter().map(String::as_str).collect()
    }

    // Volcano: pkg/scheduler/cache/shard_coordinator_test.go, TestGetAvailableNodesFromShard.
    #[test]
    fn a_shard_may_use_its_desired_nodes_that_no_other_shard_reports_in_use() {
        assert_eq!(
            usable(&shards("test-shard", ShardingMode::Hard)),
            ["node-1"]
        );
        assert!(usable(&shards("other-shard-1", ShardingMode::Hard)).is_empty());
        assert_eq!(
            usable(&shards("other-shard-2", ShardingMode::Soft)),
            ["node-3", "node-4"]
        );
    }

    // Volcano: pkg/scheduler/cache/shard_coordinator_test.go, TestRefreshNodeShards_ShardNotFound.
    #[test]
    fn without_its_own_shard_the_scheduler_keeps_the_nodes_it_had() {
        let mut s = shards("test-shard", ShardingMode::Hard);
        s.set_sharding(Sharding {
            mode: ShardingMode::Hard,
            name: "non-existent-shard".into(),
        });
        assert_eq!(usable(&s), ["node-1"]);
        s.set_sharding(Sharding {
            mode: ShardingMode::Hard,
            name: "test-shard".into(),
        });
        s.remove("test-shard");
        assert_eq!(usable(&s), ["node-1"]);
    }

    #[test]
    fn without_sharding_the_shards_are_kept_but_no_snapshot_gets_one() {
        let s = shards("test-shard", ShardingMode::None);
        assert!(usable(&s).is_empty());
        assert!(s.nodes_in_shard(&NodeTable::default()).is_none());
    }

    #[test]
    fn the_status_reports_usable_nodes_and_those_still_held_by_another_shard() {
        let mut s = shards("test-shard", ShardingMode::Hard);
        let update = s.status_update().expect("the status differs");
        assert_eq!(update.status.nodes_in_use, ["node-1"]);
        assert_eq!(update.status.nodes_to_add, ["node-2", "node-3", "node-4"]);
        assert!(update.status.nodes_to_remove.is_empty());
        assert!(s.status_update().is_none(), "asked once per refresh");
        s.upsert(update);
        assert!(
            s.status_update().is_none(),
            "the shard now holds that status, compared as sets"
        );
    }

    #[test]
    fn a_node_another_shard_releases_becomes_usable_and_is_reported() {
        let mut s = shards("other-shard-1", ShardingMode::Hard);
        assert!(usable(&s).is_empty());
        s.upsert(shard("test-shard", &["node-1", "node-4"], &["node-1"]));
        s.upsert(shard("other-shard-2", &["node-4"], &["node-4"]));
        assert_eq!(usable(&s), ["node-2", "node-3"]);
        let update = s.status_update().unwrap();
        assert_eq!(update.status.nodes_in_use, ["node-2", "node-3"]);
        assert!(update.status.nodes_to_add.is_empty());
    }
}
