//! Kubernetes events the session wants recorded.

/// The object an event is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventObject {
    Pod { namespace: String, name: String },
    PodGroup { namespace: String, name: String },
}

/// A core/v1 Event to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub object: EventObject,
    /// `Normal` or `Warning`.
    pub type_: &'static str,
    pub reason: String,
    pub message: String,
}
