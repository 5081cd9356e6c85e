//! Volcano's own Helm chart with only the scheduler image swapped (deploy/volcano-chart): its
//! ServiceAccount, ClusterRole, ClusterRoleBinding and ConfigMap take the place of deploy/'s,
//! and vc-scheduler runs with its Deployment's arguments and its ConfigMap's files where the
//! pod would mount them. A gang is bound whole, a gang that does not fit is not bound in part,
//! and /healthz and /metrics are served as the chart's flags ask.

use std::path::Path;
use std::time::Duration;

use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group, wait_for};
use crate::ctx::Ctx;
use crate::proc::{SchedulerProc, http_get};
use crate::rendered::Rendered;
use anyhow::{Context, Result, ensure};

const NS: &str = "e2e-volcano-chart";

/// The kinds of the chart applied to the API server (a Deployment needs a kubelet, which the
/// e2e has not; its Service selects no pod).
const APPLIED: &[&str] = &[
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
];

/// deploy/'s files that the chart's objects stand in for, put back afterwards.
const REPLACED: &[&str] = &["rbac.yaml", "scheduler-config.yaml"];

pub async fn run(ctx: &Ctx) -> Result<()> {
    let chart = chart(ctx)?;
    with_chart_objects(ctx, &chart, async {
        check_runs_as_token_holder(&chart)?;
        cleaning(ctx, NS, "volcano-chart", body(ctx, &chart)).await
    })
    .await
}

/// The chart's scheduler objects, as kept in deploy/volcano-chart/.
pub fn chart(ctx: &Ctx) -> Result<Rendered> {
    Rendered::load(&ctx.env.deploy.join("volcano-chart/scheduler.yaml"))
}

/// Runs `body` with the chart's objects in the place of deploy/'s, and puts deploy/'s back
/// afterwards, whatever the outcome.
pub async fn with_chart_objects<T>(
    ctx: &Ctx,
    chart: &Rendered,
    body: impl Future<Output = Result<T>>,
) -> Result<T> {
    let result = async {
        for kind in APPLIED {
            ctx.cluster.replace(chart.one(kind)?).await?;
        }
        body.await
    }
    .await;
    for file in REPLACED {
        for object in Rendered::load(&ctx.env.deploy.join(file))?.objects {
            ctx.cluster.replace(&object).await?;
        }
    }
    result
}

/// The driver holds a token of volcano-system/volcano-scheduler (written at setup); the chart's
/// pod must run as that account, and the chart's binding must bind it to the chart's role.
fn check_runs_as_token_holder(chart: &Rendered) -> Result<()> {
    let account = chart.one("ServiceAccount")?;
    let pod_spec = &chart.one("Deployment")?["spec"]["template"]["spec"];
    let pod_account = pod_spec["serviceAccountName"]
        .as_str()
        .or(pod_spec["serviceAccount"].as_str());
    ensure!(
        account["metadata"]["namespace"] == "volcano-system"
            && account["metadata"]["name"] == "volcano-scheduler"
            && pod_account == Some("volcano-scheduler"),
        "the chart's scheduler runs as {pod_account:?}, ServiceAccount {}; the e2e token is volcano-system/volcano-scheduler's",
        account["metadata"]
    );
    let binding = chart.one("ClusterRoleBinding")?;
    let bound = binding["subjects"].as_array().is_some_and(|s| {
        s.iter().any(|s| {
            s["kind"] == "ServiceAccount"
                && s["name"] == account["metadata"]["name"]
                && s["namespace"] == account["metadata"]["namespace"]
        })
    });
    ensure!(
        bound && binding["roleRef"]["name"] == chart.one("ClusterRole")?["metadata"]["name"],
        "the chart's ClusterRoleBinding does not bind its ServiceAccount to its ClusterRole: {binding}"
    );
    Ok(())
}

async fn body(ctx: &Ctx, chart: &Rendered) -> Result<()> {
    let mut s = start(ctx, chart)?;
    let c = &ctx.cluster;
    c.nodes("volcano-chart", 2, "4", "16Gi").await?;
    let mut gang = vec![pod_group(NS, "fits", "default", 3)];
    gang.extend((0..3).map(|i| pod(NS, &format!("fits-{i}"), "fits", "2", "1Gi")));
    c.create_all(gang).await?;
    wait_bound(ctx, NS, "fits-", 3, Duration::from_secs(30)).await?;
    // The phase follows the binds, written when a later cycle sees the pods bound.
    wait_for(
        "PodGroup fits to be Running",
        Duration::from_secs(15),
        || async move { Ok(c.pod_group(NS, "fits").await?["status"]["phase"] == "Running") },
    )
    .await?;
    // Two CPUs are left; a gang of three one-CPU pods must not get part of them.
    let mut too_big = vec![pod_group(NS, "too-big", "default", 3)];
    too_big.extend((0..3).map(|i| pod(NS, &format!("too-big-{i}"), "too-big", "1", "1Gi")));
    c.create_all(too_big).await?;
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let bound = placements(ctx, NS)
            .await?
            .iter()
            .filter(|(k, v)| k.starts_with("too-big-") && !v.is_empty())
            .count();
        ensure!(
            bound == 0,
            "{bound} pods of the gang that does not fit were bound"
        );
    }
    served(&s).await?;
    s.check_alive()?;
    s.stop().await
}

/// Starts vc-scheduler as the chart's pod would run: the Deployment's arguments verbatim, the
/// ConfigMap's files in a directory of the work directory standing for the pod's mount (the
/// only substitution in the arguments). `SchedulerProc::start` adds what a pod gets from its
/// environment instead: a kubeconfig for the service account's token (in a pod: the in-cluster
/// configuration), and free loopback ports for metrics and healthz (in a pod: :8080 and :11251
/// of its own network namespace).
fn start(ctx: &Ctx, chart: &Rendered) -> Result<SchedulerProc> {
    let mount = chart.config_mount_dir()?;
    let dir = ctx.env.work.join("volcano-chart");
    std::fs::create_dir_all(&dir)?;
    for (name, text) in chart.config_files()? {
        std::fs::write(dir.join(&name), text).with_context(|| format!("writing {name}"))?;
    }
    let args = mounted_at(&chart.args()?, &mount, &dir);
    ensure!(
        args.iter()
            .any(|a| a.starts_with("--scheduler-conf=") && a.contains(&*dir.to_string_lossy())),
        "the chart's --scheduler-conf is not under its ConfigMap's mount {mount}: {args:?}"
    );
    let kubeconfig = ctx.env.work.join("scheduler.kubeconfig");
    SchedulerProc::start(&ctx.env, "volcano-chart", &args, &kubeconfig)
}

/// `args` with the pod's mount directory `mount` replaced by `dir`.
fn mounted_at(args: &[String], mount: &str, dir: &Path) -> Vec<String> {
    let (from, to) = (format!("{mount}/"), format!("{}/", dir.display()));
    args.iter().map(|a| a.replace(&from, &to)).collect()
}

/// /healthz and /metrics answer, as `--enable-healthz=true --enable-metrics=true` ask.
async fn served(s: &SchedulerProc) -> Result<()> {
    let port = s.healthz_port;
    wait_for("/healthz", Duration::from_secs(10), || async move {
        Ok(http_get(port, "/healthz").await.is_ok_and(|b| b == "ok"))
    })
    .await?;
    let metrics = s.http_get("/metrics").await?;
    ensure!(
        metrics.contains("volcano_e2e_scheduling_latency_milliseconds"),
        "/metrics lacks Volcano's scheduling latency"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_under_the_mount_are_moved() {
        let args: Vec<String> = ["--scheduler-conf=/volcano.scheduler/v.conf", "-v=3", "2>&1"]
            .map(str::to_string)
            .to_vec();
        assert_eq!(
            mounted_at(&args, "/volcano.scheduler", Path::new("/w/chart")),
            ["--scheduler-conf=/w/chart/v.conf", "-v=3", "2>&1"]
        );
    }

    #[test]
    fn the_kept_chart_runs_as_the_account_the_e2e_holds_a_token_of() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../deploy/volcano-chart/scheduler.yaml");
        check_runs_as_token_holder(&Rendered::load(&path).unwrap()).unwrap();
    }
}
