//! Node usage from a monitoring system, as Volcano's cache collects it (Volcano:
//! pkg/scheduler/cache/cache.go, Run, GetMetricsData and setMetricsData;
//! pkg/scheduler/metrics/source): the configuration's `metrics:` section names the system
//! (`type`), where it is (`address`) and how often to ask (`interval`). A task of its own asks
//! every `interval` for every cached node's cpu and memory averages over `10m` and sends them
//! as `NodeMetrics` upserts into the watches' feed, so the run loop stays the cache's one
//! writer and the `rescheduling` and `usage` plugins read them as they read offline
//! `NodeMetrics` (`usage` also reads when they were measured, ignoring figures over five
//! minutes old).
//!
//! As in Volcano, polling starts once the caches synced, `interval` is read then and only
//! then, and every collection reads the section as the last reload left it (a reload that adds
//! or changes `type` or `address` takes effect at the next collection). A source that cannot be
//! read logs a warning naming its address, and the nodes keep their last values; the scheduler
//! runs on.

mod elasticsearch;
mod endpoint;
mod prometheus;
mod prometheus_adaptor;
mod settings;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kube::Client;
use tephra_cache::{ClusterEvent, ObjectKind};
use tephra_engine::api::{ClusterObject, NodeMetrics, ObjectMeta, Time, UsageAverages};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

pub use settings::{DEFAULT_INTERVAL, SourceSettings, SourceType, interval_of, read};

use crate::watch::Feed;

/// The period every source averages over and files its values under (Volcano:
/// pkg/scheduler/metrics/source/metrics_client.go, NODE_METRICS_PERIOD).
pub const PERIOD: &str = "10m";

/// How long one collection may take in all (Volcano's 60 s context in GetMetricsData).
pub const COLLECTION_TIMEOUT: Duration = Duration::from_secs(60);

/// One node's averages from one collection.
#[derive(Debug, Clone, PartialEq)]
pub struct Collected {
    pub node: String,
    pub cpu_percent: f64,
    pub memory_percent: f64,
    /// When measured (RFC 3339); `None` when the source did not report the node.
    pub metrics_time: Option<String>,
}

impl Collected {
    /// The cache object that carries these averages.
    pub fn into_node_metrics(self) -> NodeMetrics {
        NodeMetrics {
            metadata: ObjectMeta {
                name: self.node,
                ..Default::default()
            },
            averages: Some(UsageAverages {
                period: PERIOD.to_string(),
                cpu_percent: self.cpu_percent,
                memory_percent: self.memory_percent,
                metrics_time: self.metrics_time,
            }),
            ..Default::default()
        }
    }
}

/// The current time as `NodeMetrics` carry it, for sources that report none.
fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    Time(secs).to_string()
}

/// Asks the source once for every node in `nodes`; an error, naming the source, when the
/// collection as a whole failed (Volcano then leaves every node's usage as it was).
pub async fn collect(
    api: &Client,
    settings: &SourceSettings,
    nodes: &BTreeSet<String>,
) -> Result<Vec<Collected>, String> {
    let deadline = Instant::now() + COLLECTION_TIMEOUT;
    match settings.source {
        SourceType::Prometheus => prometheus::collect(settings, nodes, deadline).await,
        SourceType::Elasticsearch => elasticsearch::collect(settings, nodes, deadline).await,
        SourceType::PrometheusAdaptor => prometheus_adaptor::collect(api, nodes, deadline).await,
    }
}

/// The feed items for one collection: an upsert per node, and a delete for each node reported
/// before that has left the cache since. `reported` becomes the nodes reported now.
pub fn feed_items(collected: Vec<Collected>, reported: &mut BTreeSet<String>) -> Vec<Feed> {
    let now: BTreeSet<String> = collected.iter().map(|c| c.node.clone()).collect();
    let gone = reported.difference(&now).map(|name| {
        Feed::Event(
            ClusterEvent::Delete {
                kind: ObjectKind::NodeMetrics,
                namespace: String::new(),
                name: name.clone(),
            },
            None,
        )
    });
    let mut items: Vec<Feed> = gone.collect();
    items.extend(collected.into_iter().map(|c| {
        Feed::Event(
            ClusterEvent::Upsert(ClusterObject::NodeMetrics(Box::new(c.into_node_metrics()))),
            None,
        )
    }));
    *reported = now;
    items
}

/// The run loop's side of the source: it hands over the node names the cache holds and the
/// `metrics:` section of each installed configuration, and starts the polling task.
pub struct MetricsSource {
    api: Client,
    feed: mpsc::Sender<Feed>,
    section: watch::Sender<BTreeMap<String, String>>,
    nodes: watch::Sender<BTreeSet<String>>,
}

impl MetricsSource {
    /// A source fed into `feed`, reading the custom metrics API through `api`, configured by
    /// `section` until `reconfigure`.
    pub fn new(api: Client, feed: mpsc::Sender<Feed>, section: &BTreeMap<String, String>) -> Self {
        MetricsSource {
            api,
            feed,
            section: watch::Sender::new(section.clone()),
            nodes: watch::Sender::new(BTreeSet::new()),
        }
    }

    /// Follows the node names through an event the cache applies.
    pub fn observe(&self, event: &ClusterEvent) {
        match event {
            ClusterEvent::Upsert(ClusterObject::Node(node)) => {
                let name = &node.metadata.name;
                self.nodes
                    .send_if_modified(|names| !names.contains(name) && names.insert(name.clone()));
            }
            ClusterEvent::Delete {
                kind: ObjectKind::Node,
                name,
                ..
            } => {
                self.nodes.send_if_modified(|names| names.remove(name));
            }
            _ => {}
        }
    }

    /// Installs a reloaded configuration's `metrics:` section for the next collections.
    pub fn reconfigure(&self, section: &BTreeMap<String, String>) {
        self.section.send_replace(section.clone());
    }

    /// Starts polling: a collection now, then one `interval` after each ends.
    pub fn start(&self) {
        tokio::spawn(poll(
            self.api.clone(),
            self.feed.clone(),
            self.section.subscribe(),
            self.nodes.subscribe(),
        ));
    }
}

async fn poll(
    api: Client,
    feed: mpsc::Sender<Feed>,
    section: watch::Receiver<BTreeMap<String, String>>,
    nodes: watch::Receiver<BTreeSet<String>>,
) {
    let interval = interval_of(&section.borrow());
    tracing::info!("node metrics: collected every {interval:?}");
    let mut reported = BTreeSet::new();
    loop {
        let current = section.borrow().clone();
        match read(&current) {
            Ok(None) => tracing::debug!("no metrics type configured: node usage is not collected"),
            Err(e) => tracing::warn!("node metrics: {e}"),
            Ok(Some(settings)) => {
                let names = nodes.borrow().clone();
                match collect(&api, &settings, &names).await {
                    Ok(collected) => {
                        for item in feed_items(collected, &mut reported) {
                            if feed.send(item).await.is_err() {
                                return;
                            }
                        }
                    }
                    Err(e) => tracing::warn!("node metrics: {e}; node usage keeps its last values"),
                }
            }
        }
        tokio::time::sleep(interval).await;
    }
}
