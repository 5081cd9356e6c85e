//! The `tephra` binary: parse the command line, run it with the built-in plugins.

use std::process::ExitCode;

use clap::Parser;
use tephra_adapters::cli::{Cli, run};

/// mimalloc: the cycle allocates many small short-lived vectors, where it beats the system
/// allocator; benchmarks measure this binary as it ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let registry = tephra_engine::plugins::builtin_registry();
    ExitCode::from(run(
        cli,
        &registry,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    ))
}
