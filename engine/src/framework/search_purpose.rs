//! Why a hyper-node gradient is asked for: plugins search differently for placement and for
//! eviction.

/// Volcano's `SearchPurpose`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchPurpose {
    /// allocate: hyper-nodes where the job fits now or once releasing resources are freed,
    /// narrowest first.
    Allocate,
    /// gangpreempt / gangreclaim: hyper-nodes large enough for the job at all, widest first.
    Evict,
}
