//! A session column: one value per row of a snapshot table, indexed by that table's id type, so
//! a `JobId` on a task column does not compile. Anyone may read a column; only the framework
//! writes one, through `SessionState` and `Statement` methods that keep the columns that
//! depend on each other (a task's status and its job's counters, a node's tasks and sums) in
//! step.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Index;

use crate::model::RowId;

/// Values of type `T` by row id `I`.
pub struct Column<I, T> {
    values: Vec<T>,
    row: PhantomData<fn(I) -> I>,
}

impl<I, T: Clone> Clone for Column<I, T> {
    fn clone(&self) -> Self {
        Column::from(self.values.clone())
    }
}

impl<I, T: fmt::Debug> fmt::Debug for Column<I, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.values.fmt(f)
    }
}

impl<I, T> From<Vec<T>> for Column<I, T> {
    fn from(values: Vec<T>) -> Self {
        Column {
            values,
            row: PhantomData,
        }
    }
}

impl<I: RowId, T> Index<I> for Column<I, T> {
    type Output = T;

    fn index(&self, row: I) -> &T {
        &self.values[row.idx()]
    }
}

/// By a borrowed id too, as iterators over id lists hand them out.
impl<I: RowId, T> Index<&I> for Column<I, T> {
    type Output = T;

    fn index(&self, row: &I) -> &T {
        &self.values[row.idx()]
    }
}

impl<I: RowId, T> Column<I, T> {
    /// Every row set to `value`.
    pub fn filled(rows: usize, value: T) -> Self
    where
        T: Clone,
    {
        Column::from(vec![value; rows])
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values in row order.
    pub fn as_slice(&self) -> &[T] {
        &self.values
    }

    /// The values in row order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.values.iter()
    }

    pub(in crate::framework) fn set(&mut self, row: I, value: T) {
        self.values[row.idx()] = value;
    }

    pub(in crate::framework) fn get_mut(&mut self, row: I) -> &mut T {
        &mut self.values[row.idx()]
    }

    pub(in crate::framework) fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.values
    }

    pub(in crate::framework) fn into_vec(self) -> Vec<T> {
        self.values
    }
}

impl<'a, I: RowId, T> IntoIterator for &'a Column<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.values.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TaskId;

    #[test]
    fn a_column_is_read_by_its_row_id() {
        let mut c: Column<TaskId, u8> = Column::filled(3, 0);
        c.set(TaskId(1), 7);
        *c.get_mut(TaskId(2)) += 1;
        assert_eq!(c[TaskId(1)], 7);
        assert_eq!(c.as_slice(), [0, 7, 1]);
    }
}
