//! `shard.volcano.sh/v1alpha1 NodeShard`: the nodes the sharding controller gives one scheduler
//! (`spec.nodesDesired`) and those the scheduler says it uses (`status.nodesInUse`).

use serde::{Deserialize, Serialize};

use super::ObjectMeta;

/// A NodeShard, cluster-scoped, named as the scheduler's `--scheduler-sharding-name`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeShard {
    pub metadata: ObjectMeta,
    pub spec: NodeShardSpec,
    pub status: NodeShardStatus,
}

/// What the sharding controller wants the shard to hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeShardSpec {
    pub nodes_desired: Vec<String>,
}

/// What the shard's scheduler reports: the nodes it schedules on now, and the desired nodes it
/// does not use yet (`nodesToAdd`, still in use by another shard) or uses but no longer should
/// (`nodesToRemove`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeShardStatus {
    pub nodes_in_use: Vec<String>,
    pub nodes_to_add: Vec<String>,
    pub nodes_to_remove: Vec<String>,
}
