//! The `tephra` binary: parse the command line, run it with the built-in plugins.

use std::process::ExitCode;

use clap::Parser;
use tephra_adapters::cli::{Cli, run};

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
