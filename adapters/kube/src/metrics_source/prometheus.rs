//! `type: prometheus`: two PromQL instant queries per node, averaged over the last `10m`
//! (Volcano: pkg/scheduler/metrics/source/metrics_client_prometheus.go, NodeMetricsAvg). As in
//! Volcano, a query that fails or finds nothing leaves that value at 0 (the node looks idle)
//! and never fails the collection.

use std::time::{SystemTime, UNIX_EPOCH};

use http::Request;
use kube::Client;
use serde_json::Value;
use tokio::time::Instant;

use std::collections::BTreeSet;

use super::endpoint::{client_for, encode_query_value, fetch};
use super::{Collected, PERIOD, SourceSettings, now_rfc3339};

/// cpu busy percent of `node` (the `instance` label), 5 m rates sampled every 30 s over the period.
pub fn cpu_query(node: &str) -> String {
    format!(
        r#"avg_over_time(clamp_min(100 - (avg by (instance) (rate(node_cpu_seconds_total{{mode="idle",instance="{node}"}}[5m])) * 100), 0)[{PERIOD}:30s])"#
    )
}

/// Memory in use (not available) in percent of `node`'s total, sampled every 30 s over the period.
pub fn memory_query(node: &str) -> String {
    format!(
        r#"100*avg_over_time(((1-node_memory_MemAvailable_bytes{{instance="{node}"}}/node_memory_MemTotal_bytes{{instance="{node}"}}))[{PERIOD}:30s])"#
    )
}

/// The instant query request for `query` evaluated at `at_unix_secs`.
pub fn query_request(query: &str, at_unix_secs: f64) -> Result<Request<Vec<u8>>, String> {
    let uri = format!(
        "/api/v1/query?query={}&time={at_unix_secs}",
        encode_query_value(query)
    );
    Request::get(uri)
        .body(Vec::new())
        .map_err(|e| format!("cannot build the query: {e}"))
}

/// What an answer holds: the first sample's value of an instant vector; `Ok(None)` for an
/// empty vector or another result type; an error for an error answer or unreadable JSON.
pub fn first_sample(body: &[u8]) -> Result<Option<f64>, String> {
    let answer: Value =
        serde_json::from_slice(body).map_err(|e| format!("not a Prometheus answer: {e}"))?;
    if answer["status"] != "success" {
        return Err(format!(
            "{}: {}",
            answer["errorType"].as_str().unwrap_or("error"),
            answer["error"].as_str().unwrap_or("no reason given")
        ));
    }
    let data = &answer["data"];
    if data["resultType"] != "vector" {
        return Ok(None);
    }
    let Some(sample) = data["result"].as_array().and_then(|r| r.first()) else {
        return Ok(None);
    };
    let text = sample["value"][1]
        .as_str()
        .ok_or_else(|| format!("a sample without a value: {sample}"))?;
    text.parse::<f64>()
        .map(Some)
        .map_err(|_| format!("a sample value that is no number: {text:?}"))
}

/// Queries that did not give a value during one collection, for one warning.
#[derive(Debug, Default)]
struct Misses {
    count: usize,
    first: Option<String>,
}

impl Misses {
    fn note(&mut self, query: &str, why: String) {
        self.count += 1;
        self.first.get_or_insert_with(|| format!("{query}: {why}"));
    }
}

/// Every node's averages; a query without a value reads 0 and the collection goes on, with
/// one warning naming the address.
pub async fn collect(
    settings: &SourceSettings,
    nodes: &BTreeSet<String>,
    deadline: Instant,
) -> Result<Vec<Collected>, String> {
    let address = &settings.address;
    let client = client_for(address, settings.insecure_skip_verify, None)?;
    let mut misses = Misses::default();
    let mut out = Vec::with_capacity(nodes.len());
    for node in nodes {
        let (cpu, memory) = node_averages(&client, node, deadline, &mut misses).await;
        out.push(Collected {
            node: node.clone(),
            cpu_percent: cpu,
            memory_percent: memory,
            metrics_time: Some(now_rfc3339()),
        });
    }
    if let Some(first) = misses.first {
        tracing::warn!(
            "prometheus at {address}: {} of {} queries gave no value and read as 0% \
             (first: {first})",
            misses.count,
            2 * nodes.len()
        );
    }
    Ok(out)
}

/// cpu and memory percent of `node`; each query that fails or finds nothing reads 0.
async fn node_averages(
    client: &Client,
    node: &str,
    deadline: Instant,
    misses: &mut Misses,
) -> (f64, f64) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default();
    let mut values = [0.0; 2];
    for (value, query) in values.iter_mut().zip([cpu_query(node), memory_query(node)]) {
        let ask = async { fetch(client, query_request(&query, now)?).await };
        let answer = tokio::time::timeout_at(deadline, ask)
            .await
            .unwrap_or_else(|_| Err("the collection's time is up".to_string()))
            .and_then(|(status, body)| {
                first_sample(&body).map_err(|e| format!("HTTP {}: {e}", status.as_u16()))
            });
        match answer {
            Ok(Some(v)) => *value = v,
            Ok(None) => misses.note(&query, "no data".to_string()),
            Err(why) => misses.note(&query, why),
        }
    }
    (values[0], values[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_name_the_node_as_instance_and_average_over_ten_minutes() {
        assert_eq!(
            cpu_query("n1"),
            r#"avg_over_time(clamp_min(100 - (avg by (instance) (rate(node_cpu_seconds_total{mode="idle",instance="n1"}[5m])) * 100), 0)[10m:30s])"#
        );
        assert_eq!(
            memory_query("n1"),
            r#"100*avg_over_time(((1-node_memory_MemAvailable_bytes{instance="n1"}/node_memory_MemTotal_bytes{instance="n1"}))[10m:30s])"#
        );
    }

    #[test]
    fn the_request_is_an_instant_query_at_the_given_time() {
        let r = query_request("up", 1700000000.5).unwrap();
        assert_eq!(r.method(), http::Method::GET);
        assert_eq!(r.uri(), "/api/v1/query?query=up&time=1700000000.5");
    }

    #[test]
    fn the_first_sample_of_a_vector_is_read() {
        let body = br#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"instance":"n1"},"value":[1700000000.5,"42.25"]},
            {"metric":{"instance":"n1","job":"other"},"value":[1700000000.5,"7"]}]}}"#;
        assert_eq!(first_sample(body), Ok(Some(42.25)));
    }

    #[test]
    fn an_empty_vector_or_another_result_type_has_no_value() {
        let empty = br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert_eq!(first_sample(empty), Ok(None));
        let scalar = br#"{"status":"success","data":{"resultType":"scalar","result":[1,"3"]}}"#;
        assert_eq!(first_sample(scalar), Ok(None));
    }

    #[test]
    fn an_error_answer_or_no_json_is_an_error_with_the_reason() {
        let e = first_sample(br#"{"status":"error","errorType":"bad_data","error":"parse error"}"#)
            .unwrap_err();
        assert_eq!(e, "bad_data: parse error");
        assert!(first_sample(b"<html>proxy</html>").is_err());
        let e = first_sample(
            br#"{"status":"success","data":{"resultType":"vector","result":[{"value":[1,"x"]}]}}"#,
        )
        .unwrap_err();
        assert!(e.contains("\"x\""), "{e}");
    }
}
