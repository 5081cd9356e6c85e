//! Queues and proportion: two queues of weights 1 and 3 both asking for more than the
//! cluster has; each gets its deserved share, 2 and 6 of 8 CPUs.

use std::time::Duration;

use anyhow::{Result, ensure};

use super::{cleaning, placements};
use crate::cluster::{pod, pod_group, queue, wait_for};
use crate::ctx::{CHART_CONF, Ctx};

const NS: &str = "e2e-proportion";

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "prop", body(ctx)).await
}

async fn bound_by_queue(ctx: &Ctx) -> Result<(usize, usize)> {
    let p = placements(ctx, NS).await?;
    let bound = |prefix: &str| {
        p.iter()
            .filter(|(k, v)| k.starts_with(prefix) && !v.is_empty())
            .count()
    };
    Ok((bound("light-"), bound("heavy-")))
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    c.nodes("prop", 2, "4", "32Gi").await?;
    c.create_all(vec![queue("prop-light", 1), queue("prop-heavy", 3)])
        .await?;
    let mut objects = Vec::new();
    for i in 0..8 {
        objects.push(pod_group(NS, &format!("light-{i}"), "prop-light", 1));
        objects.push(pod(
            NS,
            &format!("light-{i}"),
            &format!("light-{i}"),
            "1",
            "1Gi",
        ));
        objects.push(pod_group(NS, &format!("heavy-{i}"), "prop-heavy", 1));
        objects.push(pod(
            NS,
            &format!("heavy-{i}"),
            &format!("heavy-{i}"),
            "1",
            "1Gi",
        ));
    }
    c.create_all(objects).await?;
    let conf = ctx.write_conf("proportion", CHART_CONF)?;
    let mut s = ctx.scheduler("proportion", &conf, &["--node-selector=e2e:prop"])?;
    wait_for(
        "8 CPUs to be shared out",
        Duration::from_secs(30),
        || async move {
            let (l, h) = bound_by_queue(ctx).await?;
            Ok(l + h == 8)
        },
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (light, heavy) = bound_by_queue(ctx).await?;
    ensure!(
        (light, heavy) == (2, 6),
        "queue weights 1:3 over 8 CPUs gave {light}:{heavy}, want 2:6"
    );
    let q = c
        .get("scheduling.volcano.sh/v1beta1", "Queue", "", "prop-heavy")
        .await?
        .unwrap_or_default();
    ensure!(
        q["status"]["allocated"]["cpu"] == "6",
        "prop-heavy status.allocated: {}",
        q["status"]
    );
    s.check_alive()?;
    s.stop().await
}
