//! `type: elasticsearch`: one search per node over the index, averaging Metricbeat's cpu and
//! memory fields over the last `10m` (Volcano: pkg/scheduler/metrics/source/
//! metrics_client_elasticsearch.go, NodeMetricsAvg). The fields hold fractions, so they are
//! read as percent × 100. As in Volcano, a request that fails or an answer that is no JSON
//! fails the whole collection, while a JSON answer without the averages (an error status, no
//! documents) reads 0.

use std::collections::BTreeSet;

use http::Request;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::endpoint::{client_for, fetch};
use super::{COLLECTION_TIMEOUT, Collected, PERIOD, SourceSettings, now_rfc3339};

/// cpu usage of a document, a fraction of the host.
const CPU_FIELD: &str = "host.cpu.usage";
/// Memory in use of a document, a fraction of the host.
const MEMORY_FIELD: &str = "system.memory.actual.used.pct";
/// The largest answer read (Volcano's `maxBodySize`).
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The search: no hits, the documents of the last period whose `hostname_field` is `node`,
/// the averages of the two fields.
pub fn search_body(hostname_field: &str, node: &str) -> Value {
    json!({
        "size": 0,
        "query": {"bool": {"must": [
            {"range": {"@timestamp": {"gte": format!("now-{PERIOD}"), "lt": "now"}}},
            {"term": {hostname_field: node}},
        ]}},
        "aggs": {
            "cpu": {"avg": {"field": CPU_FIELD}},
            "mem": {"avg": {"field": MEMORY_FIELD}},
        },
    })
}

/// The search request against `index` (a name or pattern).
pub fn search_request(
    index: &str,
    hostname_field: &str,
    node: &str,
) -> Result<Request<Vec<u8>>, String> {
    Request::post(format!("/{index}/_search"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(search_body(hostname_field, node).to_string().into_bytes())
        .map_err(|e| format!("elasticsearch.index {index:?}: {e}"))
}

/// cpu and memory percent from an answer; an error when it is too large or no JSON.
pub fn averages(body: &[u8]) -> Result<(f64, f64), String> {
    if body.len() > MAX_ANSWER_BYTES {
        return Err(format!("an answer over {MAX_ANSWER_BYTES} bytes"));
    }
    let answer: Value =
        serde_json::from_slice(body).map_err(|e| format!("not an Elasticsearch answer: {e}"))?;
    let percent = |name: &str| {
        answer["aggregations"][name]["value"]
            .as_f64()
            .unwrap_or(0.0)
            * 100.0
    };
    Ok((percent("cpu"), percent("mem")))
}

/// Every node's averages, one search each; the first failure fails the collection.
pub async fn collect(
    settings: &SourceSettings,
    nodes: &BTreeSet<String>,
    deadline: Instant,
) -> Result<Vec<Collected>, String> {
    let blame = |e: String| format!("elasticsearch at {}: {e}", settings.address);
    let auth = (!settings.es_username.is_empty())
        .then_some((settings.es_username.as_str(), settings.es_password.as_str()));
    let client = client_for(&settings.address, settings.insecure_skip_verify, auth)?;
    let mut out = Vec::with_capacity(nodes.len());
    for node in nodes {
        let request =
            search_request(&settings.es_index, &settings.es_hostname_field, node).map_err(blame)?;
        let (_, body) = tokio::time::timeout_at(deadline, fetch(&client, request))
            .await
            .map_err(|_| blame(format!("no answer within {COLLECTION_TIMEOUT:?}")))?
            .map_err(blame)?;
        let (cpu, memory) = averages(&body).map_err(|e| blame(format!("node {node}: {e}")))?;
        out.push(Collected {
            node: node.clone(),
            cpu_percent: cpu,
            memory_percent: memory,
            metrics_time: Some(now_rfc3339()),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_averages_both_fields_over_the_node_s_last_ten_minutes() {
        let body = search_body("host.hostname", "n1");
        assert_eq!(body["size"], 0);
        let must = &body["query"]["bool"]["must"];
        assert_eq!(
            must[0]["range"]["@timestamp"],
            json!({"gte": "now-10m", "lt": "now"})
        );
        assert_eq!(must[1]["term"], json!({"host.hostname": "n1"}));
        assert_eq!(body["aggs"]["cpu"]["avg"]["field"], "host.cpu.usage");
        assert_eq!(
            body["aggs"]["mem"]["avg"]["field"],
            "system.memory.actual.used.pct"
        );
    }

    #[test]
    fn the_request_posts_json_to_the_index_s_search() {
        let r = search_request("metricbeat-*", "host.name", "n1").unwrap();
        assert_eq!(r.method(), http::Method::POST);
        assert_eq!(r.uri(), "/metricbeat-*/_search");
        assert_eq!(r.headers()[http::header::CONTENT_TYPE], "application/json");
        let body: Value = serde_json::from_slice(r.body()).unwrap();
        assert_eq!(
            body["query"]["bool"]["must"][1]["term"],
            json!({"host.name": "n1"})
        );
    }

    #[test]
    fn fractions_are_read_as_percent() {
        let body = br#"{"took":3,"aggregations":{"cpu":{"value":0.25},"mem":{"value":0.5}}}"#;
        assert_eq!(averages(body), Ok((25.0, 50.0)));
    }

    #[test]
    fn an_answer_without_averages_reads_zero() {
        let no_documents = br#"{"aggregations":{"cpu":{"value":null},"mem":{"value":null}}}"#;
        assert_eq!(averages(no_documents), Ok((0.0, 0.0)));
        let missing_index = br#"{"error":{"type":"index_not_found_exception"},"status":404}"#;
        assert_eq!(averages(missing_index), Ok((0.0, 0.0)));
    }

    #[test]
    fn an_answer_that_is_no_json_or_too_large_is_an_error() {
        assert!(averages(b"<html>bad gateway</html>").is_err());
        let large = vec![b' '; MAX_ANSWER_BYTES + 1];
        assert!(averages(&large).unwrap_err().contains("bytes"));
    }
}
