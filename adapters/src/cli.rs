//! The `tephra` command line. Parsing lives here and the work in `simulate` / `conformance`, so
//! `main` stays one call.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};
use tephra_engine::framework::PluginRegistry;

use crate::conformance::run_conformance;
use crate::plugins::load_plugins_dir;
use crate::scenario::find_scenario_files;
use crate::simulate::{SimulateOptions, simulate, write_json, write_text};

/// tephra: a drop-in replacement for Volcano's batch scheduler.
#[derive(Debug, Parser)]
#[command(name = "tephra", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Load every plugin library in DIR; its plugins can be named in the tiers.
    #[arg(long, global = true, value_name = "DIR")]
    pub plugins_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scheduling cycles offline over scenario files or manifests (merged).
    Simulate(SimulateArgs),
    /// Run conformance scenario files and report failures.
    Conformance(ConformanceArgs),
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Scenario files or Kubernetes manifests (YAML, JSON, `kind: List`).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Scheduler configuration file; overrides a scenario's `schedulerConf`.
    #[arg(long, value_name = "CONF")]
    pub conf: Option<PathBuf>,
    /// Number of cycles.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub cycles: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct ConformanceArgs {
    /// Scenario files, or directories searched for `*.yaml`.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// Runs a parsed command with the plugins of `registry` plus those of `--plugins-dir`;
/// returns the process exit status. Errors go to `err` as one line.
pub fn run(cli: Cli, registry: &PluginRegistry, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = with_plugins_dir(registry, cli.plugins_dir.as_deref()).and_then(|registry| {
        match cli.command {
            Command::Simulate(a) => run_simulate(a, &registry, out, err),
            Command::Conformance(a) => run_conformance_command(a, &registry, out),
        }
    });
    match result {
        Ok(status) => status,
        Err(message) => {
            // Nothing more can be reported if stderr itself fails.
            let _ = writeln!(err, "tephra: {message}");
            1
        }
    }
}

/// `registry`, plus the plugins of the libraries in `dir`.
fn with_plugins_dir(
    registry: &PluginRegistry,
    dir: Option<&Path>,
) -> Result<PluginRegistry, String> {
    let mut registry = registry.clone();
    if let Some(dir) = dir {
        load_plugins_dir(dir, &mut registry).map_err(|e| e.to_string())?;
    }
    Ok(registry)
}

fn run_simulate(
    a: SimulateArgs,
    registry: &PluginRegistry,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, String> {
    let options = SimulateOptions {
        files: a.files,
        conf: a.conf,
        cycles: a.cycles,
    };
    let sim = simulate(&options, registry).map_err(|e| e.to_string())?;
    for note in &sim.notes {
        writeln!(err, "note: {note}").map_err(|e| e.to_string())?;
    }
    match a.output {
        Output::Text => write_text(&sim.cycles, out),
        Output::Json => write_json(&sim.cycles, out),
    }
    .map_err(|e| format!("cannot write output: {e}"))?;
    Ok(0)
}

fn run_conformance_command(
    a: ConformanceArgs,
    registry: &PluginRegistry,
    out: &mut dyn Write,
) -> Result<u8, String> {
    let files = find_scenario_files(&a.paths).map_err(|e| e.to_string())?;
    let summary =
        run_conformance(&files, registry, out).map_err(|e| format!("cannot write output: {e}"))?;
    Ok(u8::from(summary.failed > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulate_defaults_to_one_text_cycle() {
        let cli = Cli::try_parse_from(["tephra", "simulate", "a.yaml", "b.yaml"]).unwrap();
        let Command::Simulate(a) = cli.command else {
            panic!("not simulate")
        };
        assert_eq!(
            (a.files.len(), a.cycles, a.output, a.conf),
            (2, 1, Output::Text, None)
        );
    }

    #[test]
    fn simulate_flags_are_read() {
        let cli = Cli::try_parse_from([
            "tephra", "simulate", "a.yaml", "--conf", "c.yaml", "--cycles", "3", "--output", "json",
        ])
        .unwrap();
        let Command::Simulate(a) = cli.command else {
            panic!("not simulate")
        };
        assert_eq!(
            (a.cycles, a.output, a.conf),
            (3, Output::Json, Some(PathBuf::from("c.yaml")))
        );
    }

    #[test]
    fn plugins_dir_is_read_before_or_after_any_command() {
        for command in ["simulate", "conformance"] {
            let after = Cli::try_parse_from(["tephra", command, "a.yaml", "--plugins-dir", "p"]);
            let before = Cli::try_parse_from(["tephra", "--plugins-dir", "p", command, "a.yaml"]);
            for cli in [after, before] {
                assert_eq!(cli.unwrap().plugins_dir, Some(PathBuf::from("p")));
            }
        }
    }

    #[test]
    fn an_unloadable_plugins_dir_is_one_line_and_exit_1() {
        let cli = Cli::try_parse_from([
            "tephra",
            "simulate",
            "a.yaml",
            "--plugins-dir",
            "/nonexistent/p",
        ])
        .unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(run(cli, &PluginRegistry::new(), &mut out, &mut err), 1);
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.starts_with("tephra: /nonexistent/p: cannot load plugins:"),
            "{err}"
        );
    }

    #[test]
    fn bad_flags_are_refused() {
        assert!(
            Cli::try_parse_from(["tephra", "simulate"]).is_err(),
            "needs a file"
        );
        assert!(Cli::try_parse_from(["tephra", "simulate", "a", "--cycles", "0"]).is_err());
        assert!(Cli::try_parse_from(["tephra", "simulate", "a", "--output", "xml"]).is_err());
        assert!(
            Cli::try_parse_from(["tephra", "conformance"]).is_err(),
            "needs a path"
        );
    }

    #[test]
    fn input_errors_are_one_line_and_exit_1() {
        let cli = Cli::try_parse_from(["tephra", "simulate", "/nonexistent/x.yaml"]).unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(run(cli, &PluginRegistry::new(), &mut out, &mut err), 1);
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.starts_with("tephra: /nonexistent/x.yaml: cannot read:"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1);
    }
}
