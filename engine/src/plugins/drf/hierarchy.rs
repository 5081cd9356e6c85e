//! Hierarchical DRF: a tree from the root through the path in each job queue's
//! `volcano.sh/hierarchy` annotation (weights from `volcano.sh/hierarchy-weights`) down to one
//! leaf per job. An inner node's share is that of its children's allocations rescaled to the
//! smallest unsaturated child share, so queues compare level by level by `share / weight`.

use std::collections::BTreeMap;

use super::dominant::DominantShare;
use crate::framework::SessionState;
use crate::model::{JobId, QueueId, Resource, ResourceName};

const HIERARCHY_ANNOTATION: &str = "volcano.sh/hierarchy";
const WEIGHTS_ANNOTATION: &str = "volcano.sh/hierarchy-weights";

#[derive(Debug, Clone)]
struct Node {
    weight: f64,
    allocated: Resource,
    share: f64,
    saturated: bool,
    /// A leaf's job's total request.
    request: Resource,
    /// `None` for a job leaf; path component or job UID → node.
    children: Option<BTreeMap<String, usize>>,
}

impl Node {
    fn inner(weight: f64) -> Node {
        Node {
            weight,
            allocated: Resource::empty(),
            share: 0.0,
            saturated: false,
            request: Resource::empty(),
            children: Some(BTreeMap::new()),
        }
    }
}

/// The tree (node 0 is the root) with the cluster-wide allocation it was computed for.
#[derive(Debug, Clone)]
pub(super) struct Tree {
    nodes: Vec<Node>,
    total_allocated: Resource,
}

impl Default for Tree {
    fn default() -> Self {
        Tree {
            nodes: vec![Node::inner(1.0)],
            total_allocated: Resource::empty(),
        }
    }
}

fn annotation<'a>(ssn: &'a SessionState, q: QueueId, key: &str) -> &'a str {
    ssn.snap.queues.object[q.idx()]
        .metadata
        .annotations
        .get(key)
        .map(String::as_str)
        .unwrap_or("")
}

/// A path weight: unparsable, missing or below 1 counts as 1. (Volcano indexes the weights
/// list by path position and crashes when it is shorter than the path.)
fn weight(weights: &[&str], i: usize) -> f64 {
    let w = weights
        .get(i)
        .and_then(|w| w.parse::<f64>().ok())
        .unwrap_or(0.0);
    if w < 1.0 { 1.0 } else { w }
}

/// `resourceSaturated`: the job has all it asked for of some dimension it holds, or holds a
/// dimension the cluster has run out of.
fn saturated(allocated: &Resource, request: &Resource, demanding: &[ResourceName]) -> bool {
    allocated.resource_names().any(|n| {
        let (a, r) = (allocated.get(n), request.get(n));
        (a != 0.0 && r != 0.0 && a >= r) || (!demanding.contains(&n) && r != 0.0)
    })
}

impl Tree {
    /// Books `r` in the cluster-wide allocation.
    pub fn add_allocated(&mut self, r: &Resource) {
        self.total_allocated.add(r);
    }

    /// Releases `r` from the cluster-wide allocation.
    pub fn sub_allocated(&mut self, r: &Resource) {
        self.total_allocated.sub(r);
    }

    /// Places (or replaces) job `j`'s leaf with the given allocation and share, creating the
    /// path of its queue's hierarchy as needed. Call `recompute` afterwards.
    pub fn set_job(&mut self, ssn: &SessionState, j: JobId, allocated: &Resource, share: f64) {
        let q = ssn.snap.jobs.queue[j.idx()];
        let paths: Vec<&str> = annotation(ssn, q, HIERARCHY_ANNOTATION)
            .split('/')
            .collect();
        let weights: Vec<&str> = annotation(ssn, q, WEIGHTS_ANNOTATION).split('/').collect();
        let mut at = 0;
        for (i, part) in paths.iter().enumerate().skip(1) {
            at = match self.child(at, part) {
                Some(c) => c,
                None => self.insert(at, part, Node::inner(weight(&weights, i))),
            };
        }
        let leaf = Node {
            weight: 1.0,
            allocated: allocated.clone(),
            share,
            saturated: false,
            request: ssn.jobs.total_request[j].clone(),
            children: None,
        };
        let uid = &ssn.snap.jobs.uid[j.idx()];
        match self.child(at, uid) {
            Some(c) => self.nodes[c] = leaf,
            None => {
                self.insert(at, uid, leaf);
            }
        }
    }

    fn child(&self, at: usize, key: &str) -> Option<usize> {
        self.nodes[at].children.as_ref()?.get(key).copied()
    }

    fn insert(&mut self, at: usize, key: &str, node: Node) -> usize {
        let id = self.nodes.len();
        self.nodes.push(node);
        if let Some(children) = self.nodes[at].children.as_mut() {
            children.insert(key.to_string(), id);
        }
        id
    }

    /// Recomputes saturation, allocation and share of every node bottom-up.
    pub fn recompute(&mut self, dom: &DominantShare) {
        let demanding = dom.demanding(&self.total_allocated);
        self.update(0, dom, &demanding);
    }

    fn update(&mut self, at: usize, dom: &DominantShare, demanding: &[ResourceName]) {
        let Some(children) = self.nodes[at]
            .children
            .as_ref()
            .map(|c| c.values().copied().collect::<Vec<_>>())
        else {
            let n = &mut self.nodes[at];
            n.saturated = saturated(&n.allocated, &n.request, demanding);
            return;
        };
        let mut mdr: f64 = 1.0;
        for &c in &children {
            self.update(c, dom, demanding);
            let child = &self.nodes[c];
            if child.share != 0.0 && !child.saturated {
                mdr = mdr.min(dom.of(&child.allocated));
            }
        }
        let mut allocated = Resource::empty();
        let mut all_saturated = true;
        for &c in &children {
            let child = &self.nodes[c];
            all_saturated &= child.saturated;
            if child.share == 0.0 {
                continue;
            }
            if child.saturated {
                allocated.add(&child.allocated);
            } else {
                let mut scaled = child.allocated.clone();
                scaled.multi(mdr / child.share);
                allocated.add(&scaled);
            }
        }
        let n = &mut self.nodes[at];
        n.share = dom.of(&allocated);
        n.allocated = allocated;
        n.saturated = all_saturated;
    }

    /// `compareQueues`: walks both queues' paths from the root; at the first level where the
    /// nodes differ, an unsaturated node goes before a saturated one, else the smaller
    /// `share / weight`. Negative: `l` first.
    pub fn compare(&self, ssn: &SessionState, l: QueueId, r: QueueId) -> f64 {
        let lpaths: Vec<&str> = annotation(ssn, l, HIERARCHY_ANNOTATION)
            .split('/')
            .collect();
        let rpaths: Vec<&str> = annotation(ssn, r, HIERARCHY_ANNOTATION)
            .split('/')
            .collect();
        let depth = lpaths.len().min(rpaths.len());
        let (mut ln, mut rn) = (0, 0);
        for i in 0..depth {
            let (lnode, rnode) = (&self.nodes[ln], &self.nodes[rn]);
            if !lnode.saturated && rnode.saturated {
                return -1.0;
            }
            if lnode.saturated && !rnode.saturated {
                return 1.0;
            }
            let (lw, rw) = (lnode.share / lnode.weight, rnode.share / rnode.weight);
            if lw != rw {
                return lw - rw;
            }
            if i + 1 < depth {
                // A path without session jobs has no node; Volcano would crash here.
                match (self.child(ln, lpaths[i + 1]), self.child(rn, rpaths[i + 1])) {
                    (Some(a), Some(b)) => (ln, rn) = (a, b),
                    _ => return 0.0,
                }
            }
        }
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_unparsable_or_small_weights_count_as_one() {
        let w = ["100", "x", "0.5", "3"];
        assert_eq!(weight(&w, 0), 100.0);
        assert_eq!(weight(&w, 1), 1.0);
        assert_eq!(weight(&w, 2), 1.0);
        assert_eq!(weight(&w, 3), 3.0);
        assert_eq!(weight(&w, 7), 1.0);
    }

    #[test]
    fn a_job_is_saturated_when_it_has_its_request_or_holds_an_exhausted_dimension() {
        let req = Resource::cpu_mem(2000.0, 10.0);
        let both = [ResourceName::Cpu, ResourceName::Memory];
        assert!(saturated(&Resource::cpu_mem(2000.0, 5.0), &req, &both));
        assert!(!saturated(&Resource::cpu_mem(1000.0, 5.0), &req, &both));
        assert!(saturated(
            &Resource::cpu_mem(1000.0, 5.0),
            &req,
            &[ResourceName::Cpu]
        ));
    }
}
