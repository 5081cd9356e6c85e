//! tephra's own chart, deploy/helm/tephra: `helm lint --strict` passes; with its default values
//! it renders the scheduler objects of Volcano's chart (deploy/volcano-chart) but for Go's klog
//! debug socket; Volcano's `custom.scheduler_*` values reach the arguments, configuration and
//! labels; `custom.scheduler_enable=false` renders nothing. deploy/'s plain manifests agree
//! with Volcano's chart. Needs no cluster.

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use crate::ctx::Ctx;
use crate::rendered::Rendered;

/// Values a Volcano user may have set for the scheduler, in a values file.
const OVERRIDES: &str = r#"custom:
  scheduler_name: batch
  leader_elect_enable: true
  scheduler_schedule_period: 500ms
  scheduler_percentage_nodes_to_find: 0
  scheduler_metrics_enable: false
  scheduler_log_level: 5
  common_labels: {team: batch}
  scheduler_labels: {tier: control}
  scheduler_config_override: |
    actions: "enqueue, allocate"
    tiers:
    - plugins:
      - name: gang
"#;

/// The arguments Volcano's chart renders for `OVERRIDES` (release namespace volcano-system).
const OVERRIDDEN_ARGS: &[&str] = &[
    "--logtostderr",
    "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf",
    "--scheduler-name=batch",
    "--enable-healthz=true",
    "--leader-elect=true",
    "--leader-elect-resource-namespace=volcano-system",
    "--kube-api-qps=2000",
    "--kube-api-burst=2000",
    "--schedule-period=500ms",
    "--node-worker-threads=20",
    "--percentage-nodes-to-find=0",
    "-v=5",
    "2>&1",
];

pub async fn run(ctx: &Ctx) -> Result<()> {
    let chart = ctx.env.deploy.join("helm/tephra");
    let chart = chart.to_str().context("chart path")?;
    helm(ctx, &["lint", "--strict", chart]).await?;
    let volcano = Rendered::load(&ctx.env.deploy.join("volcano-chart/scheduler.yaml"))?;
    let tephra = template(ctx, chart, &[]).await?;
    same_objects(&tephra, &without_klog_socket(&volcano)?)?;

    let values = ctx.env.work.join("tephra-chart-values.yaml");
    std::fs::write(&values, OVERRIDES)?;
    let overridden = template(
        ctx,
        chart,
        &["--values", values.to_str().context("values")?],
    )
    .await?;
    ensure!(
        overridden.args()? == OVERRIDDEN_ARGS,
        "arguments for the overriding values: {:?}",
        overridden.args()?
    );
    let conf = overridden.config_files()?;
    ensure!(
        conf.get("volcano-scheduler.conf").map(String::as_str)
            == Some("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n"),
        "configuration for scheduler_config_override: {conf:?}"
    );
    let labels = &overridden.one("Deployment")?["metadata"]["labels"];
    ensure!(
        *labels == json!({"app": "volcano-scheduler", "team": "batch", "tier": "control"}),
        "Deployment labels for common_labels and scheduler_labels: {labels}"
    );
    let disabled = template(ctx, chart, &["--set", "custom.scheduler_enable=false"]).await?;
    ensure!(
        disabled.objects.is_empty(),
        "custom.scheduler_enable=false rendered {} objects",
        disabled.objects.len()
    );
    deploy_agrees(ctx, &volcano)
}

/// Runs helm with its configuration and caches in the work directory.
async fn helm(ctx: &Ctx, args: &[&str]) -> Result<String> {
    let home = ctx.env.work.join("helm-home");
    let out = tokio::process::Command::new(&ctx.env.helm)
        .args(args)
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_DATA_HOME", home.join("data"))
        .output()
        .await
        .with_context(|| format!("starting {}", ctx.env.helm.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!(
            "helm {}: {}\n{stdout}{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(stdout)
}

/// The chart rendered as release `volcano` in `volcano-system`, as Volcano's was.
async fn template(ctx: &Ctx, chart: &str, extra: &[&str]) -> Result<Rendered> {
    let mut args = vec![
        "template",
        "volcano",
        chart,
        "--namespace",
        "volcano-system",
    ];
    args.extend(extra);
    Rendered::parse(&helm(ctx, &args).await?, "helm template deploy/helm/tephra")
}

/// Volcano's objects without the debug socket of Go's klog (an emptyDir volume, its mount and
/// the DEBUG_SOCKET_DIR variable), which tephra's chart leaves out.
fn without_klog_socket(volcano: &Rendered) -> Result<Rendered> {
    let mut out = volcano.clone();
    let deployment = out
        .objects
        .iter_mut()
        .find(|o| o["kind"] == "Deployment")
        .context("no Deployment in Volcano's chart")?;
    let pod = &mut deployment["spec"]["template"]["spec"];
    let socket = |v: &Value| v["name"] == "klog-sock";
    retain(&mut pod["volumes"], |v| !socket(v))?;
    let container = &mut pod["containers"][0];
    retain(&mut container["volumeMounts"], |m| !socket(m))?;
    retain(&mut container["env"], |e| e["name"] != "DEBUG_SOCKET_DIR")?;
    if container["env"].as_array().is_some_and(Vec::is_empty) {
        container
            .as_object_mut()
            .context("container")?
            .remove("env");
    }
    Ok(out)
}

fn retain(list: &mut Value, keep: impl Fn(&Value) -> bool) -> Result<()> {
    let shown = list.to_string();
    let items = list
        .as_array_mut()
        .with_context(|| format!("not a list: {shown}"))?;
    let before = items.len();
    items.retain(|v| keep(v));
    ensure!(items.len() < before, "nothing to leave out of {shown}");
    Ok(())
}

/// The same objects, whatever their order.
fn same_objects(tephra: &Rendered, volcano: &Rendered) -> Result<()> {
    for v in &volcano.objects {
        let (kind, name) = (v["kind"].as_str().unwrap_or(""), &v["metadata"]["name"]);
        let name = name.as_str().unwrap_or("");
        match tephra.named(kind, name) {
            Some(t) if t == v => {}
            Some(t) => {
                bail!("{kind} {name} differs from Volcano's chart:\n tephra:  {t}\n volcano: {v}")
            }
            None => bail!("tephra's chart renders no {kind} {name}"),
        }
    }
    ensure!(
        tephra.objects.len() == volcano.objects.len(),
        "tephra's chart renders {} objects, Volcano's {}",
        tephra.objects.len(),
        volcano.objects.len()
    );
    Ok(())
}

/// deploy/rbac.yaml is the chart's RBAC, deploy/scheduler-config.yaml its configuration and
/// deploy/scheduler-deployment.yaml runs its arguments.
fn deploy_agrees(ctx: &Ctx, volcano: &Rendered) -> Result<()> {
    let load = |file: &str| Rendered::load(&ctx.env.deploy.join(file));
    let rbac = load("rbac.yaml")?;
    for kind in ["ServiceAccount", "ClusterRole", "ClusterRoleBinding"] {
        ensure!(
            rbac.one(kind)? == volcano.one(kind)?,
            "deploy/rbac.yaml's {kind} differs from Volcano's chart"
        );
    }
    ensure!(
        load("scheduler-config.yaml")?.config_files()? == volcano.config_files()?,
        "deploy/scheduler-config.yaml differs from Volcano's chart's configuration"
    );
    ensure!(
        load("scheduler-deployment.yaml")?.args()? == volcano.args()?,
        "deploy/scheduler-deployment.yaml's arguments differ from Volcano's chart's"
    );
    Ok(())
}
