//! Dense row ids of the snapshot tables.

/// A row id: the index of a row in the table of its type.
pub trait RowId: Copy {
    /// The row index.
    fn idx(self) -> usize;
}

macro_rules! dense_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
        pub struct $name(pub u32);

        impl $name {
            /// The row index.
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }

        impl RowId for $name {
            fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

dense_id!(
    /// A node row.
    NodeId
);
dense_id!(
    /// A task (pod) row.
    TaskId
);
dense_id!(
    /// A job (PodGroup) row.
    JobId
);
dense_id!(
    /// A queue row.
    QueueId
);
dense_id!(
    /// A hyper-node row.
    HyperNodeId
);
dense_id!(
    /// A sub-job row (every job has a default sub-job).
    SubJobId
);
