//! How much input a manifest file may hold, sized for the largest cluster tephra targets: a
//! 50,000-node cluster dumped with `kubectl get nodes,pods,podgroups,queues -o yaml`.
//!
//! The estimate behind the numbers: a Node as kubectl prints it is about 700 YAML nodes
//! (scalars, mappings and sequences; its image list is most of them) in about 12 KB, a Pod about
//! 400 in about 6 KB. At the `large` workload's 8.5 pods a node that is 50,000 Nodes and 425,000
//! Pods: about 205 million YAML nodes, 3.1 GB of text, and 475,000 documents when every object
//! is a document of its own. Each limit is at least twice that; beyond it a file is far more
//! likely a mistake or an attack than a cluster.
//!
//! A gzip file may also inflate to at most `MAX_INFLATION_RATIO` times its own size: dumps of
//! real and generated clusters compress 10 to 70 times, while a bomb of repeated bytes
//! compresses about 1,000 times.

use std::io::{self, BufRead, Read};

use serde_saphyr::budget::BudgetBreach;

/// The most bytes of text one manifest file may hold (after decompression).
pub const MAX_TEXT_BYTES: u64 = 8 << 30;
/// How many times its own size a gzip file may inflate to.
pub const MAX_INFLATION_RATIO: u64 = 256;
/// A gzip file may always inflate to this much, however small it is.
pub const MIN_INFLATED_LIMIT: u64 = 64 << 20;
/// YAML nodes (scalars, mappings, sequences) in one file.
pub const MAX_YAML_NODES: usize = 512_000_000;
/// Parser events in one file: every node, the end of every collection, every document mark.
pub const MAX_YAML_EVENTS: usize = 2 * MAX_YAML_NODES;
/// YAML documents in one file.
pub const MAX_YAML_DOCUMENTS: usize = 1_000_000;
/// Nesting of mappings and sequences: a deep Kubernetes field inside a `List` is about 15.
pub const MAX_YAML_DEPTH: usize = 64;

/// The budget YAML files are parsed under; alias and anchor limits keep their defaults, which
/// stop a "billion laughs" file (Kubernetes objects use no aliases).
pub fn yaml_budget() -> serde_saphyr::Budget {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_reader_input_bytes = None;
    budget.max_events = MAX_YAML_EVENTS;
    budget.max_nodes = MAX_YAML_NODES;
    budget.max_documents = MAX_YAML_DOCUMENTS;
    budget.max_depth = MAX_YAML_DEPTH;
    budget.max_total_scalar_bytes = usize::try_from(MAX_TEXT_BYTES).unwrap_or(usize::MAX);
    budget
}

/// A budget breach as one sentence that states the limit.
pub fn describe_breach(breach: &BudgetBreach) -> String {
    let why = "the limit, at least twice a 50,000-node cluster's dump";
    match breach {
        BudgetBreach::Nodes { .. } => {
            format!("more than {MAX_YAML_NODES} YAML nodes ({why})")
        }
        BudgetBreach::Events { .. } => {
            format!("more than {MAX_YAML_EVENTS} YAML parser events ({why})")
        }
        BudgetBreach::Documents { .. } => {
            format!("more than {MAX_YAML_DOCUMENTS} YAML documents ({why})")
        }
        BudgetBreach::ScalarBytes { .. } => {
            format!("more than {MAX_TEXT_BYTES} bytes of YAML scalars ({why})")
        }
        BudgetBreach::Depth { .. } => format!(
            "mappings and sequences nested more than {MAX_YAML_DEPTH} deep (the limit; a Kubernetes object nests about 15)"
        ),
        BudgetBreach::Aliases { .. }
        | BudgetBreach::Anchors { .. }
        | BudgetBreach::AliasAnchorRatio { .. }
        | BudgetBreach::RecordedAnchorEvents { .. }
        | BudgetBreach::RecordedAnchorBytes { .. }
        | BudgetBreach::MergeKeys { .. } => {
            let b = serde_saphyr::Budget::default();
            format!(
                "YAML aliases, anchors or merge keys beyond the limits (at most {} aliases, {} anchors, {} merge keys, and few aliases per anchor); Kubernetes objects need none",
                b.max_aliases, b.max_anchors, b.max_merge_keys
            )
        }
        _ => "YAML the parser's safety limits refuse (a broken or hostile file)".to_string(),
    }
}

/// The most bytes a gzip file of `compressed` bytes may inflate to.
pub fn inflated_limit(compressed: u64) -> u64 {
    compressed
        .saturating_mul(MAX_INFLATION_RATIO)
        .clamp(MIN_INFLATED_LIMIT, MAX_TEXT_BYTES)
}

/// A reader that fails once more than `limit` bytes have come through, saying why.
pub struct Limited<R> {
    inner: R,
    left: u64,
    limit: u64,
    why: &'static str,
}

impl<R> Limited<R> {
    /// `why` says where `limit` comes from, for the error.
    pub fn new(inner: R, limit: u64, why: &'static str) -> Self {
        Limited {
            inner,
            left: limit,
            limit,
            why,
        }
    }

    fn too_large(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("more than {} bytes of text ({})", self.limit, self.why),
        )
    }
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // One more byte tells a file of exactly `limit` bytes from a longer one.
            return match self.inner.read(&mut [0u8])? {
                0 => Ok(0),
                _ => Err(self.too_large()),
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Limited<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.left == 0 {
            if self.inner.fill_buf()?.is_empty() {
                return Ok(&[]);
            }
            return Err(self.too_large());
        }
        let left = usize::try_from(self.left).unwrap_or(usize::MAX);
        let buf = self.inner.fill_buf()?;
        Ok(&buf[..buf.len().min(left)])
    }

    fn consume(&mut self, n: usize) {
        self.left -= n as u64;
        self.inner.consume(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8], limit: u64) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        Limited::new(bytes, limit, "test").read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn a_reader_at_its_limit_is_read_whole_and_one_byte_more_is_refused() {
        assert_eq!(read_all(b"abcd", 4).unwrap(), b"abcd");
        let e = read_all(b"abcde", 4).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(e.to_string(), "more than 4 bytes of text (test)");
    }

    #[test]
    fn a_buffered_reader_stops_at_its_limit_too() {
        let mut r = Limited::new(&b"abcdef"[..], 3, "test");
        assert_eq!(r.fill_buf().unwrap(), b"abc");
        r.consume(3);
        assert!(r.fill_buf().is_err());
    }

    #[test]
    fn an_alias_breach_is_told_in_words_with_its_limits() {
        let text = describe_breach(&BudgetBreach::Aliases { aliases: 50_001 });
        assert_eq!(
            text,
            "YAML aliases, anchors or merge keys beyond the limits (at most 50000 aliases, 50000 anchors, 10000 merge keys, and few aliases per anchor); Kubernetes objects need none"
        );
    }

    #[test]
    fn inflation_is_bounded_by_ratio_floor_and_ceiling() {
        assert_eq!(inflated_limit(1_000), MIN_INFLATED_LIMIT);
        assert_eq!(inflated_limit(1 << 20), 256 << 20);
        assert_eq!(inflated_limit(1 << 30), MAX_TEXT_BYTES);
    }

    #[test]
    fn the_budget_admits_a_dump_twice_the_size_of_a_50000_node_cluster() {
        let b = yaml_budget();
        assert!(b.max_nodes >= 2 * 205_000_000);
        assert!(b.max_documents >= 2 * 475_000);
        assert_eq!(b.max_reader_input_bytes, None);
    }
}
