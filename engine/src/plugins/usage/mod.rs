//! `usage` (Volcano: pkg/scheduler/plugins/usage/usage.go): places pods by the nodes' measured
//! load. A node whose cpu or memory average (the metrics source's `10m` figures) exceeds its
//! threshold is refused; nodes score by how much is free once the pods placed but not yet
//! visible in the metrics (`shadow_load.rs`, estimated by `estimator.rs`) are added. Figures
//! older than five minutes, or never measured, are ignored: the node passes and scores 0.
//!
//! Arguments: `usage.weight` (5), `cpu.weight` (1), `memory.weight` (1), whole numbers of at
//! least 0; `thresholds: {cpu: 80, mem: 80}` in 0..=100; `estimator: {request_ratio: 0.7,
//! burst_ratio: 0, risk_threshold: 0.6, risk_factor: 1.2, be_cpu: 250m, be_mem: 200Mi}`. Values
//! out of range or of another type keep their defaults, as in Volcano. The monitoring delay,
//! during which a started pod's load is still estimated, is the configuration's
//! `metrics.interval` (30s).

mod estimator;
mod shadow_load;

use serde_json::{Map, Value};

use crate::api::{Pod, Time};
use crate::config::{ArgumentError, Arguments};
use crate::framework::{FitError, Plugin, SessionState, StatusCode};
use crate::model::{NodeId, Quantity, Resource, TaskId, TaskStatus, parse_go_duration};

use estimator::{
    applied_risk_factor, best_effort_estimate, composite_utilisation, load_composite, node_score,
    pod_estimate,
};
use shadow_load::{Estimate, ShadowLoad};

/// The period Volcano's metrics sources file node averages under, which this plugin reads.
const PERIOD: &str = "10m";
/// Figures older than this are ignored.
const METRICS_ACTIVE_SECS: i64 = 5 * 60;
/// The monitoring delay when the configuration's `metrics.interval` does not set one.
const DEFAULT_METRICS_INTERVAL_SECS: f64 = 30.0;
const CPU_OVERLOADED: &str = "the CPU load of the node exceeds the upper limit.";
const MEMORY_OVERLOADED: &str = "the memory load of the node exceeds the upper limit.";

/// The estimator's parameters.
#[derive(Debug, Clone, PartialEq)]
struct EstimatorConf {
    request_ratio: f64,
    burst_ratio: f64,
    risk_threshold: f64,
    risk_factor: f64,
    /// A BestEffort pod's cpu (millicores) and memory (bytes).
    best_effort_cpu: f64,
    best_effort_memory: f64,
}

impl Default for EstimatorConf {
    fn default() -> Self {
        EstimatorConf {
            request_ratio: 0.7,
            burst_ratio: 0.0,
            risk_threshold: 0.6,
            risk_factor: 1.2,
            best_effort_cpu: 250.0,
            best_effort_memory: 200.0 * 1024.0 * 1024.0,
        }
    }
}

/// The plugin.
#[derive(Debug)]
pub struct Usage {
    usage_weight: i64,
    cpu_weight: i64,
    memory_weight: i64,
    cpu_threshold: f64,
    memory_threshold: f64,
    estimator: EstimatorConf,
    metrics_interval_secs: f64,
    shadow: ShadowLoad,
}

/// A whole number as Volcano's `GetInt` reads one: an integer literal only.
fn int_arg(v: Option<&Value>) -> Option<i64> {
    v.filter(|v| v.is_i64()).and_then(Value::as_i64)
}

/// A number as `GetFloat64` reads one: a float or an integer literal.
fn float_arg(v: Option<&Value>) -> Option<f64> {
    v.filter(|v| v.is_number()).and_then(Value::as_f64)
}

/// `be_cpu`: an integer is millicores, a string a quantity; anything else or negative keeps
/// the default.
fn best_effort_cpu(v: Option<&Value>, default: f64) -> f64 {
    match v {
        Some(Value::Number(n)) if n.is_i64() => {
            n.as_i64().filter(|n| *n >= 0).map_or(default, |n| n as f64)
        }
        Some(Value::String(s)) => Quantity::parse(s)
            .ok()
            .filter(|q| !q.is_negative())
            .map_or(default, |q| q.milli_value() as f64),
        _ => default,
    }
}

/// `be_mem`: an integer is MiB, a string a quantity in bytes.
fn best_effort_memory(v: Option<&Value>, default: f64) -> f64 {
    match v {
        Some(Value::Number(n)) if n.is_i64() => n
            .as_i64()
            .filter(|n| *n >= 0)
            .map_or(default, |n| n as f64 * 1024.0 * 1024.0),
        Some(Value::String(s)) => Quantity::parse(s)
            .ok()
            .filter(|q| !q.is_negative())
            .map_or(default, |q| q.value() as f64),
        _ => default,
    }
}

/// A section (`thresholds`, `estimator`) when it is a map.
fn section<'a>(args: &'a Arguments, key: &str) -> Option<&'a Map<String, Value>> {
    args.raw(key).and_then(Value::as_object)
}

/// Builds the plugin; see the module comment for the arguments.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Usage::from_args(args)))
}

impl Usage {
    /// Reads the arguments; none is refused (Volcano keeps the default of a value it cannot
    /// use).
    fn from_args(args: &Arguments) -> Usage {
        let weight = |key: &str, default: i64| {
            int_arg(args.raw(key))
                .filter(|w| *w >= 0)
                .unwrap_or(default)
        };
        let mut plugin = Usage {
            usage_weight: weight("usage.weight", 5),
            cpu_weight: weight("cpu.weight", 1),
            memory_weight: weight("memory.weight", 1),
            cpu_threshold: 80.0,
            memory_threshold: 80.0,
            estimator: EstimatorConf::default(),
            metrics_interval_secs: DEFAULT_METRICS_INTERVAL_SECS,
            shadow: ShadowLoad::default(),
        };
        if let Some(t) = section(args, "thresholds") {
            let percent = |key: &str| int_arg(t.get(key)).filter(|p| (0..=100).contains(p));
            if let Some(p) = percent("cpu") {
                plugin.cpu_threshold = p as f64;
            }
            if let Some(p) = percent("mem") {
                plugin.memory_threshold = p as f64;
            }
        }
        if let Some(e) = section(args, "estimator") {
            let conf = &mut plugin.estimator;
            let unit = |key: &str| float_arg(e.get(key)).filter(|r| (0.0..=1.0).contains(r));
            conf.request_ratio = unit("request_ratio").unwrap_or(conf.request_ratio);
            conf.burst_ratio = unit("burst_ratio").unwrap_or(conf.burst_ratio);
            conf.risk_threshold = unit("risk_threshold").unwrap_or(conf.risk_threshold);
            conf.risk_factor = float_arg(e.get("risk_factor"))
                .filter(|f| *f >= 1.0)
                .unwrap_or(conf.risk_factor);
            conf.best_effort_cpu = best_effort_cpu(e.get("be_cpu"), conf.best_effort_cpu);
            conf.best_effort_memory = best_effort_memory(e.get("be_mem"), conf.best_effort_memory);
        }
        plugin
    }
}

/// The pod's cpu (millicores) and memory (bytes) limits as Volcano sums them: containers,
/// the init-container peak (sidecars running beside later ones), overhead on the dimensions
/// that have a limit.
fn pod_limits(pod: &Pod) -> (f64, f64) {
    let mut total = Resource::empty();
    for c in &pod.spec.containers {
        total.add(&Resource::from_list(&c.resources.limits));
    }
    let (mut sidecars, mut init_peak) = (Resource::empty(), Resource::empty());
    for ic in &pod.spec.init_containers {
        let limit = Resource::from_list(&ic.resources.limits);
        let candidate = if ic.restart_policy.as_deref() == Some("Always") {
            total.add(&limit);
            sidecars.add(&limit);
            sidecars.clone()
        } else {
            limit.plus(&sidecars)
        };
        init_peak.set_max(&candidate);
    }
    total.set_max(&init_peak);
    let overhead = Resource::from_list(&pod.spec.overhead);
    let with = |v: f64, o: f64| if v != 0.0 { v + o } else { v };
    (
        with(total.milli_cpu, overhead.milli_cpu),
        with(total.memory, overhead.memory),
    )
}

impl Usage {
    /// Whether the node's figures are recent enough to use.
    fn fresh(ssn: &SessionState, node: NodeId) -> bool {
        ssn.snap.nodes.usage[node.idx()]
            .as_ref()
            .is_some_and(|u| u.measured.within(METRICS_ACTIVE_SECS, ssn.options.now))
    }

    /// The node's measured cpu and memory percent for the plugin's period (0 when the source
    /// filed none for it).
    fn measured(ssn: &SessionState, node: NodeId) -> (f64, f64) {
        match &ssn.snap.nodes.usage[node.idx()] {
            Some(u) if u.covers(PERIOD) => (u.cpu_percent, u.memory_percent),
            _ => (0.0, 0.0),
        }
    }

    /// The node's cpu and memory utilisation (0..1) with the shadow load added.
    fn composite(&self, ssn: &SessionState, node: NodeId) -> (f64, f64) {
        let (cpu, memory) = Self::measured(ssn, node);
        let shadow = self.shadow.of(node);
        let capacity = &ssn.snap.nodes.capacity[node.idx()];
        (
            composite_utilisation(cpu, shadow.cpu, capacity.milli_cpu),
            composite_utilisation(memory, shadow.memory, capacity.memory),
        )
    }

    /// What the task will likely use on `node`, its risk factor read from the node's load.
    fn estimate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Estimate {
        let (cpu, memory) = self.composite(ssn, node);
        let e = &self.estimator;
        let load = load_composite(cpu, memory, self.cpu_weight, self.memory_weight);
        let risk = applied_risk_factor(load, e.risk_threshold, e.risk_factor);
        if ssn.snap.tasks.best_effort[task.idx()] {
            return Estimate {
                cpu: best_effort_estimate(e.best_effort_cpu, risk),
                memory: best_effort_estimate(e.best_effort_memory, risk),
            };
        }
        let request = ssn.resreq(task);
        let (cpu_limit, memory_limit) = pod_limits(&ssn.snap.tasks.pod[task.idx()]);
        let estimate = |req, lim| pod_estimate(req, lim, e.request_ratio, e.burst_ratio, risk);
        Estimate {
            cpu: estimate(request.milli_cpu, cpu_limit),
            memory: estimate(request.memory, memory_limit),
        }
    }

    /// Whether a task already on a node at open is one the metrics cannot show yet: placed
    /// this cycle or earlier but not running, or running for less than the monitoring delay.
    fn unseen_by_metrics(&self, ssn: &SessionState, task: TaskId, now: Time) -> bool {
        match ssn.tasks.status[task] {
            TaskStatus::Allocated | TaskStatus::Binding | TaskStatus::Bound => true,
            TaskStatus::Running => match ssn.snap.tasks.pod[task.idx()].status.start_time {
                None => true,
                Some(started) => ((now.0 - started.0) as f64) < self.metrics_interval_secs,
            },
            _ => false,
        }
    }
}

impl Plugin for Usage {
    fn name(&self) -> &str {
        "usage"
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        self.shadow.clear();
        if let Some(secs) = ssn
            .config
            .metrics
            .get("interval")
            .and_then(|i| parse_go_duration(i).ok())
            .filter(|s| *s > 0.0)
        {
            self.metrics_interval_secs = secs;
        }
        let now = ssn.options.now;
        for node in ssn.snap.nodes.ids() {
            for &task in &ssn.nodes.tasks[node] {
                if self.unseen_by_metrics(ssn, task, now) {
                    let estimate = self.estimate(ssn, task, node);
                    self.shadow.add(node, task, estimate);
                }
            }
        }
    }

    fn on_session_close(&mut self, _: &mut SessionState) {
        self.shadow.clear();
    }

    fn predicate(&self, ssn: &SessionState, _: TaskId, node: NodeId) -> Result<(), FitError> {
        if !Self::fresh(ssn, node) {
            return Ok(());
        }
        let (cpu, memory) = Self::measured(ssn, node);
        if cpu > self.cpu_threshold {
            return Err(FitError::new(
                StatusCode::UnschedulableAndUnresolvable,
                CPU_OVERLOADED,
            ));
        }
        if memory > self.memory_threshold {
            return Err(FitError::new(
                StatusCode::UnschedulableAndUnresolvable,
                MEMORY_OVERLOADED,
            ));
        }
        Ok(())
    }

    fn node_order(
        &self,
        ssn: &SessionState,
        _: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        if !Self::fresh(ssn, node) {
            return Some(Ok(0.0));
        }
        let (cpu, memory) = self.composite(ssn, node);
        Some(Ok(node_score(
            cpu,
            memory,
            self.cpu_weight,
            self.memory_weight,
            self.usage_weight,
        )))
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        if let Some(node) = ssn.tasks.node[task] {
            let estimate = self.estimate(ssn, task, node);
            self.shadow.add(node, task, estimate);
        }
        Ok(())
    }

    fn on_deallocate(&mut self, _: &SessionState, task: TaskId) {
        self.shadow.remove(task);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::{Session, SessionOptions, Statement};
    use crate::harness::Harness;
    use crate::harness::find::{node_id, task};

    fn conf(args: &str) -> String {
        format!(
            "actions: allocate\ntiers:\n- plugins:\n  - name: usage\n    arguments: {{{args}}}\n"
        )
    }

    /// Nodes n1 (30% cpu, 50% memory) measured `age` seconds before the session, and n2 never
    /// measured; pending pod p asks 1 cpu and 1Gi.
    fn session(args: &str, age: i64, extra: &str) -> Session {
        let now = Time(1_000_000);
        let measured = Time(now.0 - age).to_string();
        let objects = format!(
            "- {{kind: Queue, metadata: {{name: q}}, status: {{state: Open}}}}\n\
             - {{kind: PodGroup, metadata: {{name: pg, namespace: ns}}, spec: {{queue: q}}, status: {{phase: Running}}}}\n\
             - {{kind: Node, metadata: {{name: n1}}, status: {{capacity: {{cpu: '4', memory: 8Gi, pods: '10'}}, allocatable: {{cpu: '4', memory: 8Gi, pods: '10'}}}}}}\n\
             - {{kind: Node, metadata: {{name: n2}}, status: {{capacity: {{cpu: '4', memory: 8Gi, pods: '10'}}, allocatable: {{cpu: '4', memory: 8Gi, pods: '10'}}}}}}\n\
             - {{kind: NodeMetrics, metadata: {{name: n1}}, averages: {{period: 10m, cpuPercent: 30, memoryPercent: 50, metricsTime: '{measured}'}}}}\n\
             - {{kind: Pod, metadata: {{name: p, namespace: ns, annotations: {{scheduling.k8s.io/group-name: pg}}}}, spec: {{containers: [{{resources: {{requests: {{cpu: '1', memory: 1Gi}}}}}}]}}, status: {{phase: Pending}}}}\n{extra}"
        );
        let options = SessionOptions {
            now,
            ..Default::default()
        };
        Harness::new(&conf(args))
            .manifests(&objects)
            .open_with(options)
            .expect("session")
    }

    #[test]
    fn fresh_figures_score_the_free_share_and_stale_or_missing_ones_score_zero() {
        let ssn = session("", 0, "");
        let p = task(&ssn, "ns/p");
        assert_eq!(ssn.node_order(p, node_id(&ssn, "n1")), 300.0);
        assert_eq!(ssn.node_order(p, node_id(&ssn, "n2")), 0.0);
        let stale = session("", 301, "");
        assert_eq!(
            stale.node_order(task(&stale, "ns/p"), node_id(&stale, "n1")),
            0.0
        );
    }

    #[test]
    fn a_node_over_a_threshold_is_refused_while_its_figures_are_fresh() {
        let ssn = session("thresholds: {cpu: 20}", 0, "");
        let err = ssn
            .predicate(task(&ssn, "ns/p"), node_id(&ssn, "n1"))
            .unwrap_err();
        assert_eq!(err.to_string(), CPU_OVERLOADED);
        let stale = session("thresholds: {cpu: 20}", 600, "");
        assert!(
            stale
                .predicate(task(&stale, "ns/p"), node_id(&stale, "n1"))
                .is_ok()
        );
    }

    #[test]
    fn an_allocation_lowers_the_node_score_until_it_is_taken_back() {
        let mut ssn = session("", 0, "");
        let (p, n1) = (task(&ssn, "ns/p"), node_id(&ssn, "n1"));
        let mut stmt = Statement::new();
        stmt.allocate(&mut ssn, p, n1).unwrap();
        // 700m of 4 cpus and 0.7Gi of 8Gi estimated on top of 30% and 50%.
        let expected = ((1.0 - 0.475) + (1.0 - 0.5875)) / 2.0 * 500.0;
        assert!((ssn.node_order(p, n1) - expected).abs() < 1e-9);
        stmt.discard(&mut ssn);
        assert_eq!(ssn.node_order(p, n1), 300.0);
    }

    #[test]
    fn a_recently_started_running_pod_counts_as_load_the_metrics_miss() {
        let running = "- {kind: Pod, metadata: {name: r, namespace: ns, annotations: {scheduling.k8s.io/group-name: pg}}, spec: {nodeName: n1, containers: [{resources: {requests: {cpu: '2'}}}]}, status: {phase: Running, startTime: '1970-01-12T13:46:30Z'}}\n";
        let ssn = session("", 0, running);
        // Started 10s before the session: 1.4 cpus of 4 estimated on top of 30%.
        let expected = ((1.0 - 0.65) + (1.0 - 0.5)) / 2.0 * 500.0;
        let got = ssn.node_order(task(&ssn, "ns/p"), node_id(&ssn, "n1"));
        assert!((got - expected).abs() < 1e-9, "{got}");
    }

    #[test]
    fn arguments_out_of_range_or_of_another_type_keep_their_defaults() {
        let args: Arguments = Arguments::new(
            serde_json::from_value(serde_json::json!({
                "usage.weight": "7", "cpu.weight": -1, "memory.weight": 3,
                "thresholds": {"cpu": 101, "mem": 50},
                "estimator": {"request_ratio": 2, "risk_factor": 0.5, "be_cpu": "500m", "be_mem": 300}
            }))
            .unwrap(),
        );
        let u = format!("{:?}", Usage::from_args(&args));
        assert!(
            u.contains("usage_weight: 5, cpu_weight: 1, memory_weight: 3"),
            "{u}"
        );
        assert!(
            u.contains("cpu_threshold: 80.0, memory_threshold: 50.0"),
            "{u}"
        );
        assert!(u.contains("request_ratio: 0.7"), "{u}");
        assert!(u.contains("risk_factor: 1.2"), "{u}");
        assert!(
            u.contains("best_effort_cpu: 500.0, best_effort_memory: 314572800.0"),
            "{u}"
        );
    }
}
