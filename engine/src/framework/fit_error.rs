//! Predicate outcomes: status codes, a task's failure on one node, and on all nodes.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use super::NodeFailures;

/// Volcano's / kube-scheduler's status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusCode {
    Error,
    Unschedulable,
    UnschedulableAndUnresolvable,
    Wait,
    Skip,
}

/// One reason a task cannot go to a node. Most reasons are constants, kept without a copy: a
/// class's ranking checks thousands of nodes, and the failures of its static filters were a
/// string allocation each.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub code: StatusCode,
    pub reason: Cow<'static, str>,
}

/// Why a task does not fit one node (all reasons collected there). Shared, because the same
/// failure is handed on many times (to every task of a class that fits nowhere).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FitError {
    pub statuses: Arc<[Status]>,
}

impl FitError {
    /// A single-reason error.
    pub fn new(code: StatusCode, reason: impl Into<Cow<'static, str>>) -> Self {
        FitError {
            statuses: Arc::new([Status {
                code,
                reason: reason.into(),
            }]),
        }
    }

    /// The reasons, in order.
    pub fn reasons(&self) -> impl Iterator<Item = &str> {
        self.statuses.iter().map(|s| &*s.reason)
    }

    /// True when some status has one of `codes`.
    pub fn has_any(&self, codes: &[StatusCode]) -> bool {
        self.statuses.iter().any(|s| codes.contains(&s.code))
    }
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r: Vec<&str> = self.reasons().collect();
        f.write_str(&r.join(", "))
    }
}

/// Why a task could not be placed anywhere: per-node errors, or one message for all nodes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FitErrors {
    /// Shared: every task of an equivalence class that fits nowhere gets a version of the
    /// class's map.
    pub nodes: NodeFailures,
    /// Set when the search was limited to one hyper-node.
    pub hyper_node: Option<String>,
    /// A message that applies to every node (e.g. a failed pre-predicate).
    pub message: String,
}

impl FitErrors {
    /// "0/N nodes are unavailable: 2 Insufficient cpu, 1 node(s) had untolerated taint."
    /// with `total` the number of nodes considered.
    pub fn summary(&self, total: usize) -> String {
        let hist: Vec<(&str, usize)> = self.nodes.reason_counts().collect();
        let prefix = self
            .hyper_node
            .as_ref()
            .map(|h| format!("In hyperNode {h}: "))
            .unwrap_or_default();
        if hist.is_empty() {
            let msg = if self.message.is_empty() {
                "all nodes are unavailable"
            } else {
                &self.message
            };
            return format!("{prefix}{msg}");
        }
        let mut parts: Vec<String> = hist.iter().map(|(r, n)| format!("{n} {r}")).collect();
        parts.sort();
        format!(
            "{prefix}0/{total} nodes are unavailable: {}.",
            parts.join(", ")
        )
    }
}
