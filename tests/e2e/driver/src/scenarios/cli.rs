//! The command line: `--help`, an unknown flag refused by name, and the chart's argument list
//! accepted verbatim (the process starts and serves /healthz, as `--enable-healthz=true` asks).

use std::time::Duration;

use anyhow::{Result, ensure};

use crate::cluster::wait_for;
use crate::ctx::{CHART_CONF, Ctx};

pub async fn run(ctx: &Ctx) -> Result<()> {
    let help = tokio::process::Command::new(&ctx.env.vc_scheduler)
        .arg("--help")
        .output()
        .await?;
    let text = String::from_utf8_lossy(&help.stdout);
    ensure!(
        help.status.success() && text.contains("--scheduler-conf"),
        "--help failed: {text}"
    );
    let bad = tokio::process::Command::new(&ctx.env.vc_scheduler)
        .arg("--no-such-flag=1")
        .output()
        .await?;
    let err = String::from_utf8_lossy(&bad.stderr);
    ensure!(
        !bad.status.success() && err.contains("--no-such-flag"),
        "unknown flag not named: {err}"
    );
    let conf = ctx.write_conf("cli", CHART_CONF)?;
    let mut s = ctx.scheduler("cli", &conf, &[])?;
    let port = s.healthz_port;
    wait_for(
        "vc-scheduler to serve /healthz with the chart's arguments",
        Duration::from_secs(30),
        || async move {
            Ok(crate::proc::http_get(port, "/healthz")
                .await
                .is_ok_and(|b| b == "ok"))
        },
    )
    .await?;
    s.check_alive()?;
    s.stop().await
}
