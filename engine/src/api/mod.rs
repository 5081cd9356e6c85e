//! The cluster objects tephra reads, stripped to the fields scheduling uses.
//!
//! They mirror the Kubernetes/Volcano JSON shapes (`metadata` / `spec` / `status`, camelCase) so a
//! manifest or an API response deserializes straight into them; unknown fields are ignored.

mod memo;
mod node_shard;
mod numatopology;
mod objects;
mod sorted_map;
mod storage;
mod time;
mod workloads;

pub use memo::{Lent, Memo};
pub use node_shard::{NodeShard, NodeShardSpec, NodeShardStatus};
pub use numatopology::{
    CpuInfo, NumaResourceInfo, NumaSets, NumatopoSpec, Numatopology, PodAllocation,
};
pub use objects::*;
pub use sorted_map::{ResourceList, SortedMap, StringMap};
pub use storage::*;
pub use time::{Time, TimeError};
pub use workloads::*;
