//! The conformance scenarios vendored in `tests/conformance` (Volcano's own test tables, copied
//! from the project's shared folder with each file's `origin`): every case
//! must pass — allocate (including network topology), backfill, enqueue, the plugin cases, and
//! the eviction actions preempt, reclaim and shuffle.

use std::path::{Path, PathBuf};

use tephra_adapters::scenario::{find_scenario_files, load_scenario, run_scenario};
use tephra_engine::plugins::builtin_registry;

/// `tests/conformance` in the repository, or `TEPHRA_CONFORMANCE_DIR` when set (a newer set of
/// cases to try).
fn conformance_dir() -> PathBuf {
    match std::env::var_os("TEPHRA_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance"),
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
fn every_case_passes() {
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
    assert!(ran > 0, "no case found");
    assert!(
        failures.is_empty(),
        "{} failures in {ran} cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
