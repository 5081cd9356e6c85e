//! The scalar dimensions of a `Resource`: entries sorted by `Dim`, Go's nil map kept apart from
//! an empty one.
//!
//! Up to two entries live inline. A pod's request holds `pods` and at most one device, so the
//! request columns of hundreds of thousands of tasks hold no heap pointer: copying a request
//! (every snapshot does, for every task) allocates nothing, and dropping one frees nothing.

use super::Dim;

/// Entries kept without a heap allocation.
const INLINE: usize = 2;

#[derive(Debug, Clone, Default)]
pub(super) enum ScalarMap {
    /// Go's nil map.
    #[default]
    Nil,
    Inline {
        len: u8,
        items: [(Dim, f64); INLINE],
    },
    Heap(Vec<(Dim, f64)>),
}

impl ScalarMap {
    /// An empty, non-nil map.
    pub fn empty() -> ScalarMap {
        ScalarMap::Inline {
            len: 0,
            items: [(Dim::PODS, 0.0); INLINE],
        }
    }

    pub fn is_nil(&self) -> bool {
        matches!(self, ScalarMap::Nil)
    }

    /// The entries, in dimension order (none for nil).
    pub fn as_slice(&self) -> &[(Dim, f64)] {
        match self {
            ScalarMap::Nil => &[],
            ScalarMap::Inline { len, items } => &items[..usize::from(*len)],
            ScalarMap::Heap(v) => v,
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [(Dim, f64)] {
        match self {
            ScalarMap::Nil => &mut [],
            ScalarMap::Inline { len, items } => &mut items[..usize::from(*len)],
            ScalarMap::Heap(v) => v,
        }
    }

    pub fn get(&self, d: Dim) -> Option<f64> {
        let v = self.as_slice();
        v.binary_search_by_key(&d, |e| e.0).ok().map(|i| v[i].1)
    }

    /// Sets `d` to `value`, making a nil map a map.
    pub fn set(&mut self, d: Dim, value: f64) {
        match self.as_slice().binary_search_by_key(&d, |e| e.0) {
            Ok(i) => self.as_mut_slice()[i].1 = value,
            Err(i) => self.insert(i, (d, value)),
        }
    }

    /// Adds `sign` times each of `other`'s entries to this map's, as `set(d, get(d) + sign * v)`
    /// entry by entry would (so a nil map becomes a map only when `other` has entries). When
    /// both hold the same dimensions, as two requests of a cluster mostly do (`pods` and
    /// perhaps one device), the values are added pairwise without a search: summing 400k
    /// requests per node and per job at every session open was mostly those searches.
    pub fn add_scaled(&mut self, other: &ScalarMap, sign: f64) {
        let theirs = other.as_slice();
        let ours = self.as_mut_slice();
        if ours.len() == theirs.len() && ours.iter().zip(theirs).all(|(a, b)| a.0 == b.0) {
            for (a, b) in ours.iter_mut().zip(theirs) {
                a.1 += sign * b.1;
            }
            return;
        }
        for &(d, v) in theirs {
            let cur = self.get(d).unwrap_or(0.0);
            self.set(d, cur + sign * v);
        }
    }

    /// Inserts `e` at position `i` of the entries.
    fn insert(&mut self, i: usize, e: (Dim, f64)) {
        if self.is_nil() {
            *self = ScalarMap::empty();
        }
        match self {
            ScalarMap::Inline { len, items } if usize::from(*len) < INLINE => {
                let n = usize::from(*len);
                items.copy_within(i..n, i + 1);
                items[i] = e;
                *len += 1;
            }
            ScalarMap::Inline { len, items } => {
                let mut v = Vec::with_capacity(INLINE * 2);
                v.extend_from_slice(&items[..usize::from(*len)]);
                v.insert(i, e);
                *self = ScalarMap::Heap(v);
            }
            ScalarMap::Heap(v) => v.insert(i, e),
            ScalarMap::Nil => unreachable!("made a map above"),
        }
    }
}

/// Equal when both are nil, or both are maps with the same entries (wherever they are kept).
impl PartialEq for ScalarMap {
    fn eq(&self, other: &Self) -> bool {
        self.is_nil() == other.is_nil() && self.as_slice() == other.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_stay_sorted_inline_and_after_spilling_to_the_heap() {
        let (a, b, c) = (Dim::of("x/a"), Dim::of("x/b"), Dim::of("x/c"));
        let mut m = ScalarMap::default();
        m.set(c, 3.0);
        m.set(a, 1.0);
        assert!(matches!(m, ScalarMap::Inline { len: 2, .. }));
        m.set(b, 2.0);
        m.set(a, 10.0);
        assert!(matches!(m, ScalarMap::Heap(_)));
        assert_eq!(m.as_slice(), [(a, 10.0), (b, 2.0), (c, 3.0)]);
        assert_eq!(m.get(b), Some(2.0));
        assert_eq!(m.get(Dim::PODS), None);
    }

    #[test]
    fn add_scaled_sums_pairwise_on_the_same_dimensions_and_entry_by_entry_otherwise() {
        let (a, b) = (Dim::of("x/a"), Dim::of("x/b"));
        let map = |entries: &[(Dim, f64)]| {
            let mut m = ScalarMap::empty();
            for &(d, v) in entries {
                m.set(d, v);
            }
            m
        };
        let mut same = map(&[(Dim::PODS, 1.0), (a, 2.0)]);
        same.add_scaled(&map(&[(Dim::PODS, 3.0), (a, 4.0)]), 1.0);
        assert_eq!(same.as_slice(), [(Dim::PODS, 4.0), (a, 6.0)]);
        same.add_scaled(&map(&[(Dim::PODS, 1.0), (a, 1.0)]), -1.0);
        assert_eq!(same.as_slice(), [(Dim::PODS, 3.0), (a, 5.0)]);
        let mut other = map(&[(a, 1.0)]);
        other.add_scaled(&map(&[(Dim::PODS, 1.0), (b, 2.0)]), -1.0);
        assert_eq!(other.as_slice(), [(Dim::PODS, -1.0), (a, 1.0), (b, -2.0)]);
        let mut nil = ScalarMap::Nil;
        nil.add_scaled(&ScalarMap::empty(), 1.0);
        assert!(nil.is_nil(), "nothing added, still nil");
        nil.add_scaled(&map(&[(Dim::PODS, 1.0)]), 1.0);
        assert_eq!(nil, map(&[(Dim::PODS, 1.0)]));
    }

    #[test]
    fn nil_differs_from_empty_and_storage_does_not_matter() {
        assert_ne!(ScalarMap::Nil, ScalarMap::empty());
        let mut inline = ScalarMap::empty();
        inline.set(Dim::PODS, 1.0);
        let heap = ScalarMap::Heap(vec![(Dim::PODS, 1.0)]);
        assert_eq!(inline, heap);
    }
}
