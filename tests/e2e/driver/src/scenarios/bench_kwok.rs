//! bench-kwok: vc-scheduler with the chart's configuration on thousands of kwok nodes through
//! the real API server. A burst of gangs waits when vc-scheduler starts; then gangs arrive at a
//! fixed rate, while kwok runs the pods and finishes them on a schedule, so the cluster churns.
//! The API server's own binding ceiling is measured in the same run (`throughput`'s plain
//! client). Per phase it prints pods bound per second, creation to bound p50/p99 (the driver's
//! create call to the bind arriving on its watch), process start to the first and last bind,
//! and vc-scheduler's API writes by kind, and appends one record per phase to the benchmark
//! history when `TEPHRA_HISTORY` names its file. With Volcano's own vc-scheduler built
//! (`VOLCANO_SRC`), Volcano's CRDs stand in for deploy/'s from the start, and the same burst
//! and rate run again with Volcano's scheduler, on the same nodes, in a namespace of its own,
//! under the RBAC of Volcano's chart, its queues opened as Volcano's queue controller would;
//! its figures are printed beside tephra's, with the ratio.
//! Run on request only (`tests/e2e/run bench-kwok`, or `bench-kwok-short` at a tenth of the
//! size).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};

use super::bind_watch::BindWatch;
use super::cleaning;
use super::gang_stream::{
    self, Phase, bound_within, ceiling, create_at_rate, create_burst, make_nodes, pod_names,
    status_catch_up, writes_between,
};
use super::volcano_chart;
use crate::api_writes::api_writes;
use crate::ctx::{CHART_CONF, Ctx};
use crate::env::Volcano;
use crate::history;
use crate::kwok::KwokProc;
use crate::proc::{SchedulerProc, chart_args};
use crate::volcano;

const NS: &str = "e2e-bench-kwok";
const VOLCANO_NS: &str = "e2e-bench-kwok-volcano";
const CEILING_NS: &str = "e2e-bench-ceiling";
const NODE_PREFIX: &str = "bk";

/// A run's size: the stream's (`gang_stream`), and how long Volcano's scheduler may take.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    stream: gang_stream::Size,
    /// The longest wait for a phase's binds by Volcano's scheduler, which is measured for what
    /// it binds in that time.
    volcano_timeout: Duration,
}

pub const FULL: Size = Size {
    stream: gang_stream::Size::full("bench-kwok"),
    volcano_timeout: Duration::from_secs(900),
};

pub const SHORT: Size = Size {
    stream: gang_stream::Size::short("bench-kwok-short"),
    volcano_timeout: Duration::from_secs(240),
};

pub async fn run(ctx: &Ctx, size: Size) -> Result<()> {
    let Some(v) = &ctx.env.volcano else {
        let result = cleaning(ctx, NS, NODE_PREFIX, body(ctx, size)).await;
        ctx.cluster.clear_namespace(CEILING_NS).await?;
        return result;
    };
    let result = async {
        volcano::put_crds(ctx, v).await?;
        cleaning(ctx, NS, NODE_PREFIX, body(ctx, size)).await
    }
    .await;
    ctx.cluster.clear_namespace(CEILING_NS).await?;
    ctx.cluster.clear_namespace(VOLCANO_NS).await?;
    volcano::restore_crds(ctx, v).await?;
    result
}

/// The scheduler a run measures.
#[derive(Clone, Copy)]
enum Contender<'a> {
    Tephra,
    /// Volcano's own vc-scheduler.
    Volcano(&'a Volcano),
}

impl Contender<'_> {
    fn label(self) -> &'static str {
        match self {
            Contender::Tephra => "tephra",
            Contender::Volcano(_) => "volcano",
        }
    }

    fn namespace(self) -> &'static str {
        match self {
            Contender::Tephra => NS,
            Contender::Volcano(_) => VOLCANO_NS,
        }
    }

    fn timeout(self, size: &Size) -> Duration {
        match self {
            Contender::Tephra => size.stream.timeout,
            Contender::Volcano(_) => size.volcano_timeout,
        }
    }

    /// Starts the scheduler with the chart's arguments, `conf` and the bench nodes' selector.
    fn start(self, ctx: &Ctx, name: &str, conf: &Path) -> Result<SchedulerProc> {
        let mut args = chart_args(&conf.display().to_string());
        args.push(format!("--node-selector=e2e:{NODE_PREFIX}"));
        let kubeconfig = ctx.env.work.join("scheduler.kubeconfig");
        match self {
            Contender::Tephra => SchedulerProc::start(&ctx.env, name, &args, &kubeconfig),
            Contender::Volcano(v) => {
                SchedulerProc::start_program(&ctx.env, &v.scheduler, name, &args, &kubeconfig)
            }
        }
    }

    /// The scheduler's API writes so far, from its metrics text.
    fn writes(self, metrics: &str) -> BTreeMap<String, f64> {
        match self {
            Contender::Tephra => api_writes(metrics),
            Contender::Volcano(_) => volcano::writes_by_method(metrics),
        }
    }

    /// What to do when `what` did not finish in time: tephra fails the benchmark; Volcano's
    /// scheduler is measured as far as it got.
    fn short_of(self, what: &str) -> Result<()> {
        match self {
            Contender::Tephra => bail!("{what}"),
            Contender::Volcano(_) => {
                println!("       Volcano's scheduler: {what}; measured as far as it got");
                Ok(())
            }
        }
    }
}

/// One scheduler's run: its phases and how long its PodGroup statuses took to catch up.
struct Run {
    burst: Phase,
    /// `None` when the burst was not all bound (Volcano's scheduler only).
    rate: Option<Phase>,
    catch_up: Option<f64>,
}

async fn body(ctx: &Ctx, size: Size) -> Result<()> {
    let tag = size.stream.name;
    make_nodes(ctx, &size.stream, NODE_PREFIX).await?;
    let ceiling = ceiling(ctx, &size.stream, CEILING_NS).await?;
    let mut kwok = KwokProc::start(&ctx.env, tag)?;
    let tephra = measure(ctx, &size, ceiling, Contender::Tephra, &mut kwok).await?;
    append_records(ctx, &size, ceiling, &tephra, None)?;
    if let Some(v) = &ctx.env.volcano {
        // Tephra's pods go, so Volcano's scheduler meets the nodes empty, as tephra did.
        empty_namespace(ctx, NS, size.stream.timeout).await?;
        volcano::open_queues(ctx).await?;
        let chart = volcano_chart::chart(ctx)?;
        let peer = volcano_chart::with_chart_objects(
            ctx,
            &chart,
            measure(ctx, &size, ceiling, Contender::Volcano(v), &mut kwok),
        )
        .await?;
        append_records(ctx, &size, ceiling, &peer, Some(&v.commit))?;
        compare(tag, &tephra, &peer, &v.commit);
    }
    kwok.check_alive()?;
    kwok.stop().await
}

/// Deletes the pods and PodGroups of `ns` until none is left: one deletion of thousands of pods
/// while kwok still writes their statuses can pass the API server's request timeout, and then
/// the server goes on deleting after the answer is lost.
async fn empty_namespace(ctx: &Ctx, ns: &str, timeout: Duration) -> Result<()> {
    let start = Instant::now();
    let pods: Api<Pod> = Api::namespaced(ctx.cluster.client.clone(), ns);
    loop {
        let cleared = ctx.cluster.clear_namespace(ns).await;
        let left = pods
            .list(&ListParams::default().limit(1))
            .await?
            .items
            .len();
        if cleared.is_ok() && left == 0 {
            return Ok(());
        }
        if start.elapsed() >= timeout {
            return cleared.and_then(|()| bail!("pods of {ns} left after {timeout:?}"));
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Runs the burst and the fixed rate with one scheduler in its namespace.
async fn measure(
    ctx: &Ctx,
    size: &Size,
    ceiling: f64,
    who: Contender<'_>,
    kwok: &mut KwokProc,
) -> Result<Run> {
    let ns = who.namespace();
    ctx.cluster.namespace(ns).await?;
    let mut times = BindWatch::start(&ctx.cluster, ns);
    let run = phases(ctx, size, ceiling, who, &mut times, kwok).await;
    times.check_single_binds()?;
    run
}

async fn phases(
    ctx: &Ctx,
    size: &Size,
    ceiling: f64,
    who: Contender<'_>,
    times: &mut BindWatch,
    kwok: &mut KwokProc,
) -> Result<Run> {
    let (stream, ns, timeout) = (&size.stream, who.namespace(), who.timeout(size));
    let tag = stream.name;
    let lead = format!("{tag}: {}", who.label());
    let burst_created = create_burst(ctx, &lead, ns, stream).await?;
    let name = format!("{tag}-{}", who.label());
    let conf = ctx.write_conf(&name, CHART_CONF)?;
    let start = Instant::now();
    let mut s = who.start(ctx, &name, &conf)?;
    let burst_names = pod_names(0..stream.burst_gangs);
    let bound = bound_within(times, &burst_names, timeout, || {
        s.check_alive()?;
        kwok.check_alive()
    })
    .await?;
    let after_burst = who.writes(&s.http_get("/metrics").await?);
    let burst = Phase {
        name: "burst",
        from: start,
        created: vec![burst_created; stream.burst_pods()],
        bound,
        writes: after_burst.clone(),
    };
    burst.print(&lead, ceiling);
    if !burst.complete() {
        who.short_of(&format!(
            "only {} of {} pods bound after {timeout:?}",
            burst.bound_pods(),
            burst.pods()
        ))?;
        s.stop().await?;
        return Ok(Run {
            burst,
            rate: None,
            catch_up: None,
        });
    }

    let rate_gangs = stream.burst_gangs..stream.burst_gangs + stream.rate_gangs;
    let rate_start = Instant::now();
    let created = create_at_rate(ctx, &lead, ns, stream, rate_gangs.clone()).await?;
    let rate_names = pod_names(rate_gangs);
    let bound = bound_within(times, &rate_names, timeout, || {
        s.check_alive()?;
        kwok.check_alive()
    })
    .await?;
    let mut rate = Phase {
        name: "rate",
        from: rate_start,
        created,
        bound,
        writes: BTreeMap::new(),
    };
    let catch_up = if rate.complete() {
        let groups = stream.burst_gangs + stream.rate_gangs;
        match status_catch_up(ctx, ns, groups, timeout).await? {
            Ok(seconds) => {
                println!(
                    "       {lead}: PodGroup statuses caught up {seconds:.1}s after the last bind"
                );
                Some(seconds)
            }
            Err(settled) => {
                who.short_of(&format!(
                    "{settled} of {groups} PodGroups Running or Completed after {timeout:?}"
                ))?;
                None
            }
        }
    } else {
        who.short_of(&format!(
            "only {} of {} pods bound after {timeout:?}",
            rate.bound_pods(),
            rate.pods()
        ))?;
        None
    };
    rate.writes = writes_between(&after_burst, &who.writes(&s.http_get("/metrics").await?));
    rate.print(&lead, ceiling);
    s.check_alive()?;
    s.stop().await?;
    Ok(Run {
        burst,
        rate: Some(rate),
        catch_up,
    })
}

/// Appends a record per phase of `run` to the history when asked; a run whose statuses did not
/// catch up (Volcano's scheduler short of time) has no complete record and appends none.
fn append_records(
    ctx: &Ctx,
    size: &Size,
    ceiling: f64,
    run: &Run,
    volcano_commit: Option<&str>,
) -> Result<()> {
    let (Some(rate), Some(catch_up)) = (&run.rate, run.catch_up) else {
        if std::env::var_os(history::HISTORY_VAR).is_some() {
            println!(
                "       {}: no history record: the run did not finish",
                size.stream.name
            );
        }
        return Ok(());
    };
    for phase in [&run.burst, rate] {
        let stream = &size.stream;
        let record = phase.record(
            (stream.name, stream.nodes),
            ceiling,
            catch_up,
            volcano_commit,
        );
        if let Some(path) = history::append_if_asked(&ctx.env, record)? {
            println!(
                "       {}: {} record appended to {}",
                size.stream.name,
                phase.name,
                path.display()
            );
        }
    }
    Ok(())
}

/// Prints tephra's and Volcano's figures side by side, phase by phase, with their ratio.
fn compare(tag: &str, tephra: &Run, volcano: &Run, commit: &str) {
    println!(
        "       {tag}: tephra beside Volcano's vc-scheduler ({commit}): same API server, nodes and jobs"
    );
    println!(
        "       {tag}:   {:<5} {:<8} {:>11} {:>7} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7}  API writes by method",
        "phase",
        "sched",
        "bound",
        "pods/s",
        "binding",
        "c2b p50",
        "c2b p99",
        "first",
        "last",
        "w/pod"
    );
    let phases = [
        (Some(&tephra.burst), Some(&volcano.burst)),
        (tephra.rate.as_ref(), volcano.rate.as_ref()),
    ];
    for (t, v) in phases {
        for (who, phase) in [("tephra", t), ("volcano", v)] {
            let Some(p) = phase else { continue };
            let q = p.creation_to_bound();
            let by_method = if who == "tephra" {
                volcano::by_method(&p.writes)
            } else {
                p.writes.clone()
            };
            let methods: Vec<String> = by_method
                .iter()
                .map(|(m, n)| format!("{m} {:.2}", n / p.pods().max(1) as f64))
                .collect();
            println!(
                "       {tag}:   {:<5} {who:<8} {:>11} {:>7.0} {:>8.0} {:>6.0}ms {:>6.0}ms {:>6.2}s {:>6.1}s {:>7.2}  {} per pod",
                p.name,
                format!("{}/{}", p.bound_pods(), p.pods()),
                p.pods_per_s(),
                p.binding_pods_per_s(),
                q.map_or(f64::NAN, |q| q.p50),
                q.map_or(f64::NAN, |q| q.p99),
                p.first().as_secs_f64(),
                p.last().as_secs_f64(),
                p.writes_per_pod(),
                methods.join(", ")
            );
        }
        match (t, v) {
            (Some(t), Some(v)) if v.bound_pods() == 0 => println!(
                "       {tag}:   {:<5} tephra/Volcano: no ratio, Volcano's scheduler bound no pod",
                t.name
            ),
            (Some(t), Some(v)) => println!(
                "       {tag}:   {:<5} tephra/Volcano: {:.1}x pods/s, {:.1}x binding pods/s{}",
                t.name,
                t.pods_per_s() / v.pods_per_s().max(1e-9),
                t.binding_pods_per_s() / v.binding_pods_per_s().max(1e-9),
                if v.complete() {
                    ""
                } else {
                    " (Volcano's over the pods it bound)"
                }
            ),
            _ => {}
        }
    }
    if let (Some(t), Some(v)) = (tephra.catch_up, volcano.catch_up) {
        println!(
            "       {tag}:   PodGroup statuses caught up after the last bind: tephra {t:.1}s, Volcano {v:.1}s"
        );
    }
}
