//! The named sizes of `docs/workloads.md`, so every figure names its cluster.

use super::GangMixed;

/// The default seed of the family.
pub const DEFAULT_SEED: u64 = 1;

/// `(name, nodes, pending pods)` of each named size.
pub const NAMED_SIZES: [(&str, u64, u64); 4] = [
    ("small", 1_000, 1_000),
    ("medium", 10_000, 10_000),
    ("large", 50_000, 50_000),
    ("medium-contended", 10_000, 200_000),
];

/// The cluster of a named size, or `None` when the name is not one.
pub fn named(name: &str, seed: u64) -> Option<GangMixed> {
    NAMED_SIZES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(_, nodes, pending)| GangMixed {
            nodes,
            pending,
            seed,
        })
}

/// The known names, for messages.
pub fn names() -> String {
    NAMED_SIZES.map(|(n, _, _)| n).join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_sizes_match_the_table() {
        let c = named("large", DEFAULT_SEED).unwrap().counts();
        assert_eq!((c.nodes, c.running_pods), (50_000, 375_000));
        let c = named("medium-contended", 7).unwrap();
        assert_eq!((c.nodes, c.pending, c.seed), (10_000, 200_000, 7));
        assert!(named("huge", 1).is_none());
        assert_eq!(names(), "small, medium, large, medium-contended");
    }
}
