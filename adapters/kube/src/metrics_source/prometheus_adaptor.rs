//! `type: prometheus_adaptor`: the cluster's custom metrics API (`custom.metrics.k8s.io`, as a
//! Prometheus adapter serves it), asked for two node metrics its rules define (Volcano:
//! pkg/scheduler/metrics/source/metrics_client_prometheus_adapt.go, NodesMetricsAvg). Values
//! are fractions, read as percent × 100. Volcano's chart grants no verb on that API group: the
//! operator who picks this type grants `get` on `custom.metrics.k8s.io` `nodes/*` themselves.

use std::collections::{BTreeMap, BTreeSet};

use http::Request;
use kube::Client;
use serde_json::Value;
use tephra_engine::model::Quantity;
use tokio::time::Instant;

use super::{COLLECTION_TIMEOUT, Collected};

/// The node cpu usage average the adapter's rules must define.
pub const CPU_METRIC: &str = "node_cpu_usage_avg";
/// The node memory usage average the adapter's rules must define.
pub const MEMORY_METRIC: &str = "node_memory_usage_avg";

const GROUP_PATH: &str = "/apis/custom.metrics.k8s.io";

/// A node's values as the API reports them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reported {
    pub cpu_percent: f64,
    pub memory_percent: f64,
    /// The timestamp of the last metric read for the node.
    pub metrics_time: Option<String>,
}

/// The version to ask: `v1beta2` when the group serves it, else `v1beta1`, from the group's
/// discovery document.
pub fn served_version(discovery: &[u8]) -> Result<&'static str, String> {
    let group: Value =
        serde_json::from_slice(discovery).map_err(|e| format!("not an APIGroup: {e}"))?;
    let served = |v: &str| {
        group["versions"]
            .as_array()
            .is_some_and(|vs| vs.iter().any(|x| x["version"] == v))
    };
    ["v1beta2", "v1beta1"]
        .into_iter()
        .find(|v| served(v))
        .ok_or_else(|| "the group serves neither v1beta2 nor v1beta1".to_string())
}

/// Every node's value of `metric`, root-scoped over all nodes.
pub fn metric_path(version: &str, metric: &str) -> String {
    format!("{GROUP_PATH}/{version}/nodes/*/{metric}")
}

/// Adds a `MetricValueList` answer for `metric` to `into`, by node name; an error when the
/// answer or a value cannot be read.
pub fn read_values(
    metric: &str,
    body: &[u8],
    into: &mut BTreeMap<String, Reported>,
) -> Result<(), String> {
    let list: Value = serde_json::from_slice(body)
        .map_err(|e| format!("{metric}: not a MetricValueList: {e}"))?;
    for item in list["items"].as_array().into_iter().flatten() {
        let Some(node) = item["describedObject"]["name"].as_str() else {
            continue;
        };
        let text = item["value"].as_str().unwrap_or_default();
        let value = Quantity::parse(text)
            .map_err(|e| format!("{metric} of node {node}: {e}"))?
            .approximate_f64()
            * 100.0;
        let entry = into.entry(node.to_string()).or_default();
        if metric == CPU_METRIC {
            entry.cpu_percent = value;
        } else {
            entry.memory_percent = value;
        }
        entry.metrics_time = item["timestamp"].as_str().map(str::to_string);
    }
    Ok(())
}

/// Every node's averages: a node the API does not report reads 0 with no time (too old for
/// any reader); a failed request fails the collection.
pub async fn collect(
    api: &Client,
    nodes: &BTreeSet<String>,
    deadline: Instant,
) -> Result<Vec<Collected>, String> {
    let blame = |e: String| format!("custom metrics API: {e}");
    let mut reported = tokio::time::timeout_at(deadline, ask(api))
        .await
        .map_err(|_| blame(format!("no answer within {COLLECTION_TIMEOUT:?}")))?
        .map_err(blame)?;
    let out = nodes
        .iter()
        .map(|node| {
            let r = reported.remove(node).unwrap_or_default();
            Collected {
                node: node.clone(),
                cpu_percent: r.cpu_percent,
                memory_percent: r.memory_percent,
                metrics_time: r.metrics_time,
            }
        })
        .collect();
    if let Some(stranger) = reported.keys().next() {
        tracing::warn!(
            "custom metrics API: {} reported nodes are not in the cache (first: {stranger})",
            reported.len()
        );
    }
    Ok(out)
}

/// Both metrics of every node the API reports; an error names the request that failed.
async fn ask(api: &Client) -> Result<BTreeMap<String, Reported>, String> {
    let get = |path: String| async move {
        let request = Request::get(&path)
            .body(Vec::new())
            .map_err(|e| format!("{path}: {e}"))?;
        api.request_text(request)
            .await
            .map(String::into_bytes)
            .map_err(|e| format!("{path}: {e}"))
    };
    let version = served_version(&get(GROUP_PATH.to_string()).await?)?;
    let mut values = BTreeMap::new();
    for metric in [CPU_METRIC, MEMORY_METRIC] {
        read_values(
            metric,
            &get(metric_path(version, metric)).await?,
            &mut values,
        )?;
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1beta2_is_preferred_when_served() {
        let both =
            br#"{"kind":"APIGroup","versions":[{"version":"v1beta1"},{"version":"v1beta2"}]}"#;
        assert_eq!(served_version(both), Ok("v1beta2"));
        let old = br#"{"kind":"APIGroup","versions":[{"version":"v1beta1"}]}"#;
        assert_eq!(served_version(old), Ok("v1beta1"));
        assert!(served_version(br#"{"versions":[]}"#).is_err());
    }

    #[test]
    fn every_node_is_asked_for_at_once() {
        assert_eq!(
            metric_path("v1beta2", CPU_METRIC),
            "/apis/custom.metrics.k8s.io/v1beta2/nodes/*/node_cpu_usage_avg"
        );
    }

    #[test]
    fn values_are_fractions_read_as_percent_with_the_last_timestamp() {
        let cpu = br#"{"kind":"MetricValueList","items":[
            {"describedObject":{"kind":"Node","name":"n1"},"timestamp":"2026-01-01T00:00:00Z","value":"523m"},
            {"describedObject":{"kind":"Node","name":"n2"},"timestamp":"2026-01-01T00:00:00Z","value":"1"}]}"#;
        let memory = br#"{"items":[
            {"describedObject":{"kind":"Node","name":"n1"},"timestamp":"2026-01-01T00:00:30Z","value":"250m"}]}"#;
        let mut values = BTreeMap::new();
        read_values(CPU_METRIC, cpu, &mut values).unwrap();
        read_values(MEMORY_METRIC, memory, &mut values).unwrap();
        assert_eq!(
            values["n1"],
            Reported {
                cpu_percent: 52.300000000000004,
                memory_percent: 25.0,
                metrics_time: Some("2026-01-01T00:00:30Z".into()),
            }
        );
        assert_eq!(values["n2"].cpu_percent, 100.0);
        assert_eq!(values["n2"].memory_percent, 0.0);
    }

    #[test]
    fn an_unreadable_value_is_an_error_naming_the_node() {
        let bad = br#"{"items":[{"describedObject":{"name":"n1"},"value":"lots"}]}"#;
        let e = read_values(CPU_METRIC, bad, &mut BTreeMap::new()).unwrap_err();
        assert!(e.contains("node n1"), "{e}");
    }
}
