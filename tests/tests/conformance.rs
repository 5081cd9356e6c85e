//! The conformance scenarios in `shared/conformance` (Volcano's own test tables): every case
//! must pass except the kind deferred to a later issue, named here: cases whose actions include
//! preempt, reclaim or shuffle (the eviction issue). The network-topology cases
//! (`allocate/nt-*`), once deferred too, pass and are checked like the rest.

use std::path::{Path, PathBuf};

use tephra_adapters::scenario::{
    Scenario, find_scenario_files, load_scenario, parse_scenario_conf, run_scenario,
};
use tephra_engine::plugins::builtin_registry;

/// Deferred to the eviction issue: cases whose actions include preempt, reclaim or shuffle.
fn is_eviction_case(scenario: &Scenario) -> bool {
    let conf = scenario
        .scheduler_conf
        .as_deref()
        .and_then(|c| parse_scenario_conf(c).ok());
    conf.is_some_and(|c| {
        c.actions
            .iter()
            .any(|a| matches!(a.as_str(), "preempt" | "reclaim" | "shuffle"))
    })
}

/// `shared/conformance` beside the workspace, or `TEPHRA_CONFORMANCE_DIR` when set (a
/// worktree whose parent has no `shared/`).
fn conformance_dir() -> PathBuf {
    match std::env::var_os("TEPHRA_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance"),
    }
}

fn case_files() -> Vec<PathBuf> {
    let dir = conformance_dir();
    assert!(
        dir.is_dir(),
        "no conformance cases at {} (set TEPHRA_CONFORMANCE_DIR)",
        dir.display()
    );
    let files = find_scenario_files(&[dir]).expect("the conformance directory is readable");
    assert!(!files.is_empty(), "no conformance cases found");
    files
}

#[test]
fn every_case_file_loads() {
    let errors: Vec<String> = case_files()
        .iter()
        .filter_map(|p| load_scenario(p).err())
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{} case files do not load:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn every_case_that_is_not_deferred_passes() {
    let registry = builtin_registry();
    let (mut ran, mut failures) = (0, Vec::new());
    for path in case_files() {
        let scenario = match load_scenario(&path) {
            Ok(s) => s,
            Err(e) => {
                failures.push(e.to_string());
                continue;
            }
        };
        if is_eviction_case(&scenario) {
            continue;
        }
        ran += 1;
        match run_scenario(&scenario, &registry) {
            Ok(checks) => failures.extend(checks.iter().filter(|c| !c.passed).map(|c| {
                format!(
                    "{} ({}): {}: expected {}, actual {}",
                    path.display(),
                    scenario.name,
                    c.key,
                    c.expected,
                    c.actual
                )
            })),
            Err(e) => failures.push(e.to_string()),
        }
    }
    assert!(ran > 0, "every case was deferred");
    assert!(
        failures.is_empty(),
        "{} failures in {ran} cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn deferred_kinds_are_recognised() {
    let with_actions = |actions: &str| Scenario {
        path: "case.yaml".into(),
        name: String::new(),
        origin: String::new(),
        scheduler_conf: Some(format!("actions: {actions}\n")),
        objects: Vec::new(),
        skipped: Vec::new(),
        expect: Default::default(),
        notes: String::new(),
    };
    assert!(is_eviction_case(&with_actions(
        "enqueue, allocate, preempt"
    )));
    assert!(is_eviction_case(&with_actions("reclaim")));
    assert!(is_eviction_case(&with_actions("shuffle")));
    assert!(!is_eviction_case(&with_actions(
        "enqueue, allocate, backfill"
    )));
}
