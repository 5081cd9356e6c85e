//! `tephra conformance`: runs scenario files, prints each failing case with expected and actual
//! values, and ends with `N passed, M failed`.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use tephra_engine::framework::PluginRegistry;

use crate::scenario::{Check, Deferral, load_scenario, run_scenario};

/// Counts of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    /// Cases set aside by `--skip-deferred`, by reason.
    pub deferred: BTreeMap<Deferral, usize>,
}

enum Outcome {
    Passed,
    /// The case's name and its checks.
    Failed(String, Vec<Check>),
    /// A one-line error that starts with the file's path.
    Error(String),
    Deferred(Deferral),
}

/// Runs one case file; a panic inside the engine fails the case instead of the whole run.
fn run_file(path: &Path, skip_deferred: bool, registry: &PluginRegistry) -> Outcome {
    let scenario = match load_scenario(path) {
        Ok(s) => s,
        Err(e) => return Outcome::Error(e.to_string()),
    };
    if let Some(d) = Deferral::of_actions(&scenario).filter(|_| skip_deferred) {
        return Outcome::Deferred(d);
    }
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
    skip_deferred: bool,
    registry: &PluginRegistry,
    out: &mut dyn Write,
) -> io::Result<Summary> {
    let mut summary = Summary::default();
    for path in files {
        match run_file(path, skip_deferred, registry) {
            Outcome::Passed => summary.passed += 1,
            Outcome::Deferred(d) => *summary.deferred.entry(d).or_default() += 1,
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
    if skip_deferred {
        let total: usize = summary.deferred.values().sum();
        let parts: Vec<String> = summary
            .deferred
            .iter()
            .map(|(d, n)| format!("{n} {d}"))
            .collect();
        let detail = if parts.is_empty() {
            String::new()
        } else {
            format!(": {}", parts.join(", "))
        };
        writeln!(out, "{total} skipped as deferred{detail}")?;
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
    const PREEMPT: &str =
        "name: evicts\nschedulerConf: \"actions: preempt\"\nobjects: []\nexpect:\n  bindCount: 1\n";

    fn run(dir: &TestDir, skip: bool) -> (Summary, String) {
        let files = crate::scenario::find_scenario_files(&[dir.path().to_path_buf()]).unwrap();
        let mut out = Vec::new();
        let s = run_conformance(&files, skip, &PluginRegistry::new(), &mut out).unwrap();
        (s, String::from_utf8(out).unwrap())
    }

    #[test]
    fn failing_case_shows_expected_and_actual_and_the_summary_is_last() {
        let dir = TestDir::new(&[("a/ok.yaml", PASSING), ("a/bad.yaml", FAILING)]);
        let (s, out) = run(&dir, false);
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
        let (s, out) = run(&dir, false);
        assert_eq!(s.failed, 1);
        assert!(out.contains("broken.yaml: line"), "{out}");
    }

    #[test]
    fn skip_deferred_counts_deferred_cases_separately() {
        let dir = TestDir::new(&[("preempt/p.yaml", PREEMPT), ("ok.yaml", PASSING)]);
        let (s, out) = run(&dir, true);
        assert_eq!((s.passed, s.failed), (1, 0));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "1 skipped as deferred: 1 eviction (preempt/reclaim/shuffle)",
                "1 passed, 0 failed"
            ]
        );
    }

    #[test]
    fn without_skip_deferred_cases_run() {
        let dir = TestDir::new(&[("preempt/p.yaml", PREEMPT)]);
        let (s, _) = run(&dir, false);
        assert_eq!(s.failed, 1);
    }
}
