//! The conformance scenarios vendored from the project's shared folder (Volcano's own test
//! tables, each file with its `origin`): `tests/conformance` (allocate including network
//! topology, backfill, enqueue, the plugin cases, and the eviction actions preempt, reclaim
//! and shuffle) and `tests/conformance-plugins` (nodegroup, resource-strategy-fit,
//! resourcequota, tdm, usage). Every case must pass.

use std::path::{Path, PathBuf};

use tephra_adapters::scenario::{find_scenario_files, load_scenario, run_scenario};
use tephra_engine::plugins::builtin_registry;

/// `tests/<folder>` in the repository, or the directory in `env` when set (a newer set of
/// cases to try, such as held-back ones).
fn cases_dir(env: &str, folder: &str) -> PathBuf {
    match std::env::var_os(env) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(folder),
    }
}

fn case_files(dir: PathBuf) -> Vec<PathBuf> {
    assert!(
        dir.is_dir(),
        "no conformance cases at {} (see the environment variables in tests/tests/conformance.rs)",
        dir.display()
    );
    let files = find_scenario_files(&[dir]).expect("the conformance directory is readable");
    assert!(!files.is_empty(), "no conformance cases found");
    files
}

fn volcano_cases() -> Vec<PathBuf> {
    case_files(cases_dir("TEPHRA_CONFORMANCE_DIR", "conformance"))
}

fn plugin_cases() -> Vec<PathBuf> {
    case_files(cases_dir(
        "TEPHRA_CONFORMANCE_PLUGINS_DIR",
        "conformance-plugins",
    ))
}

/// Every file loads; the errors of those that do not.
fn load_errors(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter_map(|p| load_scenario(p).err())
        .map(|e| e.to_string())
        .collect()
}

/// Runs every case; the number run and a line per failed check.
fn run_all(files: &[PathBuf]) -> (usize, Vec<String>) {
    let registry = builtin_registry();
    let (mut ran, mut failures) = (0, Vec::new());
    for path in files {
        let scenario = match load_scenario(path) {
            Ok(s) => s,
            Err(e) => {
                failures.push(e.to_string());
                continue;
            }
        };
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
    (ran, failures)
}

fn assert_all_pass(files: &[PathBuf]) {
    let (ran, failures) = run_all(files);
    assert!(ran > 0, "no case found");
    assert!(
        failures.is_empty(),
        "{} failures in {ran} cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn assert_all_load(files: &[PathBuf]) {
    let errors = load_errors(files);
    assert!(
        errors.is_empty(),
        "{} case files do not load:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn every_case_file_loads() {
    assert_all_load(&volcano_cases());
}

#[test]
fn every_case_passes() {
    assert_all_pass(&volcano_cases());
}

#[test]
fn every_plugin_case_file_loads() {
    assert_all_load(&plugin_cases());
}

#[test]
fn every_plugin_case_passes() {
    assert_all_pass(&plugin_cases());
}
