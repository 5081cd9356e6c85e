//! ARCHITECTURE.md is the map of the repository, so every repository path it names must exist.
//! A backticked word names a path when it is made of path characters and either starts with an
//! entry of the repository's root (`engine/src/framework/`, `Cargo.toml`) or ends in a file
//! extension (`scheduler.rs`, which then must be written from the root too); a `*` in its last
//! part matches any run of characters of a file name there. Other backticked words with a `/`
//! (`pods/binding`, `queues/status`) are API resources, not paths.

use std::path::{Path, PathBuf};

/// Extensions of the files the map may name.
const EXTENSIONS: [&str; 12] = [
    "rs", "md", "toml", "yaml", "yml", "json", "jsonl", "sh", "go", "py", "js", "css",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository")
        .to_path_buf()
}

/// The names at the repository's root, hidden ones and build output left out.
fn root_entries(root: &Path) -> Vec<String> {
    std::fs::read_dir(root)
        .expect("the repository root")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && n != "target")
        .collect()
}

/// Whether `word` is written like a path: letters, digits and `_ - . / *`, not a flag.
fn path_like(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with(['-', '/', '.'])
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./*".contains(c))
}

/// Whether `word` names a repository path: it starts with a root entry, or ends in a known
/// file extension.
fn names_path(word: &str, root_entries: &[String]) -> bool {
    if !path_like(word) {
        return false;
    }
    let first = word.split('/').next().unwrap_or(word);
    let last = word
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(word);
    let extension = last.rsplit_once('.').map(|(_, e)| e);
    root_entries.iter().any(|e| e == first) || extension.is_some_and(|e| EXTENSIONS.contains(&e))
}

/// The backticked words of `text` that name repository paths.
fn named_paths<'a>(text: &'a str, root_entries: &[String]) -> Vec<&'a str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| names_path(w, root_entries))
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
    let entries = root_entries(&root);
    let paths = named_paths(&text, &entries);
    assert!(paths.len() > 20, "the map names too few paths: {paths:?}");
    let missing: Vec<&str> = paths.into_iter().filter(|p| !exists(&root, p)).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist (paths are written from the \
         repository root): {missing:?}"
    );
}

#[test]
fn a_word_names_a_path_when_it_starts_at_the_root_or_has_a_file_extension() {
    let entries = vec!["engine".to_string(), "Cargo.toml".to_string()];
    assert!(names_path("engine/src/framework/", &entries));
    assert!(names_path("Cargo.toml", &entries));
    assert!(names_path("framework/carryover.rs", &entries));
    assert!(names_path("volume_*.rs", &entries));
    assert!(!names_path("pods/binding", &entries));
    assert!(!names_path("custom.metrics.k8s.io", &entries));
    assert!(!names_path("--kube-api-qps/burst", &entries));
    assert!(!names_path("//!", &entries));
    assert!(!names_path("POST pods/<name>/binding", &entries));
    assert!(!names_path("Snapshot::changed_since", &entries));
}

#[test]
fn a_wildcard_matches_any_run_within_a_name() {
    assert!(wildcard("volume_*.rs", "volume_zone.rs"));
    assert!(!wildcard("volume_*.rs", "volumes.rs"));
    assert!(wildcard("a*b*c", "aXbYc"));
    assert!(!wildcard("a*b*c", "aXbY"));
}
