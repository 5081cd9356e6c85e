//! Volume scheduling: a pod with a `WaitForFirstConsumer` claim lands on the node holding the
//! only matching local volume, and vc-scheduler binds that volume to the claim (the volume's
//! `claimRef`), then waits for the PV controller to complete the claim before it binds the pod;
//! a pod whose bound volume is zonal lands in that zone.
//!
//! No controller-manager runs here, so the driver plays the PV controller's part: it marks the
//! volumes Available (or Bound) and, once vc-scheduler wrote the volume's claim reference,
//! completes the claim's side of the binding (`volumeName`, `pv.kubernetes.io/bind-completed`).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::{Value, json};

use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group, wait_for};
use crate::ctx::{CHART_CONF, Ctx};

const NS: &str = "e2e-volume";
const PV: (&str, &str) = ("v1", "PersistentVolume");
const PVC: (&str, &str) = ("v1", "PersistentVolumeClaim");
const SC: (&str, &str) = ("storage.k8s.io/v1", "StorageClass");
const ZONE: &str = "topology.kubernetes.io/zone";

pub async fn run(ctx: &Ctx) -> Result<()> {
    let result = cleaning(ctx, NS, "vb", body(ctx)).await;
    let c = &ctx.cluster;
    for pv in ["vb-local", "vb-zonal"] {
        c.delete(PV.0, PV.1, "", pv).await?;
    }
    for sc in ["e2e-local", "e2e-zonal"] {
        c.delete(SC.0, SC.1, "", sc).await?;
    }
    result
}

fn claim(name: &str, class: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
            "resources": {"requests": {"storage": "1Gi"}}}})
}

fn with_claim(mut p: Value, claim: &str) -> Value {
    p["spec"]["volumes"] = json!([{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]);
    p
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    for (name, zone) in [("vb-0", "a"), ("vb-1", "b"), ("vb-2", "a"), ("vb-3", "b")] {
        let labels: BTreeMap<String, String> =
            [("e2e".into(), "vb".into()), (ZONE.into(), zone.into())].into();
        c.node(name, &labels, "4", "16Gi").await?;
    }
    c.create_all(vec![
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "e2e-local"},
            "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "e2e-zonal"},
            "provisioner": "example.com/e2e", "volumeBindingMode": "Immediate"}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "vb-local"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "storageClassName": "e2e-local", "local": {"path": "/mnt/e2e"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["vb-1"]}]}]}}}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "vb-zonal", "labels": {ZONE: "b"}},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "storageClassName": "e2e-zonal", "hostPath": {"path": "/mnt/zonal"},
                "claimRef": {"namespace": NS, "name": "zonal-data"}}}),
        claim("local-data", "e2e-local"),
        claim("zonal-data", "e2e-zonal"),
    ])
    .await?;
    // The PV controller's part: a new volume becomes Available; the pre-bound pair Bound.
    c.merge(
        PV,
        ("", "vb-local"),
        true,
        &json!({"status": {"phase": "Available"}}),
    )
    .await?;
    c.merge(
        PV,
        ("", "vb-zonal"),
        true,
        &json!({"status": {"phase": "Bound"}}),
    )
    .await?;
    complete_claim(ctx, "zonal-data", "vb-zonal").await?;
    let mut objects = Vec::new();
    for (name, claim) in [("local", "local-data"), ("zonal", "zonal-data")] {
        objects.push(pod_group(NS, name, "default", 1));
        objects.push(with_claim(pod(NS, name, name, "1", "1Gi"), claim));
    }
    c.create_all(objects).await?;
    let conf = ctx.write_conf("volume-binding", CHART_CONF)?;
    let mut s = ctx.scheduler("volume-binding", &conf, &[])?;
    wait_for(
        "vb-local's claimRef to name e2e-volume/local-data",
        Duration::from_secs(30),
        || async move {
            let pv = ctx.cluster.get(PV.0, PV.1, "", "vb-local").await?;
            Ok(pv.is_some_and(|pv| {
                pv["spec"]["claimRef"]["name"] == "local-data"
                    && pv["spec"]["claimRef"]["namespace"] == NS
            }))
        },
    )
    .await?;
    let pv = c.get(PV.0, PV.1, "", "vb-local").await?.unwrap_or_default();
    let claim = c
        .get(PVC.0, PVC.1, NS, "local-data")
        .await?
        .unwrap_or_default();
    ensure!(
        pv["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"],
        "vb-local's claimRef {} is not local-data's uid {}",
        pv["spec"]["claimRef"],
        claim["metadata"]["uid"]
    );
    // Until the claim's side is complete, the pod stays unbound (kube's checkBindings).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let early = placements(ctx, NS).await?;
    ensure!(
        early.get("local").is_none_or(|n| n.is_empty()),
        "local was bound to {:?} before the PV controller completed its claim",
        early.get("local")
    );
    // The PV controller's part again: the claim's side of the binding.
    c.merge(
        PV,
        ("", "vb-local"),
        true,
        &json!({"status": {"phase": "Bound"}}),
    )
    .await?;
    complete_claim(ctx, "local-data", "vb-local").await?;
    wait_bound(ctx, NS, "", 2, Duration::from_secs(30)).await?;
    let p = placements(ctx, NS).await?;
    ensure!(
        p["local"] == "vb-1",
        "the local-volume pod went to {}",
        p["local"]
    );
    ensure!(
        ["vb-1", "vb-3"].contains(&p["zonal"].as_str()),
        "the zonal pod went to {}, outside zone b",
        p["zonal"]
    );
    s.check_alive()?;
    s.stop().await
}

/// Binds the claim to its volume, as the PV controller does once the volume names the claim.
async fn complete_claim(ctx: &Ctx, claim: &str, volume: &str) -> Result<()> {
    let c = &ctx.cluster;
    let bound = json!({"metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"volumeName": volume}});
    c.merge(PVC, (NS, claim), false, &bound).await?;
    c.merge(
        PVC,
        (NS, claim),
        true,
        &json!({"status": {"phase": "Bound"}}),
    )
    .await
}
