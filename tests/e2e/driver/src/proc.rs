//! vc-scheduler processes: started with the chart's arguments plus a scenario's, logging to
//! a file in the work directory, with their metrics and healthz on free loopback ports.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use crate::env::Env;

/// A free port on 127.0.0.1.
pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// The chart's arguments (templates/scheduler.yaml), verbatim, for a configuration file.
pub fn chart_args(conf: &str) -> Vec<String> {
    [
        "--logtostderr",
        &format!("--scheduler-conf={conf}"),
        "--enable-healthz=true",
        "--enable-metrics=true",
        "--leader-elect=false",
        "--kube-api-qps=2000",
        "--kube-api-burst=2000",
        "--schedule-period=1s",
        "--node-worker-threads=20",
        "-v=3",
        "2>&1",
    ]
    .map(str::to_string)
    .to_vec()
}

/// A running vc-scheduler.
pub struct SchedulerProc {
    pub name: String,
    pub log: PathBuf,
    pub metrics_port: u16,
    pub healthz_port: u16,
    child: Child,
}

impl SchedulerProc {
    /// Starts vc-scheduler with `args` (later flags win over the chart's), `kubeconfig` and
    /// free ports.
    pub fn start(
        env: &Env,
        name: &str,
        args: &[String],
        kubeconfig: &Path,
    ) -> Result<SchedulerProc> {
        SchedulerProc::start_program(env, &env.vc_scheduler, name, args, kubeconfig)
    }

    /// Starts `program`, a vc-scheduler (tephra's or Volcano's), as `start` does; its klog
    /// socket, which Volcano's opens, goes in the work directory (`DEBUG_SOCKET_DIR`, set by the
    /// chart's Deployment).
    pub fn start_program(
        env: &Env,
        program: &Path,
        name: &str,
        args: &[String],
        kubeconfig: &Path,
    ) -> Result<SchedulerProc> {
        let metrics_port = free_port()?;
        let healthz_port = free_port()?;
        let log = env.work.join(format!("{name}.log"));
        let out = std::fs::File::create(&log)?;
        let child = Command::new(program)
            .args(args)
            .arg(format!("--kubeconfig={}", kubeconfig.display()))
            .arg(format!("--listen-address=127.0.0.1:{metrics_port}"))
            .arg(format!("--healthz-address=127.0.0.1:{healthz_port}"))
            .arg(format!("--cache-dump-dir={}", env.work.display()))
            .stdout(out.try_clone()?)
            .stderr(out)
            .env("DEBUG_SOCKET_DIR", env.work.join("klog-socks"))
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", program.display()))?;
        Ok(SchedulerProc {
            name: name.to_string(),
            log,
            metrics_port,
            healthz_port,
            child,
        })
    }

    /// The process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Stops the process (SIGKILL: a leader that dies without giving its lease back).
    pub async fn stop(&mut self) -> Result<()> {
        self.child.start_kill().ok();
        self.child.wait().await?;
        Ok(())
    }

    /// Fails when the process has exited.
    pub fn check_alive(&mut self) -> Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!("{} exited ({status}); log: {}", self.name, self.log_tail());
        }
        Ok(())
    }

    /// The last lines of the log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// GETs `path` on the metrics port and returns the body.
    pub async fn http_get(&self, path: &str) -> Result<String> {
        http_get(self.metrics_port, path).await
    }

    /// The value of one metric series (`name{labels}` as printed), 0 when absent.
    pub async fn metric(&self, series: &str) -> Result<f64> {
        let text = self.http_get("/metrics").await?;
        Ok(text
            .lines()
            .find_map(|l| {
                l.strip_prefix(series)
                    .and_then(|rest| rest.strip_prefix(' '))
                    .and_then(|v| v.trim().parse().ok())
            })
            .unwrap_or(0.0))
    }
}

/// A minimal HTTP/1.0 GET on 127.0.0.1; anything but 200 is an error.
pub async fn http_get(port: u16, path: &str) -> Result<String> {
    let (status, body) = http_get_any(port, path, Duration::from_secs(10)).await?;
    if status != 200 {
        bail!(
            "GET {path}: {status} {}",
            String::from_utf8_lossy(&body).lines().next().unwrap_or("")
        );
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// A minimal HTTP/1.0 GET on 127.0.0.1 that waits up to `wait` for the whole answer: its status
/// code and body.
pub async fn http_get_any(port: u16, path: &str, wait: Duration) -> Result<(u16, Vec<u8>)> {
    let mut s = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::net::TcpStream::connect(("127.0.0.1", port)),
    )
    .await??;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
        .await?;
    let mut out = Vec::new();
    tokio::time::timeout(wait, s.read_to_end(&mut out))
        .await
        .with_context(|| format!("GET {path}: no whole answer in {wait:?}"))??;
    let Some(end) = out.windows(4).position(|w| w == b"\r\n\r\n") else {
        bail!("GET {path}: no HTTP header in the answer");
    };
    let head = String::from_utf8_lossy(&out[..end]);
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("GET {path}: bad status line {head:?}"))?;
    Ok((status, out[end + 4..].to_vec()))
}
