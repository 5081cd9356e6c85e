//! The metrics source against canned monitoring systems served on 127.0.0.1: what it asks,
//! and the `NodeMetrics` events that come out of the feed.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use kube::{Client, Config};
use tephra_cache::{ClusterEvent, ObjectKind};
use tephra_engine::api::{ClusterObject, Node, NodeMetrics, UsageAverages};
use tephra_kube::metrics_source::{MetricsSource, collect, read};
use tephra_kube::watch::Feed;
use tokio::sync::mpsc;

/// What the canned server answers to a request.
type Answer = dyn Fn(&Method, &Uri, &HeaderMap, &str) -> (StatusCode, String) + Send + Sync;

/// Serves `answer` on a free loopback port.
async fn serve(answer: Arc<Answer>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = Router::new().fallback(
        move |method: Method, uri: Uri, headers: HeaderMap, body: String| {
            let answer = answer.clone();
            async move { answer(&method, &uri, &headers, &body) }
        },
    );
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// A client for an API server that is never asked (Prometheus and Elasticsearch need none).
fn unused_api() -> Client {
    Client::try_from(Config::new("http://127.0.0.1:9".parse().unwrap())).unwrap()
}

fn section(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn node_event(name: &str) -> ClusterEvent {
    let mut node = Node::default();
    node.metadata.name = name.to_string();
    ClusterEvent::Upsert(ClusterObject::Node(Box::new(node)))
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|n| n.to_string()).collect()
}

/// The query parameter `query` of a Prometheus request, decoded.
fn promql(uri: &Uri) -> String {
    let raw = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .find_map(|p| p.strip_prefix("query="))
        .unwrap_or_default();
    let mut out = Vec::new();
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&raw[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

fn vector(value: &str) -> String {
    format!(
        r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{{}},"value":[1700000000,"{value}"]}}]}}}}"#
    )
}

/// Canned Prometheus: n1 at 42.5% cpu and 61.25% memory; n2 has no cpu series and its memory
/// query is refused.
fn prometheus_answer(_: &Method, uri: &Uri, _: &HeaderMap, _: &str) -> (StatusCode, String) {
    if uri.path() != "/api/v1/query" {
        return (StatusCode::NOT_FOUND, String::new());
    }
    let q = promql(uri);
    let cpu = q.contains("node_cpu_seconds_total");
    if q.contains(r#"instance="n1""#) {
        (StatusCode::OK, vector(if cpu { "42.5" } else { "61.25" }))
    } else if cpu {
        let empty = r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        (StatusCode::OK, empty.to_string())
    } else {
        let refused = r#"{"status":"error","errorType":"bad_data","error":"no"}"#;
        (StatusCode::BAD_REQUEST, refused.to_string())
    }
}

/// The `NodeMetrics` upserts and deletes in the feed until `count` of them arrived.
async fn node_metrics_events(rx: &mut mpsc::Receiver<Feed>, count: usize) -> Vec<ClusterEvent> {
    let mut out = Vec::new();
    while out.len() < count {
        let item = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .expect("the source sent nothing in time")
            .expect("the feed is open");
        if let Feed::Event(event, None) = item
            && event.kind() == ObjectKind::NodeMetrics
        {
            out.push(event);
        }
    }
    out
}

fn averages(event: &ClusterEvent) -> (String, UsageAverages) {
    match event {
        ClusterEvent::Upsert(ClusterObject::NodeMetrics(m)) => {
            let NodeMetrics {
                metadata, averages, ..
            } = m.as_ref();
            (metadata.name.clone(), averages.clone().expect("averages"))
        }
        other => panic!("not a NodeMetrics upsert: {other:?}"),
    }
}

#[tokio::test]
async fn prometheus_answers_become_node_metrics_upserts_in_the_feed() {
    let addr = serve(Arc::new(prometheus_answer)).await;
    let (tx, mut rx) = mpsc::channel(64);
    let conf = section(&[
        ("type", "prometheus"),
        ("address", &format!("http://{addr}")),
    ]);
    let source = MetricsSource::new(unused_api(), tx, &conf);
    source.observe(&node_event("n1"));
    source.observe(&node_event("n2"));
    source.start();
    let events = node_metrics_events(&mut rx, 2).await;
    let (n1, a1) = averages(&events[0]);
    assert_eq!(n1, "n1");
    assert_eq!(
        (a1.period.as_str(), a1.cpu_percent, a1.memory_percent),
        ("10m", 42.5, 61.25)
    );
    assert!(a1.metrics_time.is_some());
    let (n2, a2) = averages(&events[1]);
    assert_eq!(n2, "n2");
    assert_eq!(
        (a2.cpu_percent, a2.memory_percent),
        (0.0, 0.0),
        "a query without a value reads 0, as in Volcano"
    );
}

#[tokio::test]
async fn a_reload_that_adds_a_source_is_read_at_the_next_collection() {
    let addr = serve(Arc::new(prometheus_answer)).await;
    let (tx, mut rx) = mpsc::channel(64);
    let source = MetricsSource::new(unused_api(), tx, &section(&[("interval", "50ms")]));
    source.observe(&node_event("n1"));
    source.start();
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert!(rx.try_recv().is_err(), "no type: nothing is collected");
    source.reconfigure(&section(&[
        ("type", "prometheus"),
        ("address", &format!("http://{addr}")),
    ]));
    let (node, a) = averages(&node_metrics_events(&mut rx, 1).await[0]);
    assert_eq!((node.as_str(), a.cpu_percent), ("n1", 42.5));
}

#[tokio::test]
async fn a_node_that_left_the_cache_has_its_metrics_deleted() {
    let addr = serve(Arc::new(prometheus_answer)).await;
    let (tx, mut rx) = mpsc::channel(64);
    let conf = section(&[
        ("type", "prometheus"),
        ("address", &format!("http://{addr}")),
        ("interval", "50ms"),
    ]);
    let source = MetricsSource::new(unused_api(), tx, &conf);
    source.observe(&node_event("n1"));
    source.observe(&node_event("n2"));
    source.start();
    node_metrics_events(&mut rx, 2).await;
    source.observe(&ClusterEvent::Delete {
        kind: ObjectKind::Node,
        namespace: String::new(),
        name: "n2".into(),
    });
    let next = node_metrics_events(&mut rx, 4).await;
    let deleted: Vec<&ClusterEvent> = next
        .iter()
        .filter(|e| matches!(e, ClusterEvent::Delete { .. }))
        .collect();
    assert!(
        matches!(deleted.first(), Some(ClusterEvent::Delete { kind: ObjectKind::NodeMetrics, name, .. }) if name == "n2"),
        "{next:?}"
    );
}

/// Log lines written while it is alive on this thread (the tests' runtime has one).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test]
async fn an_unreachable_prometheus_reads_zero_and_warns_naming_its_address() {
    let log = Captured::default();
    let writer = log.clone();
    let _logging = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish(),
    );
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let address = format!("http://{addr}");
    let settings = read(&section(&[("type", "prometheus"), ("address", &address)]))
        .unwrap()
        .unwrap();
    let got = collect(&unused_api(), &settings, &names(&["n1"]))
        .await
        .unwrap();
    assert_eq!((got[0].cpu_percent, got[0].memory_percent), (0.0, 0.0));
    let text = log.text();
    assert!(
        text.contains("WARN") && text.contains(&address) && text.contains("2 of 2 queries"),
        "{text}"
    );
}

#[tokio::test]
async fn an_unreachable_elasticsearch_fails_the_collection_naming_its_address() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let address = format!("http://{addr}");
    let settings = read(&section(&[
        ("type", "elasticsearch"),
        ("address", &address),
    ]))
    .unwrap()
    .unwrap();
    let e = collect(&unused_api(), &settings, &names(&["n1"]))
        .await
        .unwrap_err();
    assert!(e.contains(&address), "{e}");
}

#[tokio::test]
async fn elasticsearch_is_searched_per_node_with_basic_auth() {
    let answer = |method: &Method, uri: &Uri, headers: &HeaderMap, body: &str| {
        let search: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        let node = search["query"]["bool"]["must"][1]["term"]["host.hostname"].clone();
        // "u:p" in base64.
        let authorised = headers
            .get("authorization")
            .is_some_and(|v| v == "Basic dTpw");
        if method != Method::POST || uri.path() != "/metricbeat-*/_search" || !authorised {
            return (StatusCode::FORBIDDEN, "{}".to_string());
        }
        let cpu = if node == "n1" { "0.3" } else { "null" };
        let aggs =
            format!(r#"{{"aggregations":{{"cpu":{{"value":{cpu}}},"mem":{{"value":0.5}}}}}}"#);
        (StatusCode::OK, aggs)
    };
    let addr = serve(Arc::new(answer)).await;
    let settings = read(&section(&[
        ("type", "elasticsearch"),
        ("address", &format!("http://{addr}")),
        ("elasticsearch.username", "u"),
        ("elasticsearch.password", "p"),
    ]))
    .unwrap()
    .unwrap();
    let got = collect(&unused_api(), &settings, &names(&["n1", "n2"]))
        .await
        .unwrap();
    let values: Vec<(&str, f64, f64)> = got
        .iter()
        .map(|c| (c.node.as_str(), c.cpu_percent, c.memory_percent))
        .collect();
    assert_eq!(values, [("n1", 30.0, 50.0), ("n2", 0.0, 50.0)]);
}

#[tokio::test]
async fn the_custom_metrics_api_is_read_through_the_api_client() {
    let answer = |_: &Method, uri: &Uri, _: &HeaderMap, _: &str| {
        let item = |node: &str, value: &str| {
            format!(
                r#"{{"describedObject":{{"kind":"Node","name":"{node}"}},"timestamp":"2026-01-01T00:00:00Z","value":"{value}"}}"#
            )
        };
        let body = match uri.path() {
            "/apis/custom.metrics.k8s.io" => {
                r#"{"kind":"APIGroup","versions":[{"version":"v1beta2"},{"version":"v1beta1"}]}"#
                    .to_string()
            }
            "/apis/custom.metrics.k8s.io/v1beta2/nodes/*/node_cpu_usage_avg" => {
                format!(
                    r#"{{"items":[{},{}]}}"#,
                    item("n1", "250m"),
                    item("elsewhere", "1")
                )
            }
            "/apis/custom.metrics.k8s.io/v1beta2/nodes/*/node_memory_usage_avg" => {
                format!(r#"{{"items":[{}]}}"#, item("n1", "500m"))
            }
            _ => return (StatusCode::NOT_FOUND, "{}".to_string()),
        };
        (StatusCode::OK, body)
    };
    let addr = serve(Arc::new(answer)).await;
    let api = Client::try_from(Config::new(format!("http://{addr}").parse().unwrap())).unwrap();
    let settings = read(&section(&[("type", "prometheus_adaptor")]))
        .unwrap()
        .unwrap();
    let got = collect(&api, &settings, &names(&["n1", "n2"]))
        .await
        .unwrap();
    assert_eq!(
        (
            got[0].node.as_str(),
            got[0].cpu_percent,
            got[0].memory_percent
        ),
        ("n1", 25.0, 50.0)
    );
    assert_eq!(got[0].metrics_time.as_deref(), Some("2026-01-01T00:00:00Z"));
    assert_eq!(
        (
            got[1].node.as_str(),
            got[1].cpu_percent,
            got[1].metrics_time.as_deref()
        ),
        ("n2", 0.0, None),
        "a node the API does not report reads 0 with no time, as in Volcano"
    );
}
