//! A pod with a node selector lands on the matching node; one whose selector matches no node
//! stays pending with the reason in its PodScheduled condition.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::json;

use super::{cleaning, placements, wait_bound};
use crate::cluster::{pod, pod_group, wait_for};
use crate::ctx::{CHART_CONF, Ctx};

const NS: &str = "e2e-selector";

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "sel", body(ctx)).await
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    for (name, disk) in [("sel-0", "hdd"), ("sel-1", "ssd"), ("sel-2", "hdd")] {
        let labels: BTreeMap<String, String> =
            [("e2e".into(), "sel".into()), ("disk".into(), disk.into())].into();
        c.node(name, &labels, "4", "16Gi").await?;
    }
    let mut objects = Vec::new();
    for (name, disk) in [("ssd", "ssd"), ("nvme", "nvme")] {
        objects.push(pod_group(NS, name, "default", 1));
        let mut p = pod(NS, name, name, "1", "1Gi");
        p["spec"]["nodeSelector"] = json!({"disk": disk});
        objects.push(p);
    }
    c.create_all(objects).await?;
    let conf = ctx.write_conf("selector", CHART_CONF)?;
    let mut s = ctx.scheduler("node-selector", &conf, &["--node-selector=e2e:sel"])?;
    wait_bound(ctx, NS, "ssd", 1, Duration::from_secs(30)).await?;
    let p = placements(ctx, NS).await?;
    ensure!(p["ssd"] == "sel-1", "the ssd pod went to {}", p["ssd"]);
    wait_for(
        "the nvme pod's PodScheduled=False condition",
        Duration::from_secs(15),
        || async move {
            let pods = ctx.cluster.pods(NS).await?;
            Ok(pods.iter().any(|p| {
                p.metadata.name.as_deref() == Some("nvme")
                    && p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_none()
                    && p.status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|cs| {
                            cs.iter().any(|c| {
                                c.type_ == "PodScheduled"
                                    && c.status == "False"
                                    && c.message.as_deref().is_some_and(|m| m.contains("node(s)"))
                            })
                        })
            }))
        },
    )
    .await?;
    s.check_alive()?;
    s.stop().await
}
