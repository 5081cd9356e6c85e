//! `tephra conformance`: runs scenario files, prints each failing case with expected and actual
//! values, and ends with `N passed, M failed`.

use std::io::{self, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use tephra_engine::framework::PluginRegistry;

use crate::scenario::{Check, load_scenario, run_scenario};

/// Counts of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
}

enum Outcome {
    Passed,
    /// The case's name and its checks.
    Failed(String, Vec<Check>),
    /// A one-line error that starts with the file's path.
    Error(String),
}

/// Runs one case file; a panic inside the engine fails the case instead of the whole run.
fn run_file(path: &Path, registry: &PluginRegistry) -> Outcome {
    let scenario = match load_scenario(path) {
        Ok(s) => s,
        Err(e) => return Outcome::Error(e.to_string()),
    };
    match catch_unwind(AssertUnwindSafe(|| run_scenario(&scenario, registry))) {
        Ok(Ok(checks)) if checks.iter().all(|c| c.passed) => Outcome::Passed,
        Ok(Ok(checks)) => Outcome::Failed(scenario.name, checks),
        Ok(Err(e)) => Outcome::Error(e.to_string()),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned());
            Outcome::Error(format!(
                "{}: panicked: {}",
                path.display(),
                msg.unwrap_or_default()
            ))
        }
    }
}

/// Runs `files` and writes failures and the summary lines to `out`.
pub fn run_conformance(
    files: &[PathBuf],
    registry: &PluginRegistry,
    out: &mut dyn Write,
) -> io::Result<Summary> {
    let mut summary = Summary::default();
    for path in files {
        match run_file(path, registry) {
            Outcome::Passed => summary.passed += 1,
            Outcome::Error(message) => {
                summary.failed += 1;
                writeln!(out, "FAIL {message}")?;
            }
            Outcome::Failed(name, checks) => {
                summary.failed += 1;
                writeln!(out, "FAIL {} ({name})", path.display())?;
                for c in checks.iter().filter(|c| !c.passed) {
                    writeln!(
                        out,
                        "  {}:\n    expected {}\n    actual   {}",
                        c.key, c.expected, c.actual
                    )?;
                }
            }
        }
    }
    writeln!(out, "{} passed, {} failed", summary.passed, summary.failed)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_dir::TestDir;

    const PASSING: &str = "name: nothing to do\nschedulerConf: \"actions: allocate\"\nobjects: []\nexpect:\n  binds: {}\n";
    const FAILING: &str = "name: wants a bind\nschedulerConf: \"actions: allocate\"\nobjects: []\nexpect:\n  bindCount: 1\n";

    fn run(dir: &TestDir) -> (Summary, String) {
        let files = crate::scenario::find_scenario_files(&[dir.path().to_path_buf()]).unwrap();
        let mut out = Vec::new();
        let s = run_conformance(&files, &PluginRegistry::new(), &mut out).unwrap();
        (s, String::from_utf8(out).unwrap())
    }

    #[test]
    fn failing_case_shows_expected_and_actual_and_the_summary_is_last() {
        let dir = TestDir::new(&[("a/ok.yaml", PASSING), ("a/bad.yaml", FAILING)]);
        let (s, out) = run(&dir);
        assert_eq!((s.passed, s.failed), (1, 1));
        assert!(
            out.contains("bad.yaml (wants a bind)\n  bindCount:\n    expected 1\n    actual   0\n"),
            "{out}"
        );
        assert_eq!(out.lines().last(), Some("1 passed, 1 failed"));
    }

    #[test]
    fn unreadable_case_is_a_failure_with_its_error() {
        let dir = TestDir::new(&[("broken.yaml", "objects: [\n")]);
        let (s, out) = run(&dir);
        assert_eq!(s.failed, 1);
        assert!(out.contains("broken.yaml: line"), "{out}");
    }
}
