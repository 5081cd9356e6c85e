//! tephra's cluster state: fed by watch events, it builds each cycle's engine `Snapshot` and
//! assumes the cycle's `Decisions` so the next cycle starts from what the API would hold.

mod assume;
pub mod cycle;
mod event;
mod kind;
mod node_shards;
mod numa_bookings;
mod offline;
mod pod_store;
mod state;
mod store;

pub use event::ClusterEvent;
pub use kind::{ObjectKind, meta_of};
pub use node_shards::Sharding;
pub use state::ClusterState;
