//! When each pod of a namespace was first seen bound, from a pod watch started before the
//! pods exist: what the benchmarks time binds by. A watch costs the API server one event per
//! change, where polling lists would cost it every pod each time, and take from the binds it
//! measures.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use tokio::task::JoinHandle;

use crate::cluster::{Cluster, node_of};

/// When each pod of the namespace was first seen bound, from a watch started before any exist.
#[derive(Clone, Default)]
pub struct BindTimes(Arc<Mutex<HashMap<String, Instant>>>);

impl BindTimes {
    pub fn start(cluster: &Cluster, ns: &str) -> (BindTimes, JoinHandle<Result<()>>) {
        let times = BindTimes::default();
        let api: Api<Pod> = Api::namespaced(cluster.client.clone(), ns);
        let seen = times.clone();
        let task = tokio::spawn(async move {
            let mut version = api
                .list(&ListParams::default().limit(1))
                .await?
                .metadata
                .resource_version
                .context("a list without resourceVersion")?;
            loop {
                let params = WatchParams::default().timeout(290);
                let mut events = api.watch(&params, &version).await?.boxed();
                while let Some(event) = events.try_next().await? {
                    let pod = match event {
                        WatchEvent::Added(p) | WatchEvent::Modified(p) => p,
                        WatchEvent::Bookmark(b) => {
                            version = b.metadata.resource_version;
                            continue;
                        }
                        WatchEvent::Deleted(_) => continue,
                        WatchEvent::Error(e) => bail!("pod watch: {e:?}"),
                    };
                    if let Some(v) = &pod.metadata.resource_version {
                        version = v.clone();
                    }
                    if !node_of(&pod).is_empty() {
                        let name = pod.metadata.name.clone().unwrap_or_default();
                        seen.0
                            .lock()
                            .expect("bind times")
                            .entry(name)
                            .or_insert_with(Instant::now);
                    }
                }
            }
        });
        (times, task)
    }

    /// The bind times seen so far, of every pod.
    pub fn all(&self) -> Vec<Instant> {
        self.0
            .lock()
            .expect("bind times")
            .values()
            .copied()
            .collect()
    }

    /// The bind times of `pods`, those seen so far.
    pub fn of(&self, pods: &[String]) -> Vec<Instant> {
        let seen = self.0.lock().expect("bind times");
        pods.iter().filter_map(|p| seen.get(p).copied()).collect()
    }
}
