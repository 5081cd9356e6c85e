//! kwok playing the kubelets of fake nodes: the nodes a scenario makes with `fake_nodes` carry
//! kwok's annotation, and a kwok process started by `KwokProc::start` marks every pod bound to
//! one of them Running (one status write, as a kubelet's first), and marks Succeeded, after
//! the time its `RUN_FOR` annotation says, a pod that has one. So pods hold their
//! resources while they run and give them back when they finish, as in a cluster.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;

use anyhow::{Context, Result, bail};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use tokio::process::{Child, Command};

use crate::cluster::Cluster;
use crate::env::Env;

/// The annotation (and value) of the nodes kwok manages.
pub const FAKE_NODE: (&str, &str) = ("kwok.x-k8s.io/node", "fake");

/// A pod annotation: how long from Running to Succeeded, a Go duration (`20s`). Pods without
/// it run until deleted.
pub const RUN_FOR: &str = "tephra.e2e/run-for";

/// An annotation no node has: the node stage's selector.
const NEVER: &str = "tephra.e2e/never";

/// Status writes kwok makes at once (its default, 4, caps it near 200 pods/s here).
const PLAY_PARALLELISM: u32 = 32;

/// Nodes created at once.
const CREATE_CONCURRENCY: usize = 32;

/// kwok's configuration: its options and the stages pods go through (kwok.x-k8s.io/v1alpha1
/// Stage; kwok's own `pod-create`, `pod-ready` and `pod-complete` in one step each, without
/// their delays). A pod goes Running only from Pending: kwok was seen to make a Succeeded pod,
/// its pod IP gone, Running again otherwise. kwok
/// manages nodes, and so their pods, only when it has a stage for nodes; the driver makes the
/// nodes Ready itself, so that stage selects no node.
fn configuration() -> String {
    format!(
        r#"apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: {PLAY_PARALLELISM}
  nodePlayStageParallelism: {PLAY_PARALLELISM}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-none
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.metadata.annotations["{NEVER}"]'
      operator: 'Exists'
  next:
    statusTemplate: |
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-running
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Pending']
    - key: '.status.podIP'
      operator: 'DoesNotExist'
  next:
    statusTemplate: |
      {{{{ $now := Now }}}}
      conditions:
      - type: PodScheduled
        status: "True"
        lastTransitionTime: {{{{ $now | Quote }}}}
      - type: Initialized
        status: "True"
        lastTransitionTime: {{{{ $now | Quote }}}}
      - type: ContainersReady
        status: "True"
        lastTransitionTime: {{{{ $now | Quote }}}}
      - type: Ready
        status: "True"
        lastTransitionTime: {{{{ $now | Quote }}}}
      containerStatuses:
      {{{{ range .spec.containers }}}}
      - image: {{{{ .image | Quote }}}}
        name: {{{{ .name | Quote }}}}
        ready: true
        restartCount: 0
        started: true
        state:
          running:
            startedAt: {{{{ $now | Quote }}}}
      {{{{ end }}}}
      hostIP: {{{{ NodeIPWith .spec.nodeName | Quote }}}}
      podIP: {{{{ PodIPWith .spec.nodeName false ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}}}
      phase: Running
      startTime: {{{{ $now | Quote }}}}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-succeeded
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '.metadata.annotations["{RUN_FOR}"]'
      operator: 'Exists'
  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.annotations["{RUN_FOR}"]'
  next:
    statusTemplate: |
      {{{{ $now := Now }}}}
      conditions:
      - type: ContainersReady
        status: "False"
        reason: PodCompleted
        lastTransitionTime: {{{{ $now | Quote }}}}
      - type: Ready
        status: "False"
        reason: PodCompleted
        lastTransitionTime: {{{{ $now | Quote }}}}
      containerStatuses:
      {{{{ range .spec.containers }}}}
      - image: {{{{ .image | Quote }}}}
        name: {{{{ .name | Quote }}}}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            reason: Completed
            finishedAt: {{{{ $now | Quote }}}}
      {{{{ end }}}}
      phase: Succeeded
"#
    )
}

/// A running kwok.
pub struct KwokProc {
    pub log: PathBuf,
    child: Child,
}

impl KwokProc {
    /// Starts kwok with the admin kubeconfig, managing the nodes `fake_nodes` makes.
    pub fn start(env: &Env, name: &str) -> Result<KwokProc> {
        let conf = env.work.join(format!("{name}-kwok.yaml"));
        std::fs::write(&conf, configuration())?;
        let log = env.work.join(format!("{name}-kwok.log"));
        let out = std::fs::File::create(&log)?;
        let (key, value) = FAKE_NODE;
        let child = Command::new(&env.kwok)
            .arg(format!("--config={}", conf.display()))
            .arg(format!(
                "--kubeconfig={}",
                env.work.join("admin.kubeconfig").display()
            ))
            .arg("--manage-all-nodes=false")
            // No node leases: nothing in the e2e cluster reads them (no node lifecycle
            // controller runs), and renewing 5,000 of them every 10 s is 500 writes a second
            // that take the API server's CPU from what the scenarios measure.
            .arg("--node-lease-duration-seconds=0")
            .arg(format!(
                "--manage-nodes-with-annotation-selector={key}={value}"
            ))
            .stdout(out.try_clone()?)
            .stderr(out)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", env.kwok.display()))?;
        Ok(KwokProc { log, child })
    }

    /// Fails when the process has exited.
    pub fn check_alive(&mut self) -> Result<()> {
        if let Some(status) = self.child.try_wait()? {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(15)..].join("\n");
            bail!("kwok exited ({status}); log: {tail}");
        }
        Ok(())
    }

    pub async fn stop(&mut self) -> Result<()> {
        self.child.start_kill().ok();
        self.child.wait().await?;
        Ok(())
    }
}

/// Ready nodes `prefix-0..n` for kwok, labelled `e2e=<prefix>`, with `cpu` and `memory`
/// allocatable and room for 110 pods, as a kubelet reports them.
pub async fn fake_nodes(
    cluster: &Cluster,
    prefix: &str,
    n: usize,
    cpu: &str,
    memory: &str,
) -> Result<()> {
    let names: Vec<String> = (0..n).map(|i| format!("{prefix}-{i}")).collect();
    let resources = json!({"cpu": cpu, "memory": memory, "pods": "110"});
    fake_nodes_with(cluster, prefix, &names, &json!({}), &resources).await
}

/// Ready nodes `names` for kwok, labelled `e2e=<label>`, with `spec` (taints, say) and
/// `resources` allocatable.
pub async fn fake_nodes_with(
    cluster: &Cluster,
    label: &str,
    names: &[String],
    spec: &serde_json::Value,
    resources: &serde_json::Value,
) -> Result<()> {
    let api: Api<Node> = Api::all(cluster.client.clone());
    futures::stream::iter(names.to_vec())
        .map(|name| {
            let api = api.clone();
            async move {
                let labels: BTreeMap<&str, &str> =
                    [("e2e", label), ("kubernetes.io/hostname", &name)].into();
                let annotations: BTreeMap<&str, &str> = [FAKE_NODE].into();
                cluster
                    .create(&json!({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": name, "labels": labels, "annotations": annotations},
                        "spec": spec}))
                    .await?;
                let status = json!({"status": {"capacity": resources, "allocatable": resources,
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "kwok node"}]}});
                api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
                    .await
                    .with_context(|| format!("status of node {name}"))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<Vec<_>>()
        .await
        .map(|_| ())
}
