//! The node table: static node attributes, one column per field.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use foldhash::fast::FixedState;

use crate::api::{NodeMetrics, Taint};
use crate::model::{NodeId, Resource};

/// Nodes, in the order they were first seen (Volcano's `NodeList`).
#[derive(Debug, Default)]
pub struct NodeTable {
    pub name: Vec<String>,
    pub labels: Vec<BTreeMap<String, String>>,
    pub taints: Vec<Vec<Taint>>,
    pub unschedulable: Vec<bool>,
    pub allocatable: Vec<Resource>,
    pub capacity: Vec<Resource>,
    /// Image name → size in bytes, for image locality.
    pub images: Vec<Arc<BTreeMap<String, i64>>>,
    /// Measured utilisation in percent of allocatable (Volcano's `ResourceUsage` averages), when a
    /// metrics source reported it.
    pub usage: Vec<Option<NodeUsage>>,
    pub by_name: HashMap<String, NodeId, FixedState>,
}

/// A node's measured cpu and memory utilisation, in percent of allocatable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeUsage {
    pub cpu_percent: f64,
    pub memory_percent: f64,
}

impl NodeUsage {
    /// The utilisation `metrics` report, in percent of `allocatable`.
    pub fn of(metrics: &NodeMetrics, allocatable: &Resource) -> NodeUsage {
        let used = Resource::from_list(&metrics.usage);
        let pct = |u: f64, a: f64| if a > 0.0 { u * 100.0 / a } else { 0.0 };
        NodeUsage {
            cpu_percent: pct(used.milli_cpu, allocatable.milli_cpu),
            memory_percent: pct(used.memory, allocatable.memory),
        }
    }
}

impl NodeTable {
    /// Σ allocatable, added in table order (`ssn.TotalResource`).
    pub fn total_allocatable(&self) -> Resource {
        let mut total = Resource::empty();
        for a in &self.allocatable {
            total.add(a);
        }
        total
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.name.len()
    }

    /// True when there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    /// All node ids in table order.
    pub fn ids(&self) -> impl Iterator<Item = NodeId> + use<> {
        (0..self.name.len() as u32).map(NodeId)
    }

    /// Looks a node up by name.
    pub fn id(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    /// `node.Allocatable.MaxTaskNum`: the `pods` allocatable.
    pub fn max_task_num(&self, n: NodeId) -> f64 {
        self.allocatable[n.idx()].get(crate::model::ResourceName::Scalar(crate::model::Dim::PODS))
    }
}
