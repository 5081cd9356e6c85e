//! `rescheduling` (Volcano: pkg/scheduler/plugins/rescheduling/rescheduling.go): every `interval`, nominate victims that move load from
//! over-utilised nodes to under-utilised ones (strategy `lowNodeUtilization`), for `shuffle`.
//! Utilisation is measured usage (a metrics source; offline, `NodeMetrics` objects), not
//! requests: without measurements every node counts as idle and nothing is nominated. A
//! source's averages count only when filed under `metricsPeriod` (Volcano's sources file them
//! under `10m`, the argument defaults to `5m`: Volcano then reads no usage at all).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::Pod;
use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, SessionState};
use crate::model::{NodeId, TaskId, parse_go_duration};

/// The strategy tephra (like Volcano) implements.
pub const LOW_NODE_UTILIZATION: &str = "lowNodeUtilization";

/// `metricsPeriod` when absent or empty (Volcano: pkg/scheduler/plugins/rescheduling/
/// rescheduling.go, DefaultMetricsPeriod).
const DEFAULT_METRICS_PERIOD: &str = "5m";

/// `lowNodeUtilization` parameters: percentages per resource.
#[derive(Debug, Clone, PartialEq)]
struct LowNodeUtilization {
    thresholds: BTreeMap<String, f64>,
    target_thresholds: BTreeMap<String, f64>,
}

impl Default for LowNodeUtilization {
    fn default() -> Self {
        let all = |v: f64| {
            [("cpu", v), ("memory", v), ("pods", v)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect()
        };
        LowNodeUtilization {
            thresholds: all(100.0),
            target_thresholds: all(100.0),
        }
    }
}

/// The plugin.
#[derive(Debug)]
pub struct Rescheduling {
    interval_secs: f64,
    /// The averaging period whose measurements the strategies read.
    metrics_period: String,
    strategies: Vec<(String, LowNodeUtilization)>,
    active: bool,
}

fn arg_error(key: &str, v: &Value, reason: &str) -> ArgumentError {
    ArgumentError {
        key: key.into(),
        value: v.to_string(),
        reason: reason.into(),
    }
}

/// `thresholds` / `targetThresholds`: integer percentages for `cpu`, `memory`, `pod`. An error
/// is blamed on the `strategies` argument it sits in, so a bad table keeps the default strategy.
fn read_thresholds(
    into: &mut BTreeMap<String, f64>,
    key: &str,
    v: &Value,
) -> Result<(), ArgumentError> {
    let Value::Object(m) = v else {
        return Err(arg_error(
            "strategies",
            v,
            &format!("{key}: expected a map of resource to percent"),
        ));
    };
    for (name, pct) in m {
        let pct = pct
            .as_f64()
            .ok_or_else(|| arg_error("strategies", pct, &format!("{key}: expected a number")))?;
        if matches!(name.as_str(), "cpu" | "memory" | "pod") {
            into.insert(name.clone(), pct);
        }
    }
    Ok(())
}

/// Builds the plugin: `interval` (Go duration, default 5m; unparsable → 5m as in Volcano),
/// `metricsPeriod`, `strategies: [{name, params}]`.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    let interval_secs = args
        .string("interval")?
        .and_then(|s| parse_go_duration(&s).ok())
        .unwrap_or(300.0);
    let metrics_period = args
        .string("metricsPeriod")?
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| DEFAULT_METRICS_PERIOD.to_string());
    let mut strategies = vec![(
        LOW_NODE_UTILIZATION.to_string(),
        LowNodeUtilization::default(),
    )];
    if let Some(v) = args.raw("strategies") {
        let Value::Array(list) = v else {
            return Err(arg_error("strategies", v, "expected a list"));
        };
        if !list.is_empty() {
            strategies.clear();
        }
        for s in list {
            let name = s
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| arg_error("strategies", s, "a strategy needs a name"))?;
            let mut conf = LowNodeUtilization::default();
            if let Some(params) = s.get("params").filter(|p| !p.is_null()) {
                if let Some(t) = params.get("thresholds") {
                    read_thresholds(&mut conf.thresholds, "thresholds", t)?;
                }
                if let Some(t) = params.get("targetThresholds") {
                    read_thresholds(&mut conf.target_thresholds, "targetThresholds", t)?;
                }
            }
            strategies.push((name.to_string(), conf));
        }
    }
    Ok(Box::new(Rescheduling {
        interval_secs,
        metrics_period,
        strategies,
        active: false,
    }))
}

/// A node's utilisation during the victim search.
#[derive(Debug, Clone)]
struct Usage {
    node: NodeId,
    cpu: f64,
    memory: f64,
}

impl Usage {
    fn get(&self, r: &str) -> Option<f64> {
        match r {
            "cpu" => Some(self.cpu),
            "memory" => Some(self.memory),
            _ => None,
        }
    }
}

/// Kubernetes QoS rank for eviction order: BestEffort 0, Burstable 1, Guaranteed 2.
fn qos_rank(pod: &Pod) -> u8 {
    let cs = &pod.spec.containers;
    if cs
        .iter()
        .all(|c| c.resources.requests.is_empty() && c.resources.limits.is_empty())
    {
        return 0;
    }
    let guaranteed = cs.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let limit = c.resources.limits.get(r);
            limit.is_some() && c.resources.requests.get(r).is_none_or(|q| Some(q) == limit)
        })
    });
    if guaranteed { 2 } else { 1 }
}

impl Rescheduling {
    fn low_node_utilization(
        &self,
        ssn: &SessionState,
        conf: &LowNodeUtilization,
        tasks: &[TaskId],
    ) -> Vec<TaskId> {
        let snap = &ssn.snap;
        let usage: Vec<Usage> = snap
            .nodes
            .ids()
            .map(|n| {
                let u = snap.nodes.usage[n.idx()]
                    .as_ref()
                    .filter(|u| u.covers(&self.metrics_period));
                Usage {
                    node: n,
                    cpu: u.map_or(0.0, |u| u.cpu_percent),
                    memory: u.map_or(0.0, |u| u.memory_percent),
                }
            })
            .collect();
        let (mut low, mut high) = (Vec::new(), Vec::new());
        for u in usage {
            let below = !snap.nodes.unschedulable[u.node.idx()]
                && conf
                    .thresholds
                    .iter()
                    .all(|(r, t)| u.get(r).is_none_or(|v| v < *t));
            if below {
                low.push(u);
            } else if conf
                .target_thresholds
                .iter()
                .any(|(r, t)| u.get(r).is_some_and(|v| v > *t))
            {
                high.push(u);
            }
        }
        if low.is_empty() || low.len() == snap.nodes.len() || high.is_empty() {
            return Vec::new();
        }
        let target = |r: &str| conf.target_thresholds.get(r).copied().unwrap_or(0.0);
        let (mut room_cpu, mut room_mem) = (0.0_f64, 0.0_f64);
        for u in &low {
            let a = &snap.nodes.allocatable[u.node.idx()];
            room_cpu += ((target("cpu") * a.milli_cpu * 0.01) as i64
                - (u.cpu * a.milli_cpu * 0.01) as i64) as f64;
            room_mem += ((target("memory") * a.memory * 0.01) as i64
                - (u.memory * a.memory * 0.01) as i64) as f64;
        }
        high.sort_by(|a, b| {
            (b.cpu + b.memory)
                .partial_cmp(&(a.cpu + a.memory))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let mut victims = Vec::new();
        for mut u in high {
            let mut pods: Vec<TaskId> = ssn.nodes.tasks[u.node].to_vec();
            if pods.is_empty() {
                continue;
            }
            // Volcano sorts the node's pods from its task map, in no order, and keeps no
            // order among equal keys; here equal keys keep walk order.
            pods.sort_by(|&l, &r| snap.task_walk_order(l, r));
            pods.sort_by_key(|t| {
                let p = &snap.tasks.pod[t.idx()];
                (
                    p.spec.priority.is_some(),
                    p.spec.priority.unwrap_or(0),
                    qos_rank(p),
                )
            });
            for p in pods {
                let overused = conf
                    .target_thresholds
                    .iter()
                    .any(|(r, t)| u.get(r).is_some_and(|v| v >= *t));
                if !overused || room_cpu == 0.0 || room_mem == 0.0 {
                    break;
                }
                let name = &snap.tasks.name[p.idx()];
                let Some(&t) = tasks.iter().find(|&&t| &snap.tasks.name[t.idx()] == name) else {
                    continue;
                };
                let r = ssn.resreq(t);
                let a = &snap.nodes.allocatable[u.node.idx()];
                room_cpu -= r.milli_cpu.trunc();
                room_mem -= r.memory.trunc();
                if a.milli_cpu > 0.0 {
                    u.cpu -= r.milli_cpu.trunc() * 100.0 / a.milli_cpu;
                }
                if a.memory > 0.0 {
                    u.memory -= r.memory.trunc() * 100.0 / a.memory;
                }
                victims.push(t);
            }
        }
        victims
    }
}

impl Plugin for Rescheduling {
    fn name(&self) -> &str {
        "rescheduling"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    /// Active only when `interval` has passed since the last run (a scheduler-wide timer).
    fn on_session_open(&mut self, ssn: &SessionState) {
        self.active = ssn
            .options
            .timers
            .fire("rescheduling", self.interval_secs, ssn.options.now);
    }

    fn victim_tasks(&self, ssn: &SessionState, tasks: &[TaskId]) -> Option<Vec<TaskId>> {
        if !self.active {
            return None;
        }
        let mut out: Vec<TaskId> = Vec::new();
        for (name, conf) in &self.strategies {
            if name == LOW_NODE_UTILIZATION {
                for t in self.low_node_utilization(ssn, conf, tasks) {
                    if !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
        }
        Some(out)
    }
}
