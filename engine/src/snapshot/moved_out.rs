//! An owned column whose values are moved out a run at a time, each run in one copy.
//!
//! A snapshot build takes most of its task rows from the earlier table's columns, in runs at
//! increasing positions. Through the column's iterator each value of a column of strings or
//! resources would be moved with a check and a step of its own; a run is one block of memory,
//! so it is copied as one.

use std::mem::ManuallyDrop;
use std::ptr;

/// The values of a column not yet moved out: `buffer`'s from `next` to `len`. The buffer's own
/// length is 0, so it owns only its memory, and the values are each moved out exactly once,
/// or dropped with it.
pub(super) struct MovedOut<T> {
    buffer: ManuallyDrop<Vec<T>>,
    next: usize,
    len: usize,
}

impl<T> MovedOut<T> {
    pub(super) fn new(values: Vec<T>) -> Self {
        let mut buffer = ManuallyDrop::new(values);
        let len = buffer.len();
        // SAFETY: a shorter length only makes the vector stop reading and dropping the values
        // past it; `MovedOut` keeps them, moves each out once (`move_to`) and drops the rest.
        #[allow(unsafe_code, reason = "a run of values is moved in one copy")]
        unsafe {
            buffer.set_len(0);
        }
        MovedOut {
            buffer,
            next: 0,
            len,
        }
    }

    /// How many values the column had.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Moves the values not yet moved out before position `end` to the end of `out`.
    ///
    /// # Panics
    /// If `end` is before a position already moved past, or past the column's end.
    pub(super) fn move_to(&mut self, end: usize, out: &mut Vec<T>) {
        assert!(
            self.next <= end && end <= self.len,
            "values {}..{} of {} moved out of order",
            self.next,
            end,
            self.len
        );
        let n = end - self.next;
        out.reserve(n);
        // SAFETY: values `next..end` are initialised and no longer owned by the buffer (its
        // length is 0) nor moved out before (`next` only grows, and `end <= len`); `out` has
        // room for `n` more after `reserve`, and it is another allocation than the buffer (a
        // `&mut Vec` cannot be this column's buffer, which only `self` holds). Once copied,
        // `next` passes them, so they are neither moved out again nor dropped here.
        #[allow(unsafe_code, reason = "a run of values is moved in one copy")]
        unsafe {
            let from = self.buffer.as_ptr().add(self.next);
            ptr::copy_nonoverlapping(from, out.as_mut_ptr().add(out.len()), n);
            out.set_len(out.len() + n);
        }
        self.next = end;
    }
}

impl<T> Drop for MovedOut<T> {
    /// Drops the values never moved out, then frees the buffer.
    fn drop(&mut self) {
        // SAFETY: values `next..len` are initialised and still owned here (see `move_to`);
        // after they are dropped the buffer, of length 0, frees only its memory, once.
        #[allow(unsafe_code, reason = "a run of values is moved in one copy")]
        unsafe {
            let rest = self.buffer.as_mut_ptr().add(self.next);
            ptr::drop_in_place(ptr::slice_from_raw_parts_mut(rest, self.len - self.next));
            ManuallyDrop::drop(&mut self.buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn runs_move_out_in_order_and_the_values_never_moved_out_are_dropped_once() {
        let shared = Arc::new(());
        let values: Vec<Arc<()>> = (0..10).map(|_| Arc::clone(&shared)).collect();
        let mut column = MovedOut::new(values);
        let (mut out, mut left) = (Vec::new(), Vec::new());
        column.move_to(2, &mut left);
        column.move_to(5, &mut out);
        column.move_to(5, &mut out);
        column.move_to(7, &mut left);
        column.move_to(8, &mut out);
        assert_eq!((out.len(), left.len(), column.len()), (4, 4, 10));
        assert_eq!(
            Arc::strong_count(&shared),
            11,
            "nothing dropped or copied twice yet"
        );
        drop(column);
        assert_eq!(
            Arc::strong_count(&shared),
            9,
            "the two never moved out were dropped"
        );
        drop((out, left));
        assert_eq!(Arc::strong_count(&shared), 1);
    }

    #[test]
    #[should_panic(expected = "moved out of order")]
    fn moving_back_before_a_run_already_moved_panics() {
        let mut column = MovedOut::new(vec![String::from("a"), String::from("b")]);
        let mut out = Vec::new();
        column.move_to(2, &mut out);
        column.move_to(1, &mut out);
    }

    #[test]
    #[should_panic(expected = "moved out of order")]
    fn moving_past_the_end_panics() {
        let mut column = MovedOut::new(vec![1u8, 2]);
        column.move_to(3, &mut Vec::new());
    }
}
