//! Sets of CPU ids and the Linux CPU-list text they are written in (`0-3,8`), as
//! `k8s.io/utils/cpuset` reads it.

use std::collections::BTreeSet;

/// A set of CPU ids, ordered.
pub type CpuSet = BTreeSet<i32>;

/// Parses a CPU list (`0-3,8`, or empty). Text that is not one gives the empty set, as
/// Volcano's cache keeps what `cpuset.Parse` returns on error (Volcano:
/// pkg/scheduler/cache/event_handlers.go, getNumaInfo).
pub fn parse_cpu_list(text: &str) -> CpuSet {
    try_parse(text).unwrap_or_default()
}

fn try_parse(text: &str) -> Option<CpuSet> {
    let mut set = CpuSet::new();
    if text.is_empty() {
        return Some(set);
    }
    for part in text.split(',') {
        match part.split_once('-') {
            None => {
                set.insert(part.parse().ok()?);
            }
            Some((start, end)) => {
                let (start, end): (i32, i32) = (start.parse().ok()?, end.parse().ok()?);
                if start > end {
                    return None;
                }
                set.extend(start..=end);
            }
        }
    }
    Some(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_single_ids_are_read_and_bad_text_gives_nothing() {
        assert_eq!(parse_cpu_list("0-2,5"), CpuSet::from([0, 1, 2, 5]));
        assert!(parse_cpu_list("").is_empty());
        assert!(parse_cpu_list("3-1").is_empty());
        assert!(parse_cpu_list("0,x").is_empty());
    }
}
