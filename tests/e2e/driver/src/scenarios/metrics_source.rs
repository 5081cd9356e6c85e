//! Node usage from Prometheus: a canned Prometheus on 127.0.0.1 reports one node hot, one
//! idle and one in between; vc-scheduler, configured with `metrics: {type: prometheus}` and
//! the rescheduling plugin reading its `10m` averages, evicts pods from the hot node only.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Result, ensure};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::cleaning;
use crate::cluster::{node_of, pod, pod_group, wait_for};
use crate::ctx::Ctx;

const NS: &str = "e2e-msource";
const NODES: &str = "msource";

/// Each node's (cpu, memory) percent as the canned Prometheus reports it.
const USAGE: [(&str, &str, &str); 3] = [
    ("msource-0", "87.5", "75"),
    ("msource-1", "10", "10"),
    ("msource-2", "50", "50"),
];

fn conf(prometheus: &str) -> String {
    format!(
        "actions: \"shuffle\"\ntiers:\n- plugins:\n  - name: rescheduling\n    arguments:\n      interval: 0s\n      metricsPeriod: 10m\n      strategies:\n      - name: lowNodeUtilization\n        params:\n          thresholds: {{cpu: 20, memory: 20}}\n          targetThresholds: {{cpu: 60, memory: 60}}\nmetrics:\n  type: prometheus\n  address: http://{prometheus}\n  interval: 1s\n"
    )
}

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, NODES, body(ctx)).await
}

/// `%XX` sequences of a query string decoded.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = text
            .get(i + 1..i + 3)
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The canned answer to a request line's query: the node's value, or an empty vector.
fn answer(request_line: &str) -> String {
    let query = percent_decoded(request_line);
    let cpu = query.contains("node_cpu_seconds_total");
    let value = USAGE
        .iter()
        .find(|(node, _, _)| query.contains(&format!("instance=\"{node}\"")))
        .map(|(_, c, m)| if cpu { *c } else { *m });
    let result = value
        .map(|v| format!(r#"[{{"metric":{{}},"value":[1700000000,"{v}"]}}]"#))
        .unwrap_or_else(|| "[]".to_string());
    format!(r#"{{"status":"success","data":{{"resultType":"vector","result":{result}}}}}"#)
}

async fn respond(mut stream: TcpStream) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let body = answer(text.lines().next().unwrap_or_default());
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await
}

/// Serves the canned Prometheus on a free loopback port; counts the queries answered.
async fn prometheus(queries: Arc<AtomicUsize>) -> Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?.to_string();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            queries.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(respond(stream));
        }
    });
    Ok(addr)
}

/// Pods being evicted (a deletion timestamp, or gone) by node, among `placed`.
async fn evicted(ctx: &Ctx, placed: &[(String, String)]) -> Result<Vec<(String, String)>> {
    let pods = ctx.cluster.pods(NS).await?;
    Ok(placed
        .iter()
        .filter(|(name, _)| {
            pods.iter()
                .find(|p| p.metadata.name.as_deref() == Some(name.as_str()))
                .is_none_or(|p| p.metadata.deletion_timestamp.is_some())
        })
        .cloned()
        .collect())
}

async fn body(ctx: &Ctx) -> Result<()> {
    ctx.cluster.nodes(NODES, 3, "8", "16Gi").await?;
    let placed: Vec<(String, String)> = [
        ("hot-a", "msource-0"),
        ("hot-b", "msource-0"),
        ("hot-c", "msource-0"),
        ("mid-a", "msource-2"),
    ]
    .iter()
    .map(|(p, n)| (p.to_string(), n.to_string()))
    .collect();
    let mut objects = vec![pod_group(NS, "web", "default", 1)];
    objects.extend(placed.iter().map(|(p, _)| pod(NS, p, "web", "2", "4Gi")));
    ctx.cluster.create_all(objects).await?;
    for (p, node) in &placed {
        ctx.cluster.bind(NS, p, node).await?;
        ctx.cluster.set_phase(NS, p, "Running").await?;
    }
    let queries = Arc::new(AtomicUsize::new(0));
    let address = prometheus(queries.clone()).await?;
    let conf = ctx.write_conf("msource", &conf(&address))?;
    let mut s = ctx.scheduler("metrics-source", &conf, &["--node-selector=e2e:msource"])?;
    let placed = &placed;
    wait_for(
        "a pod on the hot node to be evicted",
        Duration::from_secs(60),
        || async move { Ok(!evicted(ctx, placed).await?.is_empty()) },
    )
    .await?;
    let out = evicted(ctx, placed).await?;
    ensure!(
        out.iter().all(|(_, node)| node == "msource-0"),
        "evicted from a node that is not over-utilised: {out:?}"
    );
    ensure!(
        queries.load(Ordering::SeqCst) >= 6,
        "Prometheus was asked {} times",
        queries.load(Ordering::SeqCst)
    );
    let pods = ctx.cluster.pods(NS).await?;
    ensure!(
        pods.iter()
            .any(|p| node_of(p) == "msource-2" && p.metadata.deletion_timestamp.is_none()),
        "the pod on the node in between was evicted"
    );
    s.check_alive()?;
    s.stop().await
}
