//! The node table: static node attributes, one column per field.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use foldhash::fast::FixedState;

use crate::api::{NodeMetrics, StringMap, Taint, Time};
use crate::model::{NodeId, Resource};

/// Nodes, in the order they were first seen (Volcano's `NodeList`).
#[derive(Debug, Default)]
pub struct NodeTable {
    pub name: Vec<String>,
    pub labels: Vec<StringMap>,
    pub taints: Vec<Vec<Taint>>,
    pub unschedulable: Vec<bool>,
    pub allocatable: Vec<Resource>,
    pub capacity: Vec<Resource>,
    /// Image name → size in bytes, for image locality.
    pub images: Vec<Arc<BTreeMap<String, i64>>>,
    /// The node's annotations (device registrations and health that `deviceshare` reads).
    pub annotations: Vec<Arc<StringMap>>,
    /// Measured utilisation in percent of allocatable (Volcano's `ResourceUsage` averages), when a
    /// metrics source reported it.
    pub usage: Vec<Option<NodeUsage>>,
    pub by_name: HashMap<String, NodeId, FixedState>,
}

/// A node's measured cpu and memory utilisation, in percent.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeUsage {
    pub cpu_percent: f64,
    pub memory_percent: f64,
    /// The averaging period the source filed the measurement under (Volcano's key into
    /// `CPUUsageAvg`); `None` for offline `NodeMetrics` quantities, which stand for any period.
    pub period: Option<String>,
    /// When the figures were measured.
    pub measured: Measured,
}

/// When a node's usage figures were measured (Volcano: pkg/scheduler/api/node_info.go,
/// NodeUsage.MetricsTime), which decides whether readers that want fresh figures use them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measured {
    /// The source gave no time: Volcano's zero time, older than any freshness limit.
    Never,
    /// At this time.
    At(Time),
    /// Offline `NodeMetrics` quantities, which describe the cluster as the session sees it.
    Current,
}

impl Measured {
    /// True when measured no more than `max_age_secs` before `now`.
    pub fn within(self, max_age_secs: i64, now: Time) -> bool {
        match self {
            Measured::Never => false,
            Measured::At(t) => now.0 - t.0 <= max_age_secs,
            Measured::Current => true,
        }
    }
}

impl NodeUsage {
    /// The utilisation `metrics` report: their averages when a metrics source gave them, else
    /// their usage quantities in percent of `allocatable`.
    pub fn of(metrics: &NodeMetrics, allocatable: &Resource) -> NodeUsage {
        if let Some(a) = &metrics.averages {
            return NodeUsage {
                cpu_percent: a.cpu_percent,
                memory_percent: a.memory_percent,
                period: Some(a.period.clone()),
                measured: a
                    .metrics_time
                    .as_deref()
                    .and_then(|t| Time::parse(t).ok())
                    .map_or(Measured::Never, Measured::At),
            };
        }
        let used = Resource::from_list(&metrics.usage);
        let pct = |u: f64, a: f64| if a > 0.0 { u * 100.0 / a } else { 0.0 };
        NodeUsage {
            cpu_percent: pct(used.milli_cpu, allocatable.milli_cpu),
            memory_percent: pct(used.memory, allocatable.memory),
            period: None,
            measured: Measured::Current,
        }
    }

    /// Whether a reader asking for averages over `period` gets this measurement (Volcano reads
    /// `CPUUsageAvg[period]`, which holds only the periods its source filed).
    pub fn covers(&self, period: &str) -> bool {
        self.period.as_deref().is_none_or(|p| p == period)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ResourceList, UsageAverages};

    fn allocatable() -> Resource {
        let list: ResourceList =
            serde_json::from_value(serde_json::json!({"cpu": "4", "memory": "8Gi"})).unwrap();
        Resource::from_list(&list)
    }

    #[test]
    fn usage_quantities_are_read_in_percent_of_allocatable_for_any_period() {
        let metrics = NodeMetrics {
            usage: serde_json::from_value(serde_json::json!({"cpu": "1", "memory": "2Gi"}))
                .unwrap(),
            ..Default::default()
        };
        let u = NodeUsage::of(&metrics, &allocatable());
        assert_eq!((u.cpu_percent, u.memory_percent), (25.0, 25.0));
        assert!(u.covers("5m") && u.covers("10m"));
    }

    #[test]
    fn a_source_s_averages_are_taken_as_they_are_and_only_for_their_period() {
        let metrics = NodeMetrics {
            usage: serde_json::from_value(serde_json::json!({"cpu": "1"})).unwrap(),
            averages: Some(UsageAverages {
                period: "10m".into(),
                cpu_percent: 61.5,
                memory_percent: 12.25,
                metrics_time: None,
            }),
            ..Default::default()
        };
        let u = NodeUsage::of(&metrics, &allocatable());
        assert_eq!((u.cpu_percent, u.memory_percent), (61.5, 12.25));
        assert!(u.covers("10m"));
        assert!(!u.covers("5m"));
        assert_eq!(
            u.measured,
            Measured::Never,
            "no time is Volcano's zero time"
        );
    }

    #[test]
    fn figures_are_fresh_up_to_the_limit_and_never_when_unmeasured() {
        let now = Time(1000);
        assert!(Measured::At(Time(700)).within(300, now));
        assert!(!Measured::At(Time(699)).within(300, now));
        assert!(!Measured::Never.within(300, now));
        assert!(Measured::Current.within(0, now));
    }
}
