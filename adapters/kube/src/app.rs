//! Start-up (Volcano: cmd/scheduler/app/server.go, Run; pkg/scheduler/scheduler.go, Run): client, configuration, HTTP endpoints, default queues, leader
//! election, then the watches and the run loop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kube::api::PostParams;
use serde_json::json;
use tephra_cache::ObjectKind;
use tephra_engine::framework::Strictness;
use tokio::sync::mpsc;

use crate::api_server_check::{API_SERVER_WAIT, wait_for_api_server};
use crate::conf::ConfSource;
use crate::cycle_profile::CycleProfileRequests;
use crate::flags::Flags;
use crate::http;
use crate::leader::{ElectionConfig, Elector, identity};
use crate::metrics::Metrics;
use crate::metrics_source::MetricsSource;
use crate::multi_scheduler::MultiScheduler;
use crate::objects::Responsibility;
use crate::pprof::PprofState;
use crate::rate_limit::RateLimiter;
use crate::reflector::run_watch;
use crate::reload::ReloadWatch;
use crate::scheduler::{LoopSettings, Parts, Scheduler};
use crate::watch::{api_resource, watched_kinds};
use crate::writes::{Writer, is_status};

/// Watch events buffered between two cycles before the watches wait.
const FEED_CAPACITY: usize = 1 << 16;

/// Makes sure the queue exists (GET, then CREATE), retrying for a minute as Volcano does.
async fn ensure_queue(w: &Writer, name: &str, reclaimable: bool) -> Result<(), String> {
    let api = w.api(&api_resource(ObjectKind::Queue), "");
    let queue = json!({
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "reclaimable": reclaimable},
    });
    let mut last = String::new();
    for _ in 0..60 {
        w.limiter.acquire().await;
        match api.get_opt(name).await {
            Ok(Some(_)) => return Ok(()),
            Ok(None) => {
                let Ok(obj) = serde_json::from_value(queue.clone()) else {
                    return Err("queue encoding".into());
                };
                w.before("create queues").await;
                match api.create(&PostParams::default(), &obj).await {
                    Ok(_) => return Ok(()),
                    Err(e) if is_status(&e, 409) => return Ok(()),
                    Err(e) => last = e.to_string(),
                }
            }
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Err(format!("cannot create queue {name}: {last}"))
}

/// Runs vc-scheduler; returns only on a fatal error.
pub async fn run(flags: Flags) -> Result<(), String> {
    for gate in &flags.feature_gates.unknown {
        tracing::warn!("--feature-gates: {gate} has no effect in tephra");
    }
    let metrics = Metrics::new().map_err(|e| format!("metrics: {e}"))?;
    let (client, host) =
        crate::client::build(&flags.kubeconfig, &flags.master, &metrics.rest_client).await?;
    wait_for_api_server(&client, &host, API_SERVER_WAIT).await?;
    let mut registry = tephra_adapters::plugins::registry();
    // Plugin libraries (tephra-plugin-sdk) stay loaded for the scheduler's lifetime.
    let _libraries = if flags.plugins_dir.is_empty() {
        Vec::new()
    } else {
        tephra_adapters::plugins::load_plugins_dir(
            std::path::Path::new(&flags.plugins_dir),
            &mut registry,
        )
        .map_err(|e| e.to_string())?
    };
    let strictness = if flags.strict_config {
        Strictness::Refuse
    } else {
        Strictness::SetAside
    };
    let mut conf_source = ConfSource::new(
        &flags.scheduler_conf,
        !flags.disable_default_scheduler_config,
        strictness,
    );
    let conf = conf_source.initial(&registry).map_err(|e| e.to_string())?;
    let reload = conf_source
        .watch_dir()
        .map(|d| ReloadWatch::start(&d))
        .transpose()?;
    metrics.show_config_problems(&conf.set_aside);
    let writer = Writer {
        client: client.clone(),
        limiter: Arc::new(RateLimiter::new(flags.kube_api_qps, flags.kube_api_burst)),
        counts: metrics.api_writes.clone(),
        rest_client: metrics.rest_client.clone(),
        host,
        binds: Default::default(),
        status_hold_until: None,
    };
    let tls = flags
        .tls_files()
        .map(|files| crate::tls::server_config(&files))
        .transpose()?;
    let cycle_profiles = flags
        .enable_pprof
        .then(|| Arc::new(CycleProfileRequests::default()));
    if flags.enable_metrics || flags.enable_pprof {
        let addr = http::listen_addr("listen-address", &flags.listen_address)?;
        let pprof = cycle_profiles.clone().map(|cycle_requests| PprofState {
            cycle_requests,
            schedule_period: flags.schedule_period,
        });
        let router = http::metrics_router(flags.enable_metrics.then(|| metrics.clone()), pprof);
        let tls = if flags.metrics_tls { tls.clone() } else { None };
        http::serve(addr, router, tls)
            .await
            .map_err(|e| format!("--listen-address={}: {e}", flags.listen_address))?;
    }
    if flags.enable_healthz {
        let addr = http::listen_addr("healthz-address", &flags.healthz_address)?;
        http::serve(addr, http::healthz_router(), tls)
            .await
            .map_err(|e| format!("--healthz-address={}: {e}", flags.healthz_address))?;
    }
    let dump_requested = Arc::new(AtomicBool::new(false));
    if flags.cache_dumper {
        let flag = dump_requested.clone();
        let mut usr1 =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1())
                .map_err(|e| format!("SIGUSR1 handler: {e}"))?;
        tokio::spawn(async move {
            while usr1.recv().await.is_some() {
                flag.store(true, Ordering::SeqCst);
            }
        });
    }
    ensure_queue(&writer, "root", false).await?;
    ensure_queue(&writer, &flags.default_queue, true).await?;
    if flags.leader_elect {
        let cfg = ElectionConfig {
            namespace: flags.lease_namespace().to_string(),
            name: flags.leader_elect_resource_name.clone(),
            identity: identity(),
            lease_duration: flags.leader_elect_lease_duration,
            renew_deadline: flags.leader_elect_renew_deadline,
            retry_period: flags.leader_elect_retry_period,
        };
        let mut elector = Elector::new(cfg, writer.clone());
        elector.acquire().await;
        tokio::spawn(async move {
            elector.hold().await;
            tracing::error!("leaderelection lost");
            std::process::exit(1);
        });
    }
    let names = flags.scheduler_names();
    let keep = Responsibility {
        scheduler_names: names.clone(),
        node_selector: flags.node_selector_pairs().map_err(|e| e.to_string())?,
        replicas: MultiScheduler::from_env(|k| std::env::var(k).ok())?.map(Arc::new),
    };
    let watched = watched_kinds(&flags);
    let (tx, rx) = mpsc::channel(FEED_CAPACITY);
    for &kind in &watched {
        tokio::spawn(run_watch(client.clone(), kind, keep.clone(), tx.clone()));
    }
    let metrics_source = MetricsSource::new(client.clone(), tx.clone(), &conf.config.metrics);
    let settings = LoopSettings {
        scheduler_name: names[0].clone(),
        default_queue: flags.default_queue.clone(),
        schedule_period: flags.schedule_period,
        resource_sync_timeout: flags.resource_sync_timeout,
        node_sampling: flags.node_sampling(),
        dump_dir: flags
            .cache_dumper
            .then(|| flags.cache_dump_dir.clone().into()),
        watched,
        sharding: flags.sharding(),
    };
    Scheduler::new(Parts {
        settings,
        conf: conf.config,
        conf_source,
        reload,
        registry,
        feed: rx,
        metrics_source,
        writer,
        metrics,
        dump_requested,
        cycle_profiles,
    })
    .run()
    .await
}
