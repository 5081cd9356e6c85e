//! A scenario's `nodeMetrics`: the load each node's metrics source reported, as `NodeMetrics`
//! objects carrying the averages a live source would (`UsageAverages`), measured `metricsAge`
//! before the session opens.

use std::collections::BTreeMap;

use serde::Deserialize;
use tephra_engine::api::{ClusterObject, NodeMetrics, Time, UsageAverages};
use tephra_engine::model::parse_go_duration;

use crate::InputError;

/// The period Volcano's metrics sources file their averages under, which the `usage` plugin
/// reads (Volcano: pkg/scheduler/metrics/source, NODE_METRICS_PERIOD).
const SOURCE_PERIOD: &str = "10m";

/// One node's entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawNodeMetrics {
    #[serde(default)]
    cpu_usage_avg: BTreeMap<String, f64>,
    #[serde(default)]
    mem_usage_avg: BTreeMap<String, f64>,
    /// A Go duration before the session opened, or `never`.
    metrics_age: String,
}

/// The `NodeMetrics` objects of `entries` for a session opening at `now`. A node's figures are
/// filed under one period: the sources' own when listed, else the first listed (a period a
/// map lacks reads 0, as Go's map lookup does); `path` names the file in errors.
pub fn node_metrics_objects(
    entries: &BTreeMap<String, RawNodeMetrics>,
    now: Time,
    path: &str,
) -> Result<Vec<ClusterObject>, InputError> {
    entries
        .iter()
        .map(|(node, m)| {
            let metrics_time = match m.metrics_age.as_str() {
                "never" => None,
                age => {
                    let secs = parse_go_duration(age).map_err(|e| {
                        InputError::new(path, e).field(format!("nodeMetrics.{node}.metricsAge"))
                    })?;
                    Some(Time(now.0 - secs.round() as i64).to_string())
                }
            };
            let period = [&m.cpu_usage_avg, &m.mem_usage_avg]
                .iter()
                .find_map(|avg| avg.get_key_value(SOURCE_PERIOD).map(|(k, _)| k.clone()))
                .or_else(|| {
                    m.cpu_usage_avg
                        .keys()
                        .chain(m.mem_usage_avg.keys())
                        .next()
                        .cloned()
                })
                .unwrap_or_else(|| SOURCE_PERIOD.to_string());
            let mut object = NodeMetrics::default();
            object.metadata.name = node.clone();
            object.averages = Some(UsageAverages {
                cpu_percent: m.cpu_usage_avg.get(&period).copied().unwrap_or(0.0),
                memory_percent: m.mem_usage_avg.get(&period).copied().unwrap_or(0.0),
                period,
                metrics_time,
            });
            Ok(ClusterObject::NodeMetrics(Box::new(object)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(yaml: &str) -> BTreeMap<String, RawNodeMetrics> {
        serde_saphyr::from_str(yaml).unwrap()
    }

    fn averages(o: &ClusterObject) -> &UsageAverages {
        match o {
            ClusterObject::NodeMetrics(m) => m.averages.as_ref().unwrap(),
            other => panic!("not metrics: {other:?}"),
        }
    }

    #[test]
    fn age_is_counted_back_from_the_session_and_never_has_no_time() {
        let e = entries(
            "n1: {cpuUsageAvg: {10m: 30}, memUsageAvg: {10m: 50}, metricsAge: 6m}\nn2: {cpuUsageAvg: {10m: 1}, metricsAge: never}\n",
        );
        let objects = node_metrics_objects(&e, Time(1000), "c.yaml").unwrap();
        let n1 = averages(&objects[0]);
        assert_eq!((n1.cpu_percent, n1.memory_percent), (30.0, 50.0));
        assert_eq!(n1.metrics_time, Some(Time(640).to_string()));
        let n2 = averages(&objects[1]);
        assert_eq!((n2.memory_percent, n2.metrics_time.as_deref()), (0.0, None));
    }

    #[test]
    fn the_sources_period_is_preferred_over_others() {
        let e = entries("n1: {cpuUsageAvg: {5m: 90, 10m: 20}, metricsAge: 0s}\n");
        let objects = node_metrics_objects(&e, Time(0), "c.yaml").unwrap();
        assert_eq!(averages(&objects[0]).cpu_percent, 20.0);
        assert_eq!(averages(&objects[0]).period, "10m");
    }

    #[test]
    fn a_bad_age_names_the_node() {
        let e = entries("n1: {metricsAge: soon}\n");
        let err = node_metrics_objects(&e, Time(0), "c.yaml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("nodeMetrics.n1.metricsAge"), "{err}");
    }
}
