//! NUMA node sets as bit masks, as the kubelet's topology manager writes them
//! (`k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask`).

/// A set of NUMA node ids below 64, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumaMask(pub u64);

impl NumaMask {
    /// The mask of `ids`; ids outside 0..64 are left out.
    pub fn of(ids: impl IntoIterator<Item = i32>) -> NumaMask {
        NumaMask(
            ids.into_iter()
                .filter(|i| (0..64).contains(i))
                .fold(0, |m, i| m | 1 << i),
        )
    }

    /// How many nodes it holds.
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether `id` is in it.
    pub fn contains(self, id: i32) -> bool {
        (0..64).contains(&id) && self.0 & (1 << id) != 0
    }

    /// The nodes in both.
    pub fn and(self, other: NumaMask) -> NumaMask {
        NumaMask(self.0 & other.0)
    }

    /// Fewer nodes, or as many with the lower-numbered ones set (the kubelet's
    /// `IsNarrowerThan`, which compares equal-sized masks as numbers).
    pub fn is_narrower_than(self, other: NumaMask) -> bool {
        if self.count() == other.count() {
            self.0 < other.0
        } else {
            self.count() < other.count()
        }
    }

    /// Every non-empty subset of `ids`, smallest first and, within a size, in the order the
    /// ids are combined (the kubelet's `IterateBitMasks`).
    pub fn subsets(ids: &[i32]) -> Vec<NumaMask> {
        fn walk(ids: &[i32], picked: &mut Vec<i32>, size: usize, out: &mut Vec<NumaMask>) {
            if picked.len() == size {
                out.push(NumaMask::of(picked.iter().copied()));
                return;
            }
            for (i, &id) in ids.iter().enumerate() {
                picked.push(id);
                walk(&ids[i + 1..], picked, size, out);
                picked.pop();
            }
        }
        let mut out = Vec::new();
        for size in 1..=ids.len() {
            walk(ids, &mut Vec::new(), size, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_come_by_size_then_in_combination_order() {
        let masks: Vec<u64> = NumaMask::subsets(&[0, 1, 2]).iter().map(|m| m.0).collect();
        assert_eq!(masks, [0b001, 0b010, 0b100, 0b011, 0b101, 0b110, 0b111]);
    }

    #[test]
    fn narrower_means_fewer_nodes_then_lower_ones() {
        assert!(NumaMask(0b01).is_narrower_than(NumaMask(0b11)));
        assert!(NumaMask(0b011).is_narrower_than(NumaMask(0b101)));
        assert!(!NumaMask(0b10).is_narrower_than(NumaMask(0b01)));
    }
}
