//! `NodeFailures`: why one task fails on each node, as a persistent map with a running count
//! of every reason.
//!
//! An equivalence class hands its map to every task that fits nowhere and keeps changing it as
//! other tasks' placements change nodes, and in a contended cluster that happens thousands of
//! times a cycle over thousands of nodes. So the map is nodes in fixed-size chunks behind shared
//! pointers: a copy shares everything, and changing one node of a shared map copies the chunk
//! list and that one chunk, not the map. The reason counts make the "0/N nodes are
//! unavailable" summary independent of the number of nodes.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::FitError;
use crate::model::NodeId;

/// Nodes per chunk: a change to a shared map copies this many entries.
const CHUNK: usize = 64;

type Chunk = [Option<FitError>; CHUNK];

/// Per-node failures of one task; cheap to clone (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct NodeFailures(Arc<Inner>);

#[derive(Debug, Clone, Default)]
struct Inner {
    /// Chunk `c` holds nodes `c * CHUNK ..`; `None` when none of them failed.
    chunks: Vec<Option<Arc<Chunk>>>,
    len: usize,
    /// Every reason of every entry, with how many times it occurs.
    reasons: BTreeMap<String, usize>,
}

impl Inner {
    fn count(&mut self, e: &FitError, added: bool) {
        for r in e.reasons() {
            if added {
                match self.reasons.get_mut(r) {
                    Some(c) => *c += 1,
                    None => {
                        self.reasons.insert(r.to_string(), 1);
                    }
                }
            } else if let Some(c) = self.reasons.get_mut(r) {
                *c -= 1;
                if *c == 0 {
                    self.reasons.remove(r);
                }
            }
        }
    }

    /// The slot of `n`, its chunk copied first when another map shares it.
    fn slot_mut(&mut self, n: NodeId) -> &mut Option<FitError> {
        let (c, i) = (n.idx() / CHUNK, n.idx() % CHUNK);
        if self.chunks.len() <= c {
            self.chunks.resize(c + 1, None);
        }
        let chunk = self.chunks[c].get_or_insert_with(|| Arc::new(std::array::from_fn(|_| None)));
        &mut Arc::make_mut(chunk)[i]
    }
}

impl NodeFailures {
    /// The failure on `n`, if it failed there.
    pub fn get(&self, n: NodeId) -> Option<&FitError> {
        let chunk = self.0.chunks.get(n.idx() / CHUNK)?.as_ref()?;
        chunk[n.idx() % CHUNK].as_ref()
    }

    /// Records why the task fails on `n` (a map that already says so is left shared).
    pub fn insert(&mut self, n: NodeId, e: FitError) {
        if self.get(n) == Some(&e) {
            return;
        }
        let inner = Arc::make_mut(&mut self.0);
        inner.count(&e, true);
        match inner.slot_mut(n).replace(e) {
            Some(old) => inner.count(&old, false),
            None => inner.len += 1,
        }
    }

    /// Forgets `n` (a map without it is left shared).
    pub fn remove(&mut self, n: NodeId) {
        if self.get(n).is_none() {
            return;
        }
        let inner = Arc::make_mut(&mut self.0);
        if let Some(old) = inner.slot_mut(n).take() {
            inner.count(&old, false);
            inner.len -= 1;
        }
    }

    /// Number of nodes with a failure.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// True when no node has a failure.
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// The failures, in node order.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, &FitError)> {
        self.0.chunks.iter().enumerate().flat_map(|(c, chunk)| {
            chunk.iter().flat_map(move |slots| {
                slots.iter().enumerate().filter_map(move |(i, e)| {
                    e.as_ref().map(|e| (NodeId((c * CHUNK + i) as u32), e))
                })
            })
        })
    }

    /// Each reason with the number of times it occurs over all nodes, in reason order.
    pub fn reason_counts(&self) -> impl Iterator<Item = (&str, usize)> {
        self.0.reasons.iter().map(|(r, n)| (r.as_str(), *n))
    }

    /// True when both are the same version of one map (a copy not changed since).
    pub fn same_version(&self, other: &NodeFailures) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl PartialEq for NodeFailures {
    fn eq(&self, other: &Self) -> bool {
        self.same_version(other) || (self.len() == other.len() && self.iter().eq(other.iter()))
    }
}

impl FromIterator<(NodeId, FitError)> for NodeFailures {
    fn from_iter<I: IntoIterator<Item = (NodeId, FitError)>>(iter: I) -> Self {
        let mut map = NodeFailures::default();
        for (n, e) in iter {
            map.insert(n, e);
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::StatusCode;

    fn err(reason: &'static str) -> FitError {
        FitError::new(StatusCode::Unschedulable, reason)
    }

    #[test]
    fn changing_a_copy_leaves_the_original_and_its_counts_unchanged() {
        let mut a: NodeFailures = (0..200).map(|n| (NodeId(n), err("full"))).collect();
        let b = a.clone();
        a.insert(NodeId(130), err("tainted"));
        a.remove(NodeId(5));
        assert_eq!(b.get(NodeId(130)), Some(&err("full")));
        assert_eq!(b.get(NodeId(5)), Some(&err("full")));
        assert_eq!(b.reason_counts().collect::<Vec<_>>(), [("full", 200)]);
        assert_eq!(a.get(NodeId(130)), Some(&err("tainted")));
        assert_eq!(a.get(NodeId(5)), None);
        assert_eq!(a.len(), 199);
        assert_eq!(
            a.reason_counts().collect::<Vec<_>>(),
            [("full", 198), ("tainted", 1)]
        );
    }

    #[test]
    fn inserting_the_same_failure_again_keeps_the_version() {
        let mut a: NodeFailures = [(NodeId(3), err("full"))].into_iter().collect();
        let b = a.clone();
        a.insert(NodeId(3), err("full"));
        a.remove(NodeId(4));
        assert!(a.same_version(&b));
    }

    #[test]
    fn iteration_is_in_node_order_and_counts_every_reason() {
        let two = FitError {
            statuses: Arc::new([
                crate::framework::Status {
                    code: StatusCode::Unschedulable,
                    reason: "a".into(),
                },
                crate::framework::Status {
                    code: StatusCode::Unschedulable,
                    reason: "b".into(),
                },
            ]),
        };
        let m: NodeFailures = [(NodeId(70), err("a")), (NodeId(2), two.clone())]
            .into_iter()
            .collect();
        let nodes: Vec<u32> = m.iter().map(|(n, _)| n.0).collect();
        assert_eq!(nodes, [2, 70]);
        assert_eq!(m.reason_counts().collect::<Vec<_>>(), [("a", 2), ("b", 1)]);
        let mut emptied = m.clone();
        emptied.remove(NodeId(2));
        emptied.remove(NodeId(70));
        assert!(emptied.is_empty());
        assert_eq!(emptied.reason_counts().count(), 0);
        assert_ne!(emptied, m);
    }
}
