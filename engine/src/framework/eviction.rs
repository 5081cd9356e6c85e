//! What gang-aware eviction tells the `UnifiedEvictable` plugins about itself.

use crate::model::JobId;

/// Which gang-aware eviction action asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvictionKind {
    /// `gangpreempt`: higher-priority jobs of the same queue take from lower-priority ones.
    GangPreempt,
    /// `gangreclaim`: queues below their share take from other, reclaimable queues.
    GangReclaim,
}

impl EvictionKind {
    /// The action's configured name, also the reason its evictions carry.
    pub fn action_name(self) -> &'static str {
        match self {
            EvictionKind::GangPreempt => "gangpreempt",
            EvictionKind::GangReclaim => "gangreclaim",
        }
    }
}

/// The initiator of a gang-aware eviction (Volcano's `EvictionContext`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvictionContext {
    pub kind: EvictionKind,
    /// The starving job the victims would make room for.
    pub job: JobId,
}
