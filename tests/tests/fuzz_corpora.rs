//! Replays every file of each fuzz corpus (`fuzz/corpus/<target>/`) through the function its
//! fuzz target calls: a file the fuzzer once found crashing stays fixed, on stable, without
//! `cargo fuzz`.

use std::path::Path;

use tephra_adapters::fuzz_entry::TARGETS;

#[test]
fn every_corpus_file_runs_through_its_target_without_a_panic() {
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for (target, run) in TARGETS {
        let dir = corpora.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("a corpus entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{} has no seeds", dir.display());
        for file in files {
            let data = std::fs::read(&file).expect("a corpus file reads");
            let outcome = std::panic::catch_unwind(|| run(&data));
            assert!(outcome.is_ok(), "{target} panicked on {}", file.display());
        }
    }
}

#[test]
fn every_target_has_a_fuzz_target_file() {
    let targets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/fuzz_targets");
    for (target, _) in TARGETS {
        let file = targets.join(format!("{target}.rs"));
        let body =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            body.contains(&format!("fuzz_entry::{target}(data)")),
            "{} does not call fuzz_entry::{target}",
            file.display()
        );
    }
}
