//! When each pod of a namespace was first seen bound, and to which node, from a pod watch
//! started before any exist; a pod seen on a second node is a double bind.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use tokio::task::JoinHandle;

use crate::cluster::{Cluster, node_of};

#[derive(Default)]
struct Seen {
    /// Pod name → when it was first seen bound, and to which node.
    bound: HashMap<String, (Instant, String)>,
    /// Pods seen bound to one node, then to another.
    rebound: Vec<String>,
}

/// The binds of one namespace's pods, as its watch delivers them.
#[derive(Clone, Default)]
pub struct BindTimes(Arc<Mutex<Seen>>);

impl BindTimes {
    /// Watches namespace `ns` until the returned task is aborted.
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
                    seen.saw(pod.metadata.name.clone().unwrap_or_default(), node_of(&pod));
                }
            }
        });
        (times, task)
    }

    fn saw(&self, pod: String, node: &str) {
        if node.is_empty() {
            return;
        }
        let mut seen = self.0.lock().expect("bind times");
        match seen.bound.get(&pod) {
            None => {
                seen.bound.insert(pod, (Instant::now(), node.to_string()));
            }
            Some((_, first)) if first != node => seen.rebound.push(pod),
            Some(_) => {}
        }
    }

    /// The bind time of each of `pods`, `None` for those not seen bound yet.
    pub fn of(&self, pods: &[String]) -> Vec<Option<Instant>> {
        let seen = self.0.lock().expect("bind times");
        pods.iter()
            .map(|p| seen.bound.get(p).map(|(t, _)| *t))
            .collect()
    }

    /// Fails when a pod was seen bound to two nodes.
    pub fn check_single_binds(&self) -> Result<()> {
        let seen = self.0.lock().expect("bind times");
        ensure!(
            seen.rebound.is_empty(),
            "pods bound to a second node: {:?}",
            seen.rebound
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_seen_on_a_second_node_is_a_double_bind() {
        let times = BindTimes::default();
        times.saw("a".into(), "");
        times.saw("a".into(), "n1");
        times.saw("a".into(), "n1");
        times.saw("b".into(), "n2");
        assert!(times.check_single_binds().is_ok());
        assert_eq!(
            times
                .of(&["a".into(), "c".into()])
                .iter()
                .map(Option::is_some)
                .collect::<Vec<_>>(),
            [true, false]
        );
        times.saw("a".into(), "n2");
        assert!(times.check_single_binds().is_err());
    }
}
