//! The `tephra` command line. Parsing lives here and the work in `simulate`, `conformance`,
//! `workload` and `bench`, so `main` stays one call.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};
use tephra_engine::framework::{NodeSampling, PluginRegistry, Strictness};

use crate::InputError;
use crate::bench::{BenchOptions, run_bench};
use crate::conformance::run_conformance;
use crate::dashboard::write_dashboard;
use crate::history::{BenchReport, Provenance, append_record, bench_record};
use crate::offline::DEFAULT_SCHEDULER_NAME;
use crate::plugins::load_plugins_dir;
use crate::scenario::find_scenario_files;
use crate::simulate::{SimulateOptions, resolve_conf, simulate, write_json, write_text};
use crate::workload::gang_mixed::scheduler_conf;
use crate::workload::{DEFAULT_SEED, GangMixed, load_workload, named, names, write_manifests};

/// tephra: a drop-in replacement for Volcano's batch scheduler.
#[derive(Debug, Parser)]
#[command(name = "tephra", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Load every tephra plugin library (`*.so` built with tephra-plugin-sdk, see
    /// docs/plugins.md) in DIR, so its plugins can be named in the tiers. Go plugins built for
    /// Volcano are named and refused.
    #[arg(long, global = true, value_name = "DIR")]
    pub plugins_dir: Option<PathBuf>,
    /// Refuse a configuration that names an unknown plugin, a wrongly typed plugin argument or
    /// a `configurations` entry for no action, instead of warning and running the rest as
    /// Volcano does.
    #[arg(long, global = true)]
    pub strict_config: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scheduling cycles offline over scenario files or manifests (merged).
    Simulate(SimulateArgs),
    /// Run conformance scenario files and report failures.
    Conformance(ConformanceArgs),
    /// Generate a benchmark workload as Kubernetes manifests (a JSON stream).
    Gen(GenArgs),
    /// Time scheduling cycles on a benchmark workload, phase by phase.
    Bench(BenchArgs),
    /// Append one record of several `tephra bench --json` runs of a workload to a benchmark
    /// history file (what `scripts/bench-targets` does after its runs).
    BenchHistory(BenchHistoryArgs),
    /// Render the benchmark history as a static HTML page of charts.
    Dashboard(DashboardArgs),
}

/// The family `gen` knows.
const FAMILY: &str = "gang-mixed";

#[derive(Debug, Args)]
pub struct GenArgs {
    /// `gang-mixed` (with --nodes), or a named size: small, medium, large, medium-contended.
    #[arg(value_name = "WORKLOAD")]
    pub workload: String,
    /// Nodes of a `gang-mixed` cluster.
    #[arg(long, value_name = "N")]
    pub nodes: Option<u64>,
    /// Pending pods of a `gang-mixed` cluster (default: as many as nodes).
    #[arg(long, value_name = "P")]
    pub pending: Option<u64>,
    /// Seed of the workload (it drives the churn between benchmark cycles).
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Output file; gzip-compressed when the name ends in `.gz`.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// A named size (small, medium, large, medium-contended), generated in memory, or a
    /// manifest file.
    #[arg(long, value_name = "NAME|FILE")]
    pub workload: String,
    /// Threads of the scheduling pool (default: the machine's cores).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Number of cycles; cycle 1 sees every pending pod, later ones apply the churn first.
    #[arg(long, value_name = "C", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub cycles: u32,
    /// Print one JSON document on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write every cycle's decisions, sorted, to FILE (for byte-for-byte comparison).
    #[arg(long, value_name = "FILE")]
    pub decisions: Option<PathBuf>,
    /// Scheduler configuration file (default: the workload family's, Volcano's chart default).
    #[arg(long, value_name = "CONF")]
    pub conf: Option<PathBuf>,
    /// Seed of the churn between cycles.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Run the engine's plain path, without equivalence-class caches (the reference).
    #[arg(long)]
    pub no_class_caches: bool,
    /// Start cycle 1 cold: skip the warm-up `vc-scheduler` does once its initial lists are in
    /// (node tables, job and task rows, one session without actions), so cycle 1 builds them
    /// in fresh memory.
    #[arg(long)]
    pub cold: bool,
    /// Checking mode: run every cycle again from scratch (no carried or patched value, class
    /// caches off, jobs and tasks numbered in a shuffled order) and fail on any difference in
    /// the decisions. Slow: for testing.
    #[arg(long)]
    pub check: bool,
    /// Profile the cycles in-process and write one SVG flamegraph per phase into DIR
    /// (snapshot.svg, open.svg, one per action, close.svg), each over all the cycles.
    #[arg(long, value_name = "DIR")]
    pub flamegraph: Option<PathBuf>,
    /// Sample nodes as Volcano's `--percentage-nodes-to-find` does (<= 0: adaptive, Volcano's
    /// default; its minimums keep their defaults). Without it every feasible node is
    /// considered, as tephra's vc-scheduler does unless a sampling flag is given.
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    pub percentage_nodes_to_find: Option<i32>,
}

#[derive(Debug, Args)]
pub struct BenchHistoryArgs {
    /// The history file the record is appended to (JSON Lines, created if missing).
    #[arg(long, value_name = "FILE")]
    pub history: PathBuf,
    /// `head` for this checkout's build, `base` for another one it is compared with.
    #[arg(long, value_name = "NAME", default_value = "head")]
    pub variant: String,
    /// The commit of the build measured (default: this checkout's, read with git, with
    /// whether it has uncommitted changes).
    #[arg(long, value_name = "COMMIT")]
    pub commit: Option<String>,
    /// With `--commit`: the build had uncommitted changes.
    #[arg(long, requires = "commit")]
    pub dirty: bool,
    /// Outputs of `tephra bench --json`, all of one workload; the runs with the most threads
    /// give the cycle figures, every thread count the thread scaling.
    #[arg(required = true, value_name = "RUN.json")]
    pub runs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// The history folder (`bench.jsonl`, `e2e.jsonl`, `peer.jsonl`; a missing file has no
    /// records).
    #[arg(long, value_name = "DIR", default_value = "perf/history")]
    pub history: PathBuf,
    /// Where the page goes: a file when the name ends in `.html`, else a folder, in which
    /// `index.html` is written.
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    pub out: PathBuf,
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
    /// Schedule the pending pods whose spec.schedulerName is NAME (repeatable), as vc-scheduler's
    /// flag does; other schedulers' pending pods are left out with a note. A pod without a
    /// schedulerName is scheduled.
    #[arg(long = "scheduler-name", value_name = "NAME", default_value = DEFAULT_SCHEDULER_NAME)]
    pub scheduler_name: Vec<String>,
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
    let strictness = if cli.strict_config {
        Strictness::Refuse
    } else {
        Strictness::SetAside
    };
    let result = with_plugins_dir(registry, cli.plugins_dir.as_deref()).and_then(|registry| {
        match cli.command {
            Command::Simulate(a) => run_simulate(a, &registry, strictness, out, err),
            Command::Conformance(a) => run_conformance_command(a, &registry, strictness, out, err),
            Command::Gen(a) => run_gen(a, err),
            Command::Bench(a) => run_bench_command(a, &registry, strictness, out, err),
            Command::BenchHistory(a) => run_bench_history(a, err),
            Command::Dashboard(a) => run_dashboard(a, err),
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

/// Writes one `warning:` line per configuration part set aside.
fn write_warnings(warnings: &[String], err: &mut dyn Write) -> Result<(), String> {
    for w in warnings {
        writeln!(err, "warning: {w}").map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn run_simulate(
    a: SimulateArgs,
    registry: &PluginRegistry,
    strictness: Strictness,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, String> {
    let options = SimulateOptions {
        files: a.files,
        conf: a.conf,
        cycles: a.cycles,
        strictness,
        scheduler_names: a.scheduler_name,
    };
    let sim = simulate(&options, registry).map_err(|e| e.to_string())?;
    write_warnings(&sim.warnings, err)?;
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
    strictness: Strictness,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, String> {
    let files = find_scenario_files(&a.paths).map_err(|e| e.to_string())?;
    let summary = run_conformance(&files, registry, strictness, out, err)
        .map_err(|e| format!("cannot write output: {e}"))?;
    Ok(u8::from(summary.failed > 0))
}

/// The cluster `gen` is asked for: the family with explicit sizes, or a named size.
fn gen_cluster(a: &GenArgs) -> Result<GangMixed, String> {
    if a.workload == FAMILY {
        let nodes = a.nodes.ok_or(format!("{FAMILY} needs --nodes"))?;
        let pending = a.pending.unwrap_or(nodes);
        return Ok(GangMixed {
            nodes,
            pending,
            seed: a.seed,
        });
    }
    if a.nodes.is_some() || a.pending.is_some() {
        return Err(format!(
            "--nodes and --pending apply to {FAMILY}, not to the named size {}",
            a.workload
        ));
    }
    named(&a.workload, a.seed).ok_or(format!(
        "unknown workload {:?} (known: {FAMILY}, {})",
        a.workload,
        names()
    ))
}

fn run_gen(a: GenArgs, err: &mut dyn Write) -> Result<u8, String> {
    let g = gen_cluster(&a)?;
    let c = write_manifests(&g, &a.out).map_err(|e| e.to_string())?;
    writeln!(
        err,
        "wrote {}: {} nodes, {} running pods, {} pending pods in {} jobs",
        a.out.display(),
        c.nodes,
        c.running_pods,
        c.pending_pods,
        c.pending_jobs
    )
    .map_err(|e| e.to_string())?;
    Ok(0)
}

fn bench_options(a: &BenchArgs) -> BenchOptions {
    let threads = a.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    BenchOptions {
        threads,
        cycles: a.cycles,
        record_decisions: a.decisions.is_some(),
        disable_class_caches: a.no_class_caches,
        cold: a.cold,
        node_sampling: a.percentage_nodes_to_find.map(|p| NodeSampling {
            percentage_nodes_to_find: p,
            ..NodeSampling::default()
        }),
        checking: a.check,
        flamegraph: a.flamegraph.clone(),
    }
}

fn run_bench_command(
    a: BenchArgs,
    registry: &PluginRegistry,
    strictness: Strictness,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, String> {
    let conf = match &a.conf {
        Some(path) => {
            let resolved =
                resolve_conf(Some(path), None, registry, strictness).map_err(|e| e.to_string())?;
            write_warnings(&resolved.warnings, err)?;
            resolved.config
        }
        None => scheduler_conf(),
    };
    let options = bench_options(&a);
    let workload = load_workload(&a.workload, a.seed).map_err(|e| e.to_string())?;
    let run = run_bench(workload, conf, registry, &options).map_err(|e| e.to_string())?;
    if let Some(dir) = &a.flamegraph {
        writeln!(
            err,
            "wrote {} flamegraphs to {}",
            run.flamegraphs.len(),
            dir.display()
        )
        .map_err(|e| e.to_string())?;
    }
    if let (Some(path), Some(log)) = (&a.decisions, &run.decisions) {
        std::fs::write(path, log).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    if a.json {
        crate::bench::write_json(&run, out)
    } else {
        crate::bench::write_text(&run, out)
    }
    .map_err(|e| format!("cannot write output: {e}"))?;
    Ok(0)
}

fn run_bench_history(a: BenchHistoryArgs, err: &mut dyn Write) -> Result<u8, String> {
    let reports = a
        .runs
        .iter()
        .map(|path| {
            let origin = || path.display().to_string();
            let text = std::fs::read_to_string(path)
                .map_err(|e| InputError::new(origin(), format!("cannot read: {e}")))?;
            serde_json::from_str::<BenchReport>(&text).map_err(|e| InputError::new(origin(), e))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let mut provenance = Provenance::of_checkout(Path::new(".")).map_err(|e| e.to_string())?;
    if let Some(commit) = a.commit {
        provenance.commit = commit;
        provenance.dirty = a.dirty;
    }
    let record = bench_record(provenance, &a.variant, &reports)?;
    append_record(&a.history, &record).map_err(|e| e.to_string())?;
    writeln!(
        err,
        "appended {} {} ({} runs) to {}",
        record.workload,
        record.variant,
        record.runs,
        a.history.display()
    )
    .map_err(|e| e.to_string())?;
    Ok(0)
}

fn run_dashboard(a: DashboardArgs, err: &mut dyn Write) -> Result<u8, String> {
    let page = write_dashboard(&a.history, &a.out).map_err(|e| e.to_string())?;
    writeln!(err, "wrote {}", page.display()).map_err(|e| e.to_string())?;
    Ok(0)
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

    fn parsed_bench_options(argv: &[&str]) -> BenchOptions {
        let cli = Cli::try_parse_from(
            ["tephra", "bench", "--workload", "small"]
                .iter()
                .chain(argv),
        )
        .unwrap();
        let Command::Bench(a) = cli.command else {
            panic!("not bench")
        };
        bench_options(&a)
    }

    #[test]
    fn bench_samples_nodes_only_when_a_percentage_is_given() {
        assert_eq!(parsed_bench_options(&[]).node_sampling, None);
        assert_eq!(
            parsed_bench_options(&["--percentage-nodes-to-find", "0"]).node_sampling,
            Some(NodeSampling::default())
        );
        let fixed = parsed_bench_options(&["--percentage-nodes-to-find", "50"]).node_sampling;
        assert_eq!(
            fixed,
            Some(NodeSampling {
                percentage_nodes_to_find: 50,
                ..NodeSampling::default()
            })
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

    const BENCH_RUN: &str = r#"{"workload":"small","threads":2,"cycles":[{"total_ms":4,"snapshot_ms":1,"open_ms":1,"actions_ms":{"allocate":1},"close_ms":1,"binds":10}],"peak_rss_bytes":null}"#;

    fn bench_history(runs: &[&str]) -> (u8, String, crate::test_dir::TestDir) {
        let dir = crate::test_dir::TestDir::new(&[("a.json", BENCH_RUN), ("bad.json", "{}")]);
        let history = dir.join("bench.jsonl");
        let mut argv = vec![
            "tephra",
            "bench-history",
            "--history",
            history.to_str().unwrap(),
        ];
        argv.extend(["--commit", "0123456789ab", "--dirty"]);
        let paths: Vec<String> = runs
            .iter()
            .map(|r| dir.join(r).display().to_string())
            .collect();
        argv.extend(paths.iter().map(String::as_str));
        let cli = Cli::try_parse_from(argv).unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let status = run(cli, &PluginRegistry::new(), &mut out, &mut err);
        (status, String::from_utf8(err).unwrap(), dir)
    }

    #[test]
    fn bench_history_appends_one_record_of_the_runs_given() {
        let (status, err, dir) = bench_history(&["a.json", "a.json"]);
        assert_eq!(status, 0, "{err}");
        assert!(err.starts_with("appended small head (2 runs) to "), "{err}");
        let records: Vec<crate::history::BenchRecord> =
            crate::history::read_records(&dir.join("bench.jsonl")).unwrap();
        assert_eq!(records.len(), 1);
        let r = &records[0];
        assert_eq!(
            (r.provenance.commit.as_str(), r.provenance.dirty),
            ("0123456789ab", true)
        );
        assert_eq!(
            (r.runs, r.first_cycle.binds.median, r.peak_rss_bytes),
            (2, 10.0, None)
        );
    }

    #[test]
    fn bench_history_names_a_run_it_cannot_read() {
        let (status, err, dir) = bench_history(&["a.json", "bad.json"]);
        assert_eq!(status, 1);
        let bad = dir.join("bad.json").display().to_string();
        assert!(
            err.starts_with(&format!("tephra: {bad}: missing field")),
            "{err}"
        );
        assert!(!dir.join("bench.jsonl").exists(), "nothing appended");
    }

    fn simulate_with_conf(conf: &str, strict: bool) -> (u8, String) {
        let dir = crate::test_dir::TestDir::new(&[
            ("node.yaml", "kind: Node\nmetadata: {name: n1}\n"),
            ("conf.yaml", conf),
        ]);
        let (node, conf) = (dir.join("node.yaml"), dir.join("conf.yaml"));
        let mut argv = vec!["tephra", "simulate", node.to_str().unwrap()];
        argv.extend(["--conf", conf.to_str().unwrap()]);
        if strict {
            argv.push("--strict-config");
        }
        let cli = Cli::try_parse_from(argv).unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let status = run(cli, &crate::plugins::registry(), &mut out, &mut err);
        (status, String::from_utf8(err).unwrap())
    }

    const UNKNOWN_PLUGIN: &str =
        "actions: allocate\ntiers:\n- plugins:\n  - name: nosuch\n  - name: gang\n";

    #[test]
    fn simulate_warns_of_an_unknown_plugin_on_stderr_and_runs_the_rest() {
        let (status, err) = simulate_with_conf(UNKNOWN_PLUGIN, false);
        assert_eq!(status, 0, "{err}");
        assert!(err.starts_with("warning: "), "{err}");
        assert!(
            err.trim_end().ends_with(
                "conf.yaml: unknown plugin \"nosuch\" in tier 0; skipped, the rest of the tiers run"
            ),
            "{err}"
        );
    }

    #[test]
    fn strict_config_refuses_an_unknown_plugin_with_one_line() {
        let (status, err) = simulate_with_conf(UNKNOWN_PLUGIN, true);
        assert_eq!(status, 1);
        assert!(err.starts_with("tephra: "), "{err}");
        assert!(
            err.trim_end()
                .ends_with("conf.yaml: unknown plugin \"nosuch\" in tier 0"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1);
    }

    #[test]
    fn simulate_warns_of_a_wrongly_typed_argument() {
        let (status, err) = simulate_with_conf(
            "actions: allocate\ntiers:\n- plugins:\n  - name: binpack\n    arguments: {binpack.weight: heavy}\n",
            false,
        );
        assert_eq!(status, 0, "{err}");
        assert!(
            err.contains("plugin binpack: argument binpack.weight: expected an integer (got \"heavy\"); the plugin uses its default for it"),
            "{err}"
        );
    }
}
