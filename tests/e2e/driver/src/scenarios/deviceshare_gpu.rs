//! Shared GPUs: a node advertises two cards through `volcano.sh/gpu-memory` and
//! `volcano.sh/gpu-number` in its status and marks card 0 unhealthy in an annotation; a pod
//! limiting `volcano.sh/gpu-memory` is bound by vc-scheduler with `deviceshare` enabled and
//! carries, on the API server, the annotations the device plugin on the node reads: the card
//! it got (`volcano.sh/gpu-index`, card 1, the healthy one) and when it was chosen
//! (`volcano.sh/predicate-time`). With `deviceshare.NodeLockEnable` the node carries the `gpu`
//! lock vc-scheduler took before the bind.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::json;

use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group};
use crate::ctx::{CHART_CONF, Ctx};

const NS: &str = "e2e-deviceshare";
const NODE: (&str, &str) = ("v1", "Node");
const POD: (&str, &str) = ("v1", "Pod");

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "ds", body(ctx)).await
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    let labels: BTreeMap<String, String> = [("e2e".into(), "ds".into())].into();
    c.node_with(
        "ds-0",
        &labels,
        json!({"cpu": "4", "memory": "16Gi", "pods": "110",
            "volcano.sh/gpu-memory": "16000", "volcano.sh/gpu-number": "2"}),
    )
    .await?;
    c.merge(
        NODE,
        ("", "ds-0"),
        false,
        &json!({"metadata": {"annotations": {"volcano.sh/gpu-unhealthy-ids": "0"}}}),
    )
    .await?;
    let mut p = pod(NS, "trainer", "trainer", "1", "1Gi");
    p["spec"]["containers"][0]["resources"]["limits"] = json!({"volcano.sh/gpu-memory": "3000"});
    c.create_all(vec![pod_group(NS, "trainer", "default", 1), p])
        .await?;
    let conf = format!(
        "{CHART_CONF}  - name: deviceshare\n    arguments:\n      deviceshare.GPUSharingEnable: true\n      deviceshare.NodeLockEnable: true\n"
    );
    let conf = ctx.write_conf("deviceshare-gpu", &conf)?;
    let mut s = ctx.scheduler("deviceshare-gpu", &conf, &[])?;
    wait_bound(ctx, NS, "", 1, Duration::from_secs(30)).await?;
    let at = placements(ctx, NS).await?;
    ensure!(at["trainer"] == "ds-0", "the pod went to {}", at["trainer"]);
    let bound = c
        .get(POD.0, POD.1, NS, "trainer")
        .await?
        .unwrap_or_default();
    let annotations = &bound["metadata"]["annotations"];
    ensure!(
        annotations["volcano.sh/gpu-index"] == "1",
        "the pod's volcano.sh/gpu-index is {}, not the healthy card 1",
        annotations["volcano.sh/gpu-index"]
    );
    let stamp = annotations["volcano.sh/predicate-time"]
        .as_str()
        .unwrap_or_default();
    ensure!(
        stamp.parse::<u64>().is_ok_and(|t| t > 0),
        "the pod's volcano.sh/predicate-time is {stamp:?}"
    );
    let node = c.get(NODE.0, NODE.1, "", "ds-0").await?.unwrap_or_default();
    ensure!(
        node["metadata"]["annotations"]["gpu"].is_string(),
        "node ds-0 carries no gpu lock: {}",
        node["metadata"]["annotations"]
    );
    s.check_alive()?;
    s.stop().await
}
