//! ARCHITECTURE.md is the map of the repository, so every repository path it names must exist:
//! a path is a backticked word that starts with one of the top-level folders; a `*` in its last
//! part matches any run of characters of a file name there.

use std::path::{Path, PathBuf};

const TOP_LEVEL: [&str; 11] = [
    "engine/",
    "cache/",
    "adapters/",
    "sdk/",
    "tests/",
    "benches/",
    "perf/",
    "deploy/",
    "examples/",
    "scripts/",
    "docs/",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository")
        .to_path_buf()
}

/// The backticked words of `text` that name repository paths.
fn named_paths(text: &str) -> Vec<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| TOP_LEVEL.iter().any(|t| w.starts_with(t)))
        .filter(|w| !w.contains(char::is_whitespace))
        .collect()
}

/// `name` matches `pattern`, where `*` stands for any run of characters.
fn wildcard(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (0..=name.len() - head.len()).any(|i| wildcard(tail, &name[head.len() + i..]))
        }
    }
}

fn exists(root: &Path, path: &str) -> bool {
    if !path.contains('*') {
        return root.join(path).exists();
    }
    let (dir, pattern) = path.rsplit_once('/').unwrap_or(("", path));
    std::fs::read_dir(root.join(dir)).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|e| wildcard(pattern, &e.file_name().to_string_lossy()))
    })
}

#[test]
fn every_path_architecture_md_names_exists() {
    let root = root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let paths = named_paths(&text);
    assert!(paths.len() > 20, "the map names too few paths: {paths:?}");
    let missing: Vec<&str> = paths.into_iter().filter(|p| !exists(&root, p)).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn a_wildcard_matches_any_run_within_a_name() {
    assert!(wildcard("volume_*.rs", "volume_zone.rs"));
    assert!(!wildcard("volume_*.rs", "volumes.rs"));
    assert!(wildcard("a*b*c", "aXbYc"));
    assert!(!wildcard("a*b*c", "aXbY"));
}
