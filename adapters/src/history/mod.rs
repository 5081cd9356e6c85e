//! The benchmark history kept in the repository under `perf/history/`: one JSON record per
//! line, appended by `scripts/bench-targets` (`bench.jsonl`), the e2e `throughput` scenario
//! (`e2e.jsonl`) and the Volcano peer harness (`peer.jsonl`), and read by `tephra dashboard`.
//! perf/history/README.md documents the format.

mod bench_runs;
mod provenance;
mod record;

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::InputError;
pub use bench_runs::{BenchReport, bench_record};
pub use provenance::utc_now;
pub use record::{
    ActionTime, BenchRecord, CycleFigures, E2eRecord, Machine, PeerMode, PeerRecord, Provenance,
    Quantiles, SCHEMA, Spread, ThreadPoint,
};

/// The file names of a history folder.
pub const BENCH_FILE: &str = "bench.jsonl";
pub const E2E_FILE: &str = "e2e.jsonl";
pub const PEER_FILE: &str = "peer.jsonl";

/// Every record of a history folder; a file missing from it has no records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    pub bench: Vec<BenchRecord>,
    pub e2e: Vec<E2eRecord>,
    pub peer: Vec<PeerRecord>,
}

impl History {
    /// Reads the history in `dir`.
    pub fn read(dir: &Path) -> Result<History, InputError> {
        if !dir.is_dir() {
            return Err(InputError::new(
                dir.display().to_string(),
                "not a history folder",
            ));
        }
        Ok(History {
            bench: read_if_present(&dir.join(BENCH_FILE))?,
            e2e: read_if_present(&dir.join(E2E_FILE))?,
            peer: read_if_present(&dir.join(PEER_FILE))?,
        })
    }
}

/// The records of `path`, none when there is no such file.
fn read_if_present<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, InputError> {
    if path.exists() {
        read_records(path)
    } else {
        Ok(Vec::new())
    }
}

/// The records of a JSON Lines file (blank lines skipped). A line that is not a record of
/// this schema is an error naming the file and the line.
pub fn read_records<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, InputError> {
    let origin = || path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(origin(), format!("cannot read: {e}")))?;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("line {}", i + 1);
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| InputError::new(origin(), e).at(&at))?;
        match value.get("schema").and_then(serde_json::Value::as_u64) {
            Some(v) if v == u64::from(SCHEMA) => {}
            Some(v) => {
                return Err(InputError::new(
                    origin(),
                    format!("schema {v}; this tephra reads schema {SCHEMA}"),
                )
                .at(at));
            }
            None => return Err(InputError::new(origin(), "no `schema` number").at(at)),
        }
        records
            .push(serde_json::from_value(value).map_err(|e| InputError::new(origin(), e).at(at))?);
    }
    Ok(records)
}

/// Appends `record` to the JSON Lines file `path` as one line (creating the file).
pub fn append_record<T: Serialize>(path: &Path, record: &T) -> Result<(), InputError> {
    let origin = || path.display().to_string();
    let mut line = serde_json::to_string(record).map_err(|e| InputError::new(origin(), e))?;
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| InputError::new(origin(), format!("cannot append: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;

    fn spread(ms: f64) -> Spread {
        Spread {
            median: ms,
            min: ms,
            max: ms,
            n: 1,
        }
    }

    fn peer(ms: f64) -> PeerRecord {
        PeerRecord {
            provenance: Provenance {
                schema: SCHEMA,
                commit: "0123456789ab".into(),
                dirty: false,
                date: "2026-12-03T14:00:00Z".into(),
                machine: Machine {
                    nproc: 2,
                    cpu_model: None,
                    memory_bytes: Some(1 << 30),
                },
            },
            volcano_commit: None,
            workload: "medium".into(),
            mode: PeerMode::AllNodes,
            volcano_first_cycle_ms: spread(ms),
            tephra_first_cycle_ms: spread(10.0),
            binds_volcano: 10,
            binds_tephra: 10,
        }
    }

    #[test]
    fn appended_records_read_back_in_order() {
        let dir = TestDir::new(&[]);
        let path = dir.join(PEER_FILE);
        append_record(&path, &peer(100.0)).unwrap();
        append_record(&path, &peer(50.0)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(
            text.starts_with(r#"{"schema":1,"commit":"0123456789ab","#),
            "{text}"
        );
        assert!(text.contains(r#""mode":"all-nodes""#), "{text}");
        let history = History::read(dir.path()).unwrap();
        assert_eq!(history.peer, vec![peer(100.0), peer(50.0)]);
        assert_eq!(history.peer[0].ratio(), 10.0);
        assert!(history.bench.is_empty() && history.e2e.is_empty());
    }

    #[test]
    fn a_malformed_line_is_named_by_file_and_line() {
        let good = serde_json::to_string(&peer(1.0)).unwrap();
        let dir = TestDir::new(&[(
            PEER_FILE,
            &format!("{good}\n\n{{\"schema\":1,\"commit\":3}}\n"),
        )]);
        let e = History::read(dir.path()).unwrap_err().to_string();
        let file = dir.join(PEER_FILE).display().to_string();
        assert!(e.starts_with(&format!("{file}: line 3: ")), "{e}");
        assert!(e.contains("missing field `workload`"), "{e}");
    }

    #[test]
    fn a_line_that_is_not_json_or_of_another_schema_is_refused() {
        let dir = TestDir::new(&[(E2E_FILE, "not json\n")]);
        let e = History::read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("e2e.jsonl: line 1: expected"), "{e}");
        let dir = TestDir::new(&[(BENCH_FILE, "{\"schema\":2}\n")]);
        let e = History::read(dir.path()).unwrap_err().to_string();
        assert!(
            e.ends_with("bench.jsonl: line 1: schema 2; this tephra reads schema 1"),
            "{e}"
        );
        let dir = TestDir::new(&[(BENCH_FILE, "{\"commit\":\"x\"}\n")]);
        let e = History::read(dir.path()).unwrap_err().to_string();
        assert!(e.ends_with("line 1: no `schema` number"), "{e}");
    }

    #[test]
    fn a_missing_folder_is_refused() {
        let e = History::read(Path::new("/nonexistent/history")).unwrap_err();
        assert_eq!(e.to_string(), "/nonexistent/history: not a history folder");
    }
}
