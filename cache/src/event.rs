//! What the cluster tells the state: an object was created or changed, or went away.

use tephra_engine::api::ClusterObject;

use crate::ObjectKind;

/// One watch event.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterEvent {
    /// Created or replaced (matched by kind, namespace and name).
    Upsert(ClusterObject),
    /// Deleted; `namespace` is empty for cluster-scoped kinds.
    Delete {
        kind: ObjectKind,
        namespace: String,
        name: String,
    },
}

impl ClusterEvent {
    /// The kind of object the event is about.
    pub fn kind(&self) -> ObjectKind {
        match self {
            ClusterEvent::Upsert(object) => ObjectKind::of(object),
            ClusterEvent::Delete { kind, .. } => *kind,
        }
    }
}
