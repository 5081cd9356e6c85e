//! `tephra-e2e`: the end-to-end scenarios of vc-scheduler against a real kube-apiserver.
//! Started by `tests/e2e/run`, which provides the server; prints one line per scenario and
//! ends with `N passed, M failed`.

mod api_writes;
mod cluster;
mod ctx;
mod env;
mod failure_logs;
mod fault_proxy;
mod history;
mod kwok;
mod proc;
mod rendered;
mod scenarios;
mod volcano;

use std::process::ExitCode;
use std::time::{Instant, SystemTime};

use anyhow::Result;

use crate::ctx::Ctx;

async fn setup() -> Result<Ctx> {
    let env = env::Env::from_env()?;
    let cluster = cluster::Cluster::connect(&env).await?;
    Ctx::prepare(env, cluster).await
}

#[tokio::main]
async fn main() -> ExitCode {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let ctx = match setup().await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("e2e setup failed: {e:#}");
            println!("0 passed, 1 failed");
            return ExitCode::FAILURE;
        }
    };
    if wanted.iter().any(|w| w == "--setup-only") {
        return ExitCode::SUCCESS;
    }
    println!("e2e against {}", ctx.env.versions);
    let (mut passed, mut failed) = (0, 0);
    let named = |name: &str| wanted.iter().any(|w| w == name);
    let on_request = scenarios::ON_REQUEST.iter().filter(|(name, _)| named(name));
    for (name, scenario) in scenarios::ALL.iter().chain(on_request) {
        if !wanted.is_empty() && !named(name) {
            continue;
        }
        let (start, started_at) = (Instant::now(), SystemTime::now());
        match scenario(&ctx).await {
            Ok(()) => {
                passed += 1;
                println!("ok     {name} ({:.1}s)", start.elapsed().as_secs_f64());
            }
            Err(e) => {
                failed += 1;
                println!(
                    "FAILED {name} ({:.1}s): {e:#}",
                    start.elapsed().as_secs_f64()
                );
                failure_logs::print_tails(&ctx.env.work, started_at);
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
