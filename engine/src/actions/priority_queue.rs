//! A binary heap that pops exactly as Volcano's `util.PriorityQueue` (Go `container/heap`):
//! the same sift-up / sift-down steps, so even comparators whose answers change while elements
//! wait (queue shares, job readiness) pop in the same order as Volcano.

/// A heap of `T`; the `less` function is passed to each operation so it can read live state.
#[derive(Debug, Clone)]
pub struct PriorityQueue<T> {
    items: Vec<T>,
}

impl<T: Copy> Default for PriorityQueue<T> {
    fn default() -> Self {
        PriorityQueue { items: Vec::new() }
    }
}

impl<T: Copy> PriorityQueue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Pushes `x`; `less(a, b)` is true when `a` must pop first.
    pub fn push(&mut self, x: T, less: impl Fn(T, T) -> bool) {
        self.items.push(x);
        let mut j = self.items.len() - 1;
        while j > 0 {
            let i = (j - 1) / 2;
            if !less(self.items[j], self.items[i]) {
                break;
            }
            self.items.swap(i, j);
            j = i;
        }
    }

    /// Pops the first element.
    pub fn pop(&mut self, less: impl Fn(T, T) -> bool) -> Option<T> {
        let n = self.items.len();
        if n == 0 {
            return None;
        }
        self.items.swap(0, n - 1);
        let end = n - 1;
        let mut i = 0;
        loop {
            let j1 = 2 * i + 1;
            if j1 >= end {
                break;
            }
            let mut j = j1;
            if j1 + 1 < end && less(self.items[j1 + 1], self.items[j1]) {
                j = j1 + 1;
            }
            if !less(self.items[j], self.items[i]) {
                break;
            }
            self.items.swap(i, j);
            i = j;
        }
        self.items.pop()
    }

    /// The elements in heap order (not popping order).
    pub fn items(&self) -> &[T] {
        &self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_comparator_order() {
        let mut q = PriorityQueue::new();
        for x in [5, 1, 4, 2, 3] {
            q.push(x, |a, b| a < b);
        }
        let out: Vec<i32> = std::iter::from_fn(|| q.pop(|a, b| a < b)).collect();
        assert_eq!(out, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn equal_elements_come_out_in_go_heap_order() {
        // With an always-false comparator Go's heap pops the root, then whatever the
        // swap-with-last step moved there: pushing a, b, c pops a, then c, then b.
        let mut q = PriorityQueue::new();
        for x in ['a', 'b', 'c'] {
            q.push(x, |_, _| false);
        }
        let out: String = std::iter::from_fn(|| q.pop(|_, _| false)).collect();
        assert_eq!(out, "acb");
    }
}
