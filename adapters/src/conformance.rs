//! `tephra conformance`: runs scenario files, prints each failing case with expected and actual
//! values, and ends with `N passed, M failed`.

use std::io::{self, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use tephra_engine::framework::{PluginRegistry, Strictness};

use crate::scenario::{Check, load_scenario, run_scenario_under, scenario_conf};

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
/// Parts of its configuration set aside are added to `warnings`.
fn run_file(
    path: &Path,
    registry: &PluginRegistry,
    strictness: Strictness,
    warnings: &mut Vec<String>,
) -> Outcome {
    let loaded = load_scenario(path).and_then(|scenario| {
        let conf = scenario_conf(&scenario, registry, strictness)?;
        Ok((scenario, conf))
    });
    let (scenario, conf) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => return Outcome::Error(e.to_string()),
    };
    warnings.extend(conf.warnings);
    let run = || run_scenario_under(&scenario, conf.config, registry, false);
    match catch_unwind(AssertUnwindSafe(run)) {
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

/// Runs `files`, writes failures and the summary lines to `out`, and a `warning:` line for
/// each configuration part set aside to `err`.
pub fn run_conformance(
    files: &[PathBuf],
    registry: &PluginRegistry,
    strictness: Strictness,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<Summary> {
    let mut summary = Summary::default();
    for path in files {
        let mut warnings = Vec::new();
        let outcome = run_file(path, registry, strictness, &mut warnings);
        for w in &warnings {
            writeln!(err, "warning: {w}")?;
        }
        match outcome {
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

    fn run_with(dir: &TestDir, strictness: Strictness) -> (Summary, String, String) {
        let files = crate::scenario::find_scenario_files(&[dir.path().to_path_buf()]).unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let s = run_conformance(
            &files,
            &PluginRegistry::new(),
            strictness,
            &mut out,
            &mut err,
        )
        .unwrap();
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (s, text(out), text(err))
    }

    fn run(dir: &TestDir) -> (Summary, String) {
        let (s, out, _) = run_with(dir, Strictness::SetAside);
        (s, out)
    }

    const UNKNOWN_PLUGIN: &str = "name: unknown plugin\nschedulerConf: \"actions: allocate\\ntiers:\\n- plugins:\\n  - name: nosuch\\n\"\nobjects: []\nexpect:\n  binds: {}\n";

    #[test]
    fn an_unknown_plugin_is_a_warning_on_err_and_the_case_still_runs() {
        let dir = TestDir::new(&[("u.yaml", UNKNOWN_PLUGIN)]);
        let (s, out, err) = run_with(&dir, Strictness::SetAside);
        assert_eq!((s.passed, s.failed), (1, 0), "{out}");
        assert!(err.starts_with("warning: "), "{err}");
        assert!(
            err.trim_end().ends_with("u.yaml: schedulerConf: unknown plugin \"nosuch\" in tier 0; skipped, the rest of the tiers run"),
            "{err}"
        );
    }

    #[test]
    fn strict_fails_a_case_whose_configuration_names_an_unknown_plugin() {
        let dir = TestDir::new(&[("u.yaml", UNKNOWN_PLUGIN)]);
        let (s, out, err) = run_with(&dir, Strictness::Refuse);
        assert_eq!(s.failed, 1);
        assert!(err.is_empty(), "{err}");
        assert!(
            out.contains("u.yaml: schedulerConf: unknown plugin \"nosuch\" in tier 0\n"),
            "{out}"
        );
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
