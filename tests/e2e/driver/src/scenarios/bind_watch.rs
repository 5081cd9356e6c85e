//! A watch on one namespace's pods, started before any exist: when each pod was first seen
//! bound, how many pods each node held at most at once (bound, neither finished nor
//! deleted), and any pod seen bound to a second node (a double bind). One watch delivers the changes in the order the API server made them, and a
//! scheduler binds to room freed by a finished pod only after it saw that pod finish, so the
//! peak is what the nodes really held.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use futures::{FutureExt, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use tokio::task::JoinHandle;

use crate::cluster::{Cluster, node_of};

/// What the watch has seen so far.
#[derive(Default)]
struct Seen {
    /// Pod → when it was first seen bound, and to which node.
    bound: HashMap<String, (Instant, String)>,
    /// Pods seen bound to one node, then to another.
    rebound: Vec<String>,
    /// Pod → node, of the pods bound and still holding their room.
    holding: HashMap<String, String>,
    /// Node → pods holding room on it now.
    on_node: HashMap<String, usize>,
    /// Node → the most pods it held at once.
    peak: HashMap<String, usize>,
}

impl Seen {
    fn saw(&mut self, pod: &Pod, deleted: bool) {
        let node = node_of(pod);
        if node.is_empty() {
            return;
        }
        let name = pod.metadata.name.clone().unwrap_or_default();
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        let finished = deleted || matches!(phase, Some("Succeeded" | "Failed"));
        match self.bound.get(&name) {
            None => {
                self.bound
                    .insert(name.clone(), (Instant::now(), node.to_string()));
                if !finished {
                    self.holding.insert(name, node.to_string());
                    let now = self.on_node.entry(node.to_string()).or_default();
                    *now += 1;
                    let peak = self.peak.entry(node.to_string()).or_default();
                    *peak = (*peak).max(*now);
                }
            }
            Some((_, first)) if first != node => self.rebound.push(name),
            Some(_) => {
                if finished && let Some(node) = self.holding.remove(&name) {
                    *self.on_node.entry(node).or_default() -= 1;
                }
            }
        }
    }
}

/// The watch, running until dropped.
pub struct BindWatch {
    seen: Arc<Mutex<Seen>>,
    task: JoinHandle<Result<()>>,
}

impl BindWatch {
    /// Starts watching the pods of `ns` from the namespace's current version.
    pub fn start(cluster: &Cluster, ns: &str) -> BindWatch {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let api: Api<Pod> = Api::namespaced(cluster.client.clone(), ns);
        let into = seen.clone();
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
                    let (pod, deleted) = match event {
                        WatchEvent::Added(p) | WatchEvent::Modified(p) => (p, false),
                        WatchEvent::Deleted(p) => (p, true),
                        WatchEvent::Bookmark(b) => {
                            version = b.metadata.resource_version;
                            continue;
                        }
                        WatchEvent::Error(e) => bail!("pod watch: {e:?}"),
                    };
                    if let Some(v) = &pod.metadata.resource_version {
                        version = v.clone();
                    }
                    into.lock().expect("bind watch").saw(&pod, deleted);
                }
            }
        });
        BindWatch { seen, task }
    }

    /// The bind times of `pods`, those seen so far.
    pub fn bound(&self, pods: &[String]) -> Vec<Instant> {
        self.bound_each(pods).into_iter().flatten().collect()
    }

    /// The bind time of each of `pods`, `None` for those not seen bound yet.
    pub fn bound_each(&self, pods: &[String]) -> Vec<Option<Instant>> {
        let seen = self.seen.lock().expect("bind watch");
        pods.iter()
            .map(|p| seen.bound.get(p).map(|(t, _)| *t))
            .collect()
    }

    /// Fails when a pod was seen bound to two nodes.
    pub fn check_single_binds(&self) -> Result<()> {
        let seen = self.seen.lock().expect("bind watch");
        ensure!(
            seen.rebound.is_empty(),
            "pods bound to a second node: {:?}",
            seen.rebound
        );
        Ok(())
    }

    /// The node that held the most pods at once, and how many; `None` before any bind.
    pub fn fullest(&self) -> Option<(String, usize)> {
        let seen = self.seen.lock().expect("bind watch");
        seen.peak
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(node, n)| (node.clone(), *n))
    }

    /// Fails when the watch has ended, with its error.
    pub fn check_alive(&mut self) -> Result<()> {
        match (&mut self.task).now_or_never() {
            None => Ok(()),
            Some(Ok(Ok(()))) => bail!("the pod watch ended"),
            Some(Ok(Err(e))) => Err(e.context("the pod watch failed")),
            Some(Err(e)) => bail!("the pod watch task failed: {e}"),
        }
    }
}

impl Drop for BindWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Pod, PodSpec};

    use super::*;

    fn pod(name: &str, node: &str) -> Pod {
        Pod {
            metadata: kube::api::ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: (!node.is_empty()).then(|| node.to_string()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_pod_seen_on_a_second_node_is_a_double_bind() {
        let mut seen = Seen::default();
        for (name, node) in [("a", ""), ("a", "n1"), ("a", "n1"), ("b", "n2")] {
            seen.saw(&pod(name, node), false);
        }
        assert!(seen.rebound.is_empty());
        assert!(seen.bound.contains_key("a") && !seen.bound.contains_key("c"));
        seen.saw(&pod("a", "n2"), false);
        assert_eq!(seen.rebound, ["a"]);
    }
}
