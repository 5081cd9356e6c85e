//! The `tephra` binary's contract: output shapes, the summary line and exit statuses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tephra(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tephra"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("the tephra binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, files: &[(&str, &str)]) -> Scratch {
        let root = std::env::temp_dir().join(format!("tephra-cli-{name}-{}", std::process::id()));
        for (file, text) in files {
            let p = root.join(file);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Scratch(root)
    }

    fn path(&self, file: &str) -> String {
        self.0.join(file).display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const NO_PLUGINS: &str = "actions: enqueue, allocate\ntiers: []\n";
const ONE_NODE: &str = "kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4'}}\n";
const PASSING: &str = "name: nothing to place\nschedulerConf: \"actions: allocate\"\nobjects: []\nexpect: {binds: {}}\n";
const FAILING: &str = "name: wants a bind\nschedulerConf: \"actions: allocate\"\nobjects: []\nexpect: {bindCount: 1}\n";

#[test]
fn conformance_ends_with_the_summary_and_fails_on_a_failed_case() {
    let dir = Scratch::new(
        "conf-fail",
        &[
            ("cases/a.yaml", PASSING),
            ("cases/b.yaml", FAILING),
            ("cases/README.yaml", "x"),
        ],
    );
    let o = tephra(&["conformance", &dir.path("cases")]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(&format!("FAIL {} (wants a bind)", dir.path("cases/b.yaml"))),
        "{out}"
    );
    assert!(
        out.contains("  bindCount:\n    expected 1\n    actual   0"),
        "{out}"
    );
    assert_eq!(out.lines().last(), Some("1 passed, 1 failed"));
}

#[test]
fn conformance_succeeds_when_every_case_passes() {
    let dir = Scratch::new("conf-pass", &[("a.yaml", PASSING)]);
    let o = tephra(&["conformance", &dir.path("a.yaml")]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["1 passed, 0 failed"]);
}

#[test]
fn simulate_json_has_one_entry_per_cycle() {
    let dir = Scratch::new(
        "json",
        &[("conf.yaml", NO_PLUGINS), ("node.yaml", ONE_NODE)],
    );
    let o = tephra(&[
        "simulate",
        &dir.path("node.yaml"),
        "--conf",
        &dir.path("conf.yaml"),
        "--cycles",
        "2",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let empty = r#"{"binds":{},"evictions":[],"pipelined":{},"podGroups":{},"waiting":{},"notScheduled":{}}"#;
    assert_eq!(stdout(&o), format!("{{\"cycles\":[{empty},{empty}]}}\n"));
}

#[test]
fn simulate_warns_of_an_unknown_plugin_and_strict_config_refuses_it_in_one_line() {
    let dir = Scratch::new(
        "bad-conf",
        &[
            (
                "conf.yaml",
                "actions: allocate\ntiers:\n- plugins:\n  - name: gnag\n",
            ),
            ("node.yaml", ONE_NODE),
        ],
    );
    let args: [&str; 4] = [
        "simulate",
        &dir.path("node.yaml"),
        "--conf",
        &dir.path("conf.yaml"),
    ];
    let o = tephra(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "warning: {}: unknown plugin \"gnag\" in tier 0; skipped, the rest of the tiers run\n",
            dir.path("conf.yaml")
        )
    );
    let o = tephra(&[&args[..], &["--strict-config"]].concat());
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "tephra: {}: unknown plugin \"gnag\" in tier 0\n",
            dir.path("conf.yaml")
        )
    );
}

#[test]
fn simulate_refuses_a_bad_object_naming_file_document_and_field() {
    let bad = "kind: Node\nmetadata: {name: n1}\n---\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {priority: high}\n";
    let dir = Scratch::new(
        "bad-object",
        &[("bad.yaml", bad), ("conf.yaml", NO_PLUGINS)],
    );
    let o = tephra(&[
        "simulate",
        &dir.path("bad.yaml"),
        "--conf",
        &dir.path("conf.yaml"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!(
            "tephra: {}: document 1: Pod ns/p: field spec.priority: invalid type",
            dir.path("bad.yaml")
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn bad_flags_are_refused_by_the_parser() {
    assert_eq!(
        tephra(&["simulate", "x.yaml", "--cycles", "0"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        tephra(&["simulate", "x.yaml", "--output", "yaml"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(tephra(&["frobnicate"]).status.code(), Some(2));
}

/// The shipped example with the default configuration: the gang, the nodeSelector pod and the
/// GPU pod are placed; the oversized gang waits, with the reason per node.
#[test]
fn example_cluster_places_what_fits_and_explains_what_does_not() {
    let o = tephra(&["simulate", "examples/cluster.yaml"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.contains("    team-a/db-0 -> node-a\n"), "{out}");
    assert!(out.contains("    team-a/finetune-0 -> gpu-1\n"), "{out}");
    for pod in ["train-0", "train-1", "train-2"] {
        let placed = ["node-a", "node-b"]
            .iter()
            .any(|n| out.contains(&format!("    team-a/{pod} -> {n}\n")));
        assert!(placed, "{pod} not on node-a or node-b:\n{out}");
    }
    assert!(
        !out.contains("team-b/big-0 ->") && !out.contains("node-old\n"),
        "{out}"
    );
    let waiting = out.split("  waiting:\n").nth(1).unwrap_or_default();
    assert!(waiting.starts_with("    team-b/big:"), "{out}");
    for reason in [
        "nodes are available",
        "Insufficient cpu",
        "untolerated taint",
        "unschedulable",
    ] {
        assert!(waiting.contains(reason), "no {reason:?} in:\n{out}");
    }
}

#[test]
fn preemption_example_evicts_in_cycle_one_and_binds_the_preemptor_in_cycle_two() {
    let o = tephra(&["simulate", "examples/preemption.yaml", "--cycles", "2"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (first, second) = out.split_once("cycle 2\n").expect("two cycles");
    assert!(first.contains("  evicted:\n    ns/l2 (preempt)\n"), "{out}");
    assert!(
        first.contains("  pipelined (waiting for resources being released):\n    ns/h -> n1\n"),
        "{out}"
    );
    assert!(first.contains("once resource is released"), "{out}");
    assert!(second.contains("  placed:\n    ns/h -> n1\n"), "{out}");
    assert!(!second.contains("evicted"), "{out}");
}

#[test]
fn gen_writes_a_gzip_stream_that_bench_runs_alike_at_1_and_2_threads() {
    let dir = Scratch::new("gen-bench", &[("README", "scratch")]);
    let file = dir.path("c.json.gz");
    let generated = tephra(&[
        "gen",
        "gang-mixed",
        "--nodes",
        "24",
        "--pending",
        "40",
        "-o",
        &file,
    ]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    assert_eq!(
        stderr(&generated),
        format!("wrote {file}: 24 nodes, 180 running pods, 40 pending pods in 5 jobs\n")
    );
    let run = |workload: &str, threads: &str, decisions: &str| {
        let o = tephra(&[
            "bench",
            "--workload",
            workload,
            "--threads",
            threads,
            "--cycles",
            "2",
            "--json",
            "--decisions",
            decisions,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON document");
        (doc, std::fs::read_to_string(decisions).unwrap())
    };
    let (doc, from_file) = run(&file, "1", &dir.path("a.txt"));
    assert_eq!(doc["workload"], file);
    assert_eq!(doc["threads"], 1);
    let cycles = doc["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 2);
    let actions: Vec<&String> = cycles[0]["actions_ms"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        actions,
        ["allocate", "backfill", "enqueue"],
        "serde_json sorts keys"
    );
    assert!(cycles[0]["binds"].as_u64().unwrap() > 0);
    assert!(doc["peak_rss_bytes"].as_u64().unwrap() > 0);
    assert!(from_file.starts_with("cycle 1\nbind default/job-000000-0 "));
    assert!(from_file.contains("\ncycle 2\n"));
    let (_, two_threads) = run(&file, "2", &dir.path("b.txt"));
    assert_eq!(from_file, two_threads);
}

#[test]
fn bench_flamegraph_writes_one_svg_per_phase() {
    let dir = Scratch::new("bench-flamegraph", &[("README", "scratch")]);
    let workload = dir.path("w.json");
    let generated = tephra(&[
        "gen",
        "gang-mixed",
        "--nodes",
        "24",
        "--pending",
        "40",
        "-o",
        &workload,
    ]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    let svgs = dir.path("svg");
    let o = tephra(&[
        "bench",
        "--workload",
        &workload,
        "--threads",
        "1",
        "--cycles",
        "2",
        "--flamegraph",
        &svgs,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), format!("wrote 6 flamegraphs to {svgs}\n"));
    let mut files: Vec<String> = std::fs::read_dir(&svgs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "allocate.svg",
            "backfill.svg",
            "close.svg",
            "enqueue.svg",
            "open.svg",
            "snapshot.svg"
        ]
    );
    for file in files {
        let svg = std::fs::read_to_string(std::path::Path::new(&svgs).join(&file)).unwrap();
        let phase = file.trim_end_matches(".svg");
        assert!(
            svg.contains("<svg") && svg.trim_end().ends_with("</svg>"),
            "{file}"
        );
        assert!(
            svg.contains(&format!("tephra {phase}: 2 cycles")),
            "{file}: {svg}"
        );
    }
}

#[test]
fn gen_and_bench_refuse_bad_workloads() {
    let o = tephra(&["gen", "gang-mixed", "-o", "/dev/null"]);
    assert_eq!(stderr(&o), "tephra: gang-mixed needs --nodes\n");
    let o = tephra(&["gen", "small", "--nodes", "3", "-o", "/dev/null"]);
    assert_eq!(
        stderr(&o),
        "tephra: --nodes and --pending apply to gang-mixed, not to the named size small\n"
    );
    let o = tephra(&["bench", "--workload", "tiny"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("tephra: tiny: neither a named workload"),
        "{}",
        stderr(&o)
    );
    assert!(
        !tephra(&["bench", "--workload", "small", "--threads", "0"])
            .status
            .success()
    );
}
