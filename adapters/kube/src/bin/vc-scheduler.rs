//! `vc-scheduler`: tephra as a drop-in for Volcano's scheduler image (`/vc-scheduler`).

use std::process::ExitCode;

use tephra_kube::flags::Flags;
use tracing_subscriber::EnvFilter;

/// klog's `-v` as a log filter: V0–1 info, V2–3 debug, V4+ trace, for tephra's own crates;
/// libraries log warnings only. kube's client logs every failed request as a bare
/// `failed with error ...`, naming no server; tephra reports those failures itself with the
/// server and the request, so that line is off.
fn log_filter(v: u8) -> EnvFilter {
    let level = match v {
        0 | 1 => "info",
        2 | 3 => "debug",
        _ => "trace",
    };
    EnvFilter::new(format!(
        "warn,kube_client::client::builder=off,tephra_kube={level},tephra_engine={level},tephra_cache={level}"
    ))
}

/// mimalloc, as in the `tephra` binary the benchmarks measure.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tephra_adapters::huge_pages::disable_transparent_huge_pages();
    tephra_adapters::freed_memory::keep_freed_memory();
    let flags = match Flags::parse_from_args(std::env::args_os()) {
        Ok(f) => f,
        Err(e) => e.exit(),
    };
    if flags.version {
        println!("vc-scheduler (tephra) {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    if let Err(e) = flags.validate() {
        eprintln!("vc-scheduler: {e}");
        return ExitCode::FAILURE;
    }
    tracing_subscriber::fmt()
        .with_env_filter(log_filter(flags.verbosity))
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("vc-scheduler: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(tephra_kube::app::run(flags)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}
