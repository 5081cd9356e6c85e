//! Plugin votes for the vote dispatchers (JobPipelined, JobEnqueueable, ...).

/// Volcano's `Permit / Abstain / Reject` (+1 / 0 / -1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vote {
    Permit,
    #[default]
    Abstain,
    Reject,
}

/// A failed `JobValid` check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobInvalid {
    pub reason: String,
    pub message: String,
}
