//! The chaos scenarios (`chaos-*`), faults under load: each runs vc-scheduler on 2,000 kwok nodes
//! whose pods run once bound, talking to the API server through the fault proxy
//! (`crate::fault_proxy`), with gangs arriving throughout; each injects its fault mid-run and
//! ends with the same check over every pod and PodGroup (`final_check`).

mod api_errors;
mod bind_conflict;
mod etcd_restart;
mod final_check;
mod leader_kill;
mod watch_expired;

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use futures::future::BoxFuture;
use futures::{StreamExt, TryStreamExt};
use serde_json::Value;
use tokio::task::JoinHandle;

pub use api_errors::run as api_errors;
pub use bind_conflict::run as bind_conflict;
pub use etcd_restart::run as etcd_restart;
pub use leader_kill::run as leader_kill;
pub use watch_expired::run as watch_expired;

use super::cleaning;
use crate::cluster::{Cluster, pod, pod_group};
use crate::ctx::Ctx;
use crate::kwok::{KwokProc, fake_nodes};

pub const NODES: usize = 2000;
pub const NODE_CPU: &str = "8";
pub const NODE_MEMORY: &str = "32Gi";
pub const GANG_SIZE: usize = 8;
pub const POD_CPU: &str = "1";
pub const POD_MEMORY: &str = "1Gi";
/// Gangs of a run, one arriving every `ARRIVAL_EVERY`: 640 pods over 20 seconds.
pub const GANGS: usize = 80;
pub const ARRIVAL_EVERY: Duration = Duration::from_millis(250);
/// The longest an object's creation is retried while the API server refuses it.
const CREATE_PATIENCE: Duration = Duration::from_secs(60);

/// A scenario's body, given kwok.
pub type Body = for<'a> fn(&'a Ctx, &'a mut KwokProc) -> BoxFuture<'a, Result<()>>;

/// Runs `body` on `NODES` kwok nodes `<prefix>-N` in namespace `ns`, with kwok running their
/// pods, then removes the nodes, pods and PodGroups whatever the outcome.
pub async fn staged(ctx: &Ctx, name: &str, ns: &str, prefix: &str, body: Body) -> Result<()> {
    let mut kwok = KwokProc::start(&ctx.env, name)?;
    let result = cleaning(ctx, ns, prefix, async {
        let t = Instant::now();
        fake_nodes(&ctx.cluster, prefix, NODES, NODE_CPU, NODE_MEMORY).await?;
        println!(
            "       {name}: {NODES} kwok nodes created in {:.1}s",
            t.elapsed().as_secs_f64()
        );
        body(ctx, &mut kwok).await
    })
    .await;
    kwok.stop().await?;
    result
}

/// The name of gang `g`'s PodGroup; its pods are `<name>-0..GANG_SIZE`.
pub fn gang_name(g: usize) -> String {
    format!("g{g}")
}

/// Gang `g`'s PodGroup and pods.
fn gang(ns: &str, g: usize) -> Vec<Value> {
    let name = gang_name(g);
    let mut objects = vec![pod_group(ns, &name, "default", GANG_SIZE as i32)];
    objects.extend(
        (0..GANG_SIZE).map(|i| pod(ns, &format!("{name}-{i}"), &name, POD_CPU, POD_MEMORY)),
    );
    objects
}

/// Creates `object`, retrying while the API server refuses it (it may be down); counts the
/// refusals in `refused`.
async fn create_retrying(cluster: &Cluster, object: &Value, refused: &AtomicU64) -> Result<()> {
    let start = Instant::now();
    loop {
        match cluster.create(object).await {
            Ok(()) => return Ok(()),
            Err(e) if start.elapsed() > CREATE_PATIENCE => {
                bail!("refused for {CREATE_PATIENCE:?}: {e:#}")
            }
            Err(_) => {
                refused.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// Gangs arriving throughout a run, one every `ARRIVAL_EVERY`, created by the driver directly
/// (never through the fault proxy).
pub struct Arrivals {
    task: JoinHandle<Result<()>>,
    refused: Arc<AtomicU64>,
}

impl Arrivals {
    /// Starts creating gangs `gangs` of namespace `ns`.
    pub fn start(cluster: &Cluster, ns: &str, gangs: Range<usize>) -> Arrivals {
        let refused = Arc::new(AtomicU64::new(0));
        let (cluster, ns, counted) = (cluster.clone(), ns.to_string(), refused.clone());
        let task = tokio::spawn(async move {
            let mut ticker = tokio::time::interval(ARRIVAL_EVERY);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            for g in gangs {
                ticker.tick().await;
                let objects = gang(&ns, g);
                create_retrying(&cluster, &objects[0], &counted).await?;
                futures::stream::iter(objects[1..].to_vec())
                    .map(|o| {
                        let (cluster, counted) = (cluster.clone(), counted.clone());
                        async move { create_retrying(&cluster, &o, &counted).await }
                    })
                    .buffer_unordered(GANG_SIZE)
                    .try_collect::<Vec<_>>()
                    .await?;
            }
            Ok(())
        });
        Arrivals { task, refused }
    }

    /// Waits until every gang is created; returns how many creations the API server refused
    /// (each was retried).
    pub async fn finish(self) -> Result<u64> {
        self.task.await??;
        Ok(self.refused.load(Ordering::SeqCst))
    }
}

/// Whether `s` leads, from its log.
pub fn leads(log: &str) -> bool {
    log.contains("successfully acquired lease")
}
