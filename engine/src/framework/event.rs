//! Kubernetes events the session wants recorded.
//!
//! Names are the snapshot's shared strings and fixed texts are not copied: a first cycle records
//! an event for every job (50k on a large cluster), and four fresh strings each were a good part
//! of its close.

use std::borrow::Cow;
use std::sync::Arc;

/// The object an event is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventObject {
    Pod { namespace: Arc<str>, name: Arc<str> },
    PodGroup { namespace: Arc<str>, name: Arc<str> },
}

/// A core/v1 Event to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub object: EventObject,
    /// `Normal` or `Warning`.
    pub type_: &'static str,
    pub reason: Cow<'static, str>,
    pub message: Cow<'static, str>,
}
