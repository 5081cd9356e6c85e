//! `IdLists`: one list of ids per row (a job's tasks, a job's sub-jobs, a node's pods at session
//! open), stored as one flat array and the offset where each row starts. A `Vec<Vec<_>>` would
//! be an allocation per job and per sub-job in every snapshot, and as many frees when the
//! snapshot goes.

use std::ops::Index;

use rayon::prelude::*;

/// Rows of ids; row `i` is `items[starts[i]..starts[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdLists<T> {
    starts: Vec<u32>,
    items: Vec<T>,
}

impl<T> Default for IdLists<T> {
    fn default() -> Self {
        IdLists {
            starts: vec![0],
            items: Vec::new(),
        }
    }
}

impl<T: Copy + Send + Sync> IdLists<T> {
    /// Rows of the given lengths, filled in order from `items` (which must hold their sum).
    pub fn from_lengths(lengths: impl IntoIterator<Item = usize>, items: Vec<T>) -> Self {
        let mut starts = vec![0u32];
        let mut end = 0u32;
        for len in lengths {
            end += len as u32;
            starts.push(end);
        }
        assert_eq!(
            end as usize,
            items.len(),
            "row lengths must add up to the items"
        );
        IdLists { starts, items }
    }

    /// Rows copied from a list per row, into one array allocated at its size.
    pub fn from_rows<R: AsRef<[T]>>(rows: &[R]) -> Self {
        let mut items = Vec::with_capacity(rows.iter().map(|r| r.as_ref().len()).sum());
        for r in rows {
            items.extend_from_slice(r.as_ref());
        }
        Self::from_lengths(rows.iter().map(|r| r.as_ref().len()), items)
    }

    /// The same items without the rows that have none (a row's index then differs).
    pub fn without_empty_rows(&self) -> Self {
        let mut starts = Vec::with_capacity(self.starts.len());
        starts.push(0);
        starts.extend(
            self.starts
                .windows(2)
                .filter(|w| w[0] != w[1])
                .map(|w| w[1]),
        );
        IdLists {
            starts,
            items: self.items.clone(),
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[T]> + '_ {
        self.starts
            .windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }

    /// The rows, in order, on the pool.
    pub fn par_iter(&self) -> impl IndexedParallelIterator<Item = &[T]> + '_ {
        self.starts
            .par_windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }
}

impl<T> Index<usize> for IdLists<T> {
    type Output = [T];

    fn index(&self, row: usize) -> &[T] {
        &self.items[self.starts[row] as usize..self.starts[row + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_the_lists_they_were_built_from_empty_ones_included() {
        let rows: Vec<Vec<u32>> = vec![vec![3, 1], vec![], vec![7]];
        let lists = IdLists::from_rows(&rows);
        assert_eq!(lists.len(), 3);
        assert_eq!(&lists[0], &[3, 1]);
        assert!(lists[1].is_empty());
        assert_eq!(lists.iter().collect::<Vec<_>>(), rows);
        assert_eq!(lists.par_iter().collect::<Vec<_>>(), rows);
        assert_eq!(IdLists::from_lengths([2, 0, 1], vec![3, 1, 7]), lists);
        let kept = lists.without_empty_rows();
        assert_eq!(kept.iter().collect::<Vec<_>>(), [&[3, 1][..], &[7]]);
    }

    #[test]
    fn no_rows_is_empty() {
        let lists = IdLists::<u32>::default();
        assert!(lists.is_empty());
        assert_eq!(lists.iter().count(), 0);
    }
}
