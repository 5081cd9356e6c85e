//! The queue table.

use std::collections::HashMap;
use std::sync::Arc;

use foldhash::fast::FixedState;

use crate::api::{Queue, Time};
use crate::model::{QueueId, Resource};

/// Queues, sorted by name.
#[derive(Debug, Default)]
pub struct QueueTable {
    pub name: Vec<String>,
    pub weight: Vec<i32>,
    pub priority: Vec<i32>,
    /// `NewResource(spec.capability)`; `None` when unset.
    pub capability: Vec<Option<Resource>>,
    /// `NewResource(spec.deserved)`; `None` when unset.
    pub deserved: Vec<Option<Resource>>,
    /// `NewResource(spec.guarantee.resource)`; `None` when unset.
    pub guarantee: Vec<Option<Resource>>,
    pub reclaimable: Vec<bool>,
    /// `spec.parent` (empty when unset).
    pub parent: Vec<String>,
    pub open: Vec<bool>,
    pub state: Vec<String>,
    pub created: Vec<Time>,
    pub object: Vec<Arc<Queue>>,
    /// Hashed with foldhash: a snapshot looks every job's queue up by name.
    pub by_name: HashMap<String, QueueId, FixedState>,
}

impl QueueTable {
    /// Number of queues.
    pub fn len(&self) -> usize {
        self.name.len()
    }

    /// True when there are no queues.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    /// All queue ids.
    pub fn ids(&self) -> impl Iterator<Item = QueueId> + use<> {
        (0..self.name.len() as u32).map(QueueId)
    }

    /// Looks a queue up by name.
    pub fn id(&self, name: &str) -> Option<QueueId> {
        self.by_name.get(name).copied()
    }
}
