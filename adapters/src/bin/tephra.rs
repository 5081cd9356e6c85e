//! The `tephra` binary: parse the command line, run it with the plugins tephra ships (and, built
//! with `--features example-plugins`, the guide's example linked in).

use std::process::ExitCode;

use clap::Parser;
use tephra_adapters::cli::{Cli, run};

/// mimalloc: the cycle allocates many small short-lived vectors, where it beats the system
/// allocator; benchmarks measure this binary as it ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tephra_adapters::huge_pages::disable_transparent_huge_pages();
    tephra_adapters::freed_memory::keep_freed_memory();
    let cli = Cli::parse();
    #[cfg_attr(
        not(feature = "example-plugins"),
        allow(unused_mut, reason = "only the example plugins add to the registry")
    )]
    let mut registry = tephra_adapters::plugins::registry();
    #[cfg(feature = "example-plugins")]
    myplugin::register(&mut registry);
    // The handles, not their locks: a plugin library or the extender reports a failure on
    // whichever pool thread called it, and would wait forever on a lock held here all run.
    ExitCode::from(run(
        cli,
        &registry,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    ))
}
