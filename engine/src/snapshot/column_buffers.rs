//! The memory of the task columns a snapshot build emptied, kept for the build after the next.
//!
//! A build moves the earlier table's rows into new columns, so two tables' columns live at once;
//! the earlier table's, emptied, used to be freed. Its memory was handed back to the allocator,
//! which did not give it out again for the next build's columns, a little longer each cycle: the
//! kernel zeroed fresh pages instead (12k page faults, two thirds of the task columns' time, in
//! the `large` snapshot after the first cycle). Kept here, the emptied columns are the next
//! build's, already paged in.

use super::TaskTable;

/// Emptied task columns (`SnapshotBuilder::column_buffers`). A copy has none: they are memory,
/// not state.
#[derive(Debug, Default)]
pub struct ColumnBuffers(pub(super) TaskTable);

impl Clone for ColumnBuffers {
    fn clone(&self) -> Self {
        ColumnBuffers::default()
    }
}

/// Extra room a column is given when it must grow, as a fraction of its rows: a cluster that
/// gains 1% of its pods per cycle then fits the same memory for six cycles.
const HEADROOM: usize = 16;

/// `buffer` emptied, with room for `rows` values.
pub(super) fn emptied<T>(mut buffer: Vec<T>, rows: usize) -> Vec<T> {
    buffer.clear();
    if buffer.capacity() < rows {
        buffer.reserve_exact(with_headroom(rows));
    }
    buffer
}

/// The room a column that must grow to `rows` rows is given.
pub(super) fn with_headroom(rows: usize) -> usize {
    rows + rows / HEADROOM
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_keeps_its_memory_when_it_is_large_enough_and_grows_with_headroom_when_not() {
        let buffer = emptied(Vec::<u32>::with_capacity(100), 90);
        assert!(buffer.is_empty());
        assert_eq!(buffer.capacity(), 100);
        let grown = emptied(vec![1u32; 10], 160);
        assert!(grown.is_empty());
        assert!(grown.capacity() >= 170);
    }
}
