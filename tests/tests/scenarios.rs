//! tephra's own scenario files under `tests/scenarios` (same format as the conformance cases,
//! for behaviour Volcano's tables do not cover): every one must pass, with the guide's example
//! plugin linked in.

use std::path::Path;

use tephra_adapters::scenario::{find_scenario_files, load_scenario, run_scenario};
use tephra_engine::plugins::builtin_registry;

#[test]
fn every_repository_scenario_passes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let files = find_scenario_files(&[dir]).expect("tests/scenarios is readable");
    assert!(!files.is_empty(), "no scenario files under tests/scenarios");
    let mut registry = builtin_registry();
    myplugin::register(&mut registry);
    let mut failures = Vec::new();
    for path in &files {
        let checks = load_scenario(path).and_then(|s| run_scenario(&s, &registry));
        match checks {
            Ok(checks) => failures.extend(checks.iter().filter(|c| !c.passed).map(|c| {
                format!(
                    "{}: {}: expected {}, actual {}",
                    path.display(),
                    c.key,
                    c.expected,
                    c.actual
                )
            })),
            Err(e) => failures.push(e.to_string()),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures in {} scenarios:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
