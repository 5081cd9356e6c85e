//! `--plugins-dir` end to end: the guide's example and a panicking plugin built as libraries
//! (`cargo build`), copied into a directory, and loaded by the `tephra` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Builds the two plugin libraries once and returns the directory cargo put them in.
fn library_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        // Built with this test's profile, so they land beside it (`cargo test --release` too).
        let profile = if cfg!(debug_assertions) {
            "dev"
        } else {
            "release"
        };
        let status = Command::new(cargo)
            .args([
                "build",
                "-p",
                "myplugin",
                "-p",
                "panicky-plugin",
                "--profile",
                profile,
            ])
            .current_dir(root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "the plugin libraries build");
        // This test runs from <target>/<profile>/deps; the libraries are in <target>/<profile>.
        let exe = std::env::current_exe().expect("the test binary has a path");
        exe.parent()
            .and_then(Path::parent)
            .expect("target/<profile>")
            .to_path_buf()
    })
}

fn library_file(crate_name: &str) -> String {
    format!(
        "{}{crate_name}.{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_EXTENSION
    )
}

/// A fresh directory holding copies of the named libraries.
struct PluginsDir(PathBuf);

impl PluginsDir {
    fn with(name: &str, libraries: &[&str]) -> PluginsDir {
        let dir =
            std::env::temp_dir().join(format!("tephra-plugins-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for lib in libraries {
            let file = library_file(lib);
            std::fs::copy(library_dir().join(&file), dir.join(&file)).expect("copy the library");
        }
        PluginsDir(dir)
    }

    fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for PluginsDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tephra(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tephra"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the tephra binary runs")
}

/// Runs the `tephra` binary with `args` in `dir`, its output kept in files there; `None` when it
/// has not exited after `limit` (it is killed then).
fn tephra_within(dir: &Path, limit: Duration, args: &[&str]) -> Option<(Option<i32>, String)> {
    let err_file = dir.join("stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tephra"))
        .args(args)
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .expect("the tephra binary runs");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some((status.code(), std::fs::read_to_string(&err_file).unwrap()));
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const MYPLUGIN_SCENARIO: &str = "tests/scenarios/myplugin/places-pod-on-the-labelled-node.yaml";

#[test]
fn a_loaded_myplugin_places_the_pod_on_the_labelled_node() {
    let dir = PluginsDir::with("myplugin", &["myplugin"]);
    let o = tephra(&["simulate", MYPLUGIN_SCENARIO, "--plugins-dir", dir.arg()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("ns/job-0 -> labelled"),
        "{}",
        text(&o.stdout)
    );

    let o = tephra(&[
        "conformance",
        "tests/scenarios/myplugin",
        "--plugins-dir",
        dir.arg(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(text(&o.stdout).lines().last(), Some("1 passed, 0 failed"));
}

#[test]
fn without_plugins_dir_myplugin_is_skipped_with_a_warning_or_refused_when_strict() {
    let warning = format!(
        "warning: {MYPLUGIN_SCENARIO}: schedulerConf: unknown plugin \"myplugin\" in tier 1; skipped, the rest of the tiers run\n"
    );
    let o = tephra(&["simulate", MYPLUGIN_SCENARIO]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), warning);
    let o = tephra(&["simulate", MYPLUGIN_SCENARIO, "--strict-config"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "tephra: {MYPLUGIN_SCENARIO}: schedulerConf: unknown plugin \"myplugin\" in tier 1\n"
        )
    );
    let o = tephra(&["conformance", "tests/scenarios/myplugin"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "without myplugin the pod lands elsewhere"
    );
    assert_eq!(text(&o.stderr), warning);
    let o = tephra(&["conformance", "tests/scenarios/myplugin", "--strict-config"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).contains("unknown plugin \"myplugin\" in tier 1\n"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn a_panicking_plugin_is_disabled_for_the_cycle_and_the_run_goes_on() {
    let dir = PluginsDir::with("panicky", &["panicky_plugin", "myplugin"]);
    let scenario = "tests/plugins/panicky/scenario.yaml";
    let o = tephra(&[
        "simulate",
        scenario,
        "--cycles",
        "2",
        "--plugins-dir",
        dir.arg(),
    ]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("ns/p0 -> n1"), "{out}");
    let library = dir.0.join(library_file("panicky_plugin"));
    let line = format!(
        "tephra: plugin panicky ({}) panicked in predicate: panicky refuses to look at p0; disabled for the rest of this cycle",
        library.display()
    );
    assert_eq!(
        err.matches(&line).count(),
        1,
        "once in the cycle that placed the pod: {err}"
    );
}

#[test]
fn a_plugin_that_panics_on_a_pool_thread_is_reported_and_the_bench_finishes() {
    // `bench` runs its cycles on the scheduling pool, so the plugin is called, and its panic
    // reported, on a thread other than the one that started the run.
    let dir = PluginsDir::with("panicky-bench", &["panicky_plugin"]);
    let run = tephra_within(
        &dir.0,
        Duration::from_secs(120),
        &[
            "bench",
            "--workload",
            "tests/plugins/panicky/manifest.yaml",
            "--conf",
            "tests/plugins/panicky/conf.yaml",
            "--cycles",
            "1",
            "--threads",
            "2",
            "--plugins-dir",
            dir.arg(),
        ],
    );
    let (code, err) = run.expect("the bench finishes");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("panicked in predicate: panicky refuses to look at p0; disabled for the rest of this cycle"),
        "{err}"
    );
}

#[test]
fn a_library_that_does_not_load_is_reported_by_path_and_reason() {
    let dir = PluginsDir::with("broken", &[]);
    let broken = dir.0.join(library_file("broken"));
    std::fs::write(&broken, "not a library").unwrap();
    let o = tephra(&["simulate", MYPLUGIN_SCENARIO, "--plugins-dir", dir.arg()]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "tephra: {}: cannot load plugins: ",
            broken.display()
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
