//! Task statuses (Volcano's bit-flag `TaskStatus`) and the status sets built from them.

use std::fmt;

/// Tasks per status, indexed by `TaskStatus::index`.
pub type StatusCounts = [u32; 10];

/// A task's scheduling status.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u16)]
pub enum TaskStatus {
    Pending = 1,
    Allocated = 2,
    Pipelined = 4,
    Binding = 8,
    Bound = 16,
    Running = 32,
    Releasing = 64,
    Succeeded = 128,
    Failed = 256,
    Unknown = 512,
}

impl TaskStatus {
    /// All statuses, in bit order.
    pub const ALL: [TaskStatus; 10] = [
        TaskStatus::Pending,
        TaskStatus::Allocated,
        TaskStatus::Pipelined,
        TaskStatus::Binding,
        TaskStatus::Bound,
        TaskStatus::Running,
        TaskStatus::Releasing,
        TaskStatus::Succeeded,
        TaskStatus::Failed,
        TaskStatus::Unknown,
    ];

    /// Dense index 0..10, for per-status counters.
    pub fn index(self) -> usize {
        (self as u16).trailing_zeros() as usize
    }

    /// `AllocatedStatus`: Allocated, Binding, Bound, Running.
    pub fn is_allocated(self) -> bool {
        matches!(
            self,
            TaskStatus::Allocated | TaskStatus::Binding | TaskStatus::Bound | TaskStatus::Running
        )
    }

    /// Bound or Running: what preemption may evict.
    pub fn is_preemptable(self) -> bool {
        matches!(self, TaskStatus::Bound | TaskStatus::Running)
    }

    /// Succeeded or Failed.
    pub fn is_completed(self) -> bool {
        matches!(self, TaskStatus::Succeeded | TaskStatus::Failed)
    }

    /// Running, Bound, Failed, Succeeded.
    pub fn is_scheduled(self) -> bool {
        matches!(
            self,
            TaskStatus::Running | TaskStatus::Bound | TaskStatus::Failed | TaskStatus::Succeeded
        )
    }

    /// Volcano's `getTaskStatus(pod)`.
    pub fn from_pod(phase: &str, deleting: bool, node_name: &str) -> TaskStatus {
        match phase {
            "Running" if deleting => TaskStatus::Releasing,
            "Running" => TaskStatus::Running,
            "Pending" | "" if deleting => TaskStatus::Releasing,
            "Pending" | "" if node_name.is_empty() => TaskStatus::Pending,
            "Pending" | "" => TaskStatus::Bound,
            "Succeeded" => TaskStatus::Succeeded,
            "Failed" => TaskStatus::Failed,
            _ => TaskStatus::Unknown,
        }
    }

    /// The name Volcano prints.
    pub fn name(self) -> &'static str {
        match self {
            TaskStatus::Pending => "Pending",
            TaskStatus::Allocated => "Allocated",
            TaskStatus::Pipelined => "Pipelined",
            TaskStatus::Binding => "Binding",
            TaskStatus::Bound => "Bound",
            TaskStatus::Running => "Running",
            TaskStatus::Releasing => "Releasing",
            TaskStatus::Succeeded => "Succeeded",
            TaskStatus::Failed => "Failed",
            TaskStatus::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_status_follows_phase_deletion_and_node() {
        assert_eq!(
            TaskStatus::from_pod("Pending", false, ""),
            TaskStatus::Pending
        );
        assert_eq!(
            TaskStatus::from_pod("Pending", false, "n1"),
            TaskStatus::Bound
        );
        assert_eq!(
            TaskStatus::from_pod("Pending", true, ""),
            TaskStatus::Releasing
        );
        assert_eq!(
            TaskStatus::from_pod("Running", false, "n1"),
            TaskStatus::Running
        );
        assert_eq!(
            TaskStatus::from_pod("Running", true, "n1"),
            TaskStatus::Releasing
        );
        assert_eq!(
            TaskStatus::from_pod("Succeeded", false, "n1"),
            TaskStatus::Succeeded
        );
        assert_eq!(
            TaskStatus::from_pod("Weird", false, "n1"),
            TaskStatus::Unknown
        );
    }

    #[test]
    fn index_is_dense() {
        let idx: Vec<usize> = TaskStatus::ALL.iter().map(|s| s.index()).collect();
        assert_eq!(idx, (0..10).collect::<Vec<_>>());
    }
}
