//! The check every chaos scenario ends with, once its faults have stopped: every pod the driver
//! made and kept is bound and Running (none lost, none Pending); each was bound exactly once
//! (the API server's answers to the bindings the fault proxies sent on, plus someone else's);
//! no node holds more than its allocatable; every PodGroup is Running with all its pods; and
//! vc-scheduler's cache (its SIGUSR1 dump) holds the namespace's pods on the nodes the API
//! server has them on, and no other.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams};
use tephra_engine::model::Quantity;

use super::{GANG_SIZE, gang_name};
use crate::cluster::{node_of, wait_for};
use crate::ctx::Ctx;
use crate::fault_proxy::FaultProxy;
use crate::kwok::KwokProc;
use crate::proc::SchedulerProc;
use crate::scenarios::metrics::dump_now;

/// The longest wait for every pod to be bound and Running once the faults stopped.
const SETTLE: Duration = Duration::from_secs(90);
/// The longest wait for the PodGroups' status and the cache to catch up after that.
const CATCH_UP: Duration = Duration::from_secs(60);

/// What a run should end with.
pub struct Expected<'a> {
    pub ns: &'a str,
    /// The prefix of the run's nodes (their `e2e` label).
    pub nodes: &'a str,
    /// The gangs made and not deleted.
    pub gangs: Vec<usize>,
    /// Every proxy vc-scheduler went through (they also say which pods someone else bound).
    pub proxies: Vec<&'a FaultProxy>,
}

impl Expected<'_> {
    fn pods(&self) -> BTreeSet<String> {
        self.gangs
            .iter()
            .flat_map(|&g| (0..GANG_SIZE).map(move |i| format!("{}-{i}", gang_name(g))))
            .collect()
    }
}

fn phase(p: &Pod) -> &str {
    p.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

fn name(p: &Pod) -> String {
    p.metadata.name.clone().unwrap_or_default()
}

/// Waits until every expected pod is bound and Running, and no other pod is left.
async fn settle(
    ctx: &Ctx,
    e: &Expected<'_>,
    s: &mut SchedulerProc,
    kwok: &mut KwokProc,
) -> Result<Vec<Pod>> {
    let want = e.pods();
    let start = Instant::now();
    loop {
        let pods = ctx.cluster.pods(e.ns).await?;
        let present: BTreeSet<String> = pods.iter().map(name).collect();
        let lost: Vec<&String> = want.difference(&present).collect();
        ensure!(lost.is_empty(), "pods lost: {lost:?}");
        let extra: Vec<&String> = present.difference(&want).collect();
        let waiting: Vec<String> = pods
            .iter()
            .filter(|p| node_of(p).is_empty() || phase(p) != "Running")
            .map(name)
            .collect();
        if waiting.is_empty() && extra.is_empty() {
            return Ok(pods);
        }
        s.check_alive()?;
        kwok.check_alive()?;
        ensure!(
            start.elapsed() < SETTLE,
            "{SETTLE:?} after the faults stopped, {} of {} pods not bound and Running (first: {:?}); pods not made or deleted by the driver: {extra:?}",
            waiting.len(),
            want.len(),
            &waiting[..waiting.len().min(8)]
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Every pod bound once: successful bindings (the proxies saw the API server answer 201) plus
/// someone else's, per pod. Returns (bindings answered 201, bindings by others, answered 409,
/// answered otherwise or not at all).
fn bound_once(e: &Expected<'_>, pods: &[Pod]) -> Result<(usize, usize, usize, usize)> {
    let mut binds: BTreeMap<String, usize> = BTreeMap::new();
    let (mut created, mut conflicts, mut failed) = (0, 0, 0);
    for a in e.proxies.iter().flat_map(|p| p.bind_answers()) {
        if a.namespace != e.ns {
            continue;
        }
        match a.status {
            Some(201) => {
                created += 1;
                *binds.entry(a.pod).or_default() += 1;
            }
            Some(409) => conflicts += 1,
            _ => failed += 1,
        }
    }
    let others: Vec<String> = e.proxies.iter().flat_map(|p| p.stolen_pods()).collect();
    for p in &others {
        *binds.entry(p.clone()).or_default() += 1;
    }
    let twice: Vec<_> = binds.iter().filter(|(_, n)| **n > 1).collect();
    ensure!(twice.is_empty(), "pods bound more than once: {twice:?}");
    let unbound: Vec<String> = pods
        .iter()
        .map(name)
        .filter(|p| !binds.contains_key(p))
        .collect();
    ensure!(
        unbound.is_empty(),
        "pods bound without a binding anyone saw succeed: {unbound:?}"
    );
    Ok((created, others.len(), conflicts, failed))
}

fn milli(q: &str, what: &str) -> Result<i64> {
    Ok(Quantity::parse(q)
        .map_err(|err| anyhow::anyhow!("{what}: {q:?}: {err}"))?
        .milli_value())
}

/// No node holds pods beyond its allocatable cpu, memory or pod count.
async fn within_allocatable(ctx: &Ctx, e: &Expected<'_>, pods: &[Pod]) -> Result<usize> {
    let nodes: Api<Node> = Api::all(ctx.cluster.client.clone());
    let nodes = nodes
        .list(&ListParams::default().labels(&format!("e2e={}", e.nodes)))
        .await?
        .items;
    let mut used: BTreeMap<&str, (i64, i64, i64)> = BTreeMap::new();
    for p in pods
        .iter()
        .filter(|p| !matches!(phase(p), "Succeeded" | "Failed"))
    {
        let entry = used.entry(node_of(p)).or_default();
        entry.2 += 1000;
        for c in p.spec.iter().flat_map(|s| &s.containers) {
            let requests = c.resources.as_ref().and_then(|r| r.requests.as_ref());
            for (resource, q) in requests.into_iter().flatten() {
                match resource.as_str() {
                    "cpu" => entry.0 += milli(&q.0, "pod cpu")?,
                    "memory" => entry.1 += milli(&q.0, "pod memory")?,
                    _ => {}
                }
            }
        }
    }
    let mut used_nodes = 0;
    for n in &nodes {
        let node = n.metadata.name.as_deref().unwrap_or("");
        let Some(&(cpu, memory, count)) = used.get(node) else {
            continue;
        };
        used_nodes += 1;
        let alloc = n
            .status
            .as_ref()
            .and_then(|s| s.allocatable.as_ref())
            .with_context(|| format!("node {node} has no allocatable"))?;
        let of = |r: &str| {
            alloc
                .get(r)
                .map_or(Ok(0), |q| milli(&q.0, &format!("node {node} {r}")))
        };
        ensure!(
            cpu <= of("cpu")? && memory <= of("memory")? && count <= of("pods")?,
            "node {node} holds {cpu}m cpu, {memory}m bytes and {} pods, beyond its allocatable {alloc:?}",
            count / 1000
        );
    }
    Ok(used_nodes)
}

/// Every expected PodGroup Running with all its pods, and no other PodGroup left.
async fn pod_groups_running(ctx: &Ctx, e: &Expected<'_>) -> Result<()> {
    let want: BTreeSet<String> = e.gangs.iter().map(|&g| gang_name(g)).collect();
    let last = Mutex::new(String::new());
    wait_for(
        "every PodGroup Running with all its pods",
        CATCH_UP,
        || async {
            let mut off = Vec::new();
            let mut present = BTreeSet::new();
            for pg in ctx.cluster.pod_groups(e.ns).await? {
                let name = pg["metadata"]["name"].as_str().unwrap_or("").to_string();
                let phase = pg["status"]["phase"].as_str().unwrap_or("");
                let running = pg["status"]["running"].as_u64().unwrap_or(0);
                if !want.contains(&name) || phase != "Running" || running != GANG_SIZE as u64 {
                    off.push(format!("{name}: {phase} with {running} running"));
                }
                present.insert(name);
            }
            off.extend(want.difference(&present).map(|n| format!("{n} lost")));
            *last.lock().expect("last") = format!("{:?}", &off[..off.len().min(8)]);
            Ok(off.is_empty())
        },
    )
    .await
    .with_context(|| format!("PodGroups off: {}", last.lock().expect("last")))
}

/// vc-scheduler's cache holds the namespace's pods on the nodes the API has them on.
async fn cache_agrees(ctx: &Ctx, e: &Expected<'_>, s: &SchedulerProc) -> Result<()> {
    let last = Mutex::new(String::new());
    wait_for(
        "vc-scheduler's cache to hold the pods as the API does",
        CATCH_UP,
        || async {
            let api: BTreeMap<String, String> = ctx
                .cluster
                .pods(e.ns)
                .await?
                .iter()
                .map(|p| (name(p), node_of(p).to_string()))
                .collect();
            // Dumps are named by the second: one a second at most.
            tokio::time::sleep(Duration::from_secs(1)).await;
            let dump = dump_now(ctx, s).await?;
            let cached: BTreeMap<String, String> = dump["pods"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["metadata"]["namespace"] == e.ns)
                .map(|p| {
                    let node = p["spec"]["nodeName"].as_str().unwrap_or("");
                    (
                        p["metadata"]["name"].as_str().unwrap_or("").to_string(),
                        node.to_string(),
                    )
                })
                .collect();
            let differ: Vec<String> = api
                .keys()
                .chain(cached.keys())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .filter(|p| api.get(*p) != cached.get(*p))
                .map(|p| format!("{p}: API {:?}, cache {:?}", api.get(p), cached.get(p)))
                .collect();
            *last.lock().expect("last") = format!("{:?}", &differ[..differ.len().min(8)]);
            Ok(differ.is_empty())
        },
    )
    .await
    .with_context(|| {
        format!(
            "the cache and the API differ: {}",
            last.lock().expect("last")
        )
    })
}

/// Runs the check; prints one line of what it found.
pub async fn final_check(
    ctx: &Ctx,
    scenario: &str,
    e: &Expected<'_>,
    s: &mut SchedulerProc,
    kwok: &mut KwokProc,
) -> Result<()> {
    let pods = settle(ctx, e, s, kwok).await?;
    let (created, by_others, conflicts, failed) = bound_once(e, &pods)?;
    let used_nodes = within_allocatable(ctx, e, &pods).await?;
    pod_groups_running(ctx, e).await?;
    cache_agrees(ctx, e, s).await?;
    println!(
        "       {scenario}: final check: {} pods bound once on {used_nodes} nodes, none over allocatable ({created} bindings answered 201, {by_others} by others, {conflicts} answered 409, {failed} failed); {} PodGroups Running; cache agrees",
        pods.len(),
        e.gangs.len()
    );
    Ok(())
}
