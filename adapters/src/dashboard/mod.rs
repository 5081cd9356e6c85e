//! `tephra dashboard`: the benchmark history (`crate::history`) as a static HTML page with
//! charts (per-phase cycle times per commit, thread scaling, peak RSS, placements per second,
//! e2e pods per second against the API server's ceiling, Volcano's first cycle over
//! tephra's), drawn by a vendored Chart.js embedded in the page.

mod charts;
mod page;

use std::path::{Path, PathBuf};

use crate::InputError;
use crate::history::History;
pub use charts::{NO_E2E_RUNS, NO_PEER_RUNS};
pub use page::render;

/// Renders the history in `history_dir` to `out`: the file itself when its name ends in
/// `.html`, else `index.html` in the folder `out` (created if missing). Returns the page's
/// path.
pub fn write_dashboard(history_dir: &Path, out: &Path) -> Result<PathBuf, InputError> {
    let history = History::read(history_dir)?;
    let page = if out.extension().is_some_and(|e| e == "html") {
        out.to_path_buf()
    } else {
        out.join("index.html")
    };
    let origin = || page.display().to_string();
    if let Some(dir) = page.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            InputError::new(dir.display().to_string(), format!("cannot create: {e}"))
        })?;
    }
    std::fs::write(&page, render(&history))
        .map_err(|e| InputError::new(origin(), format!("cannot write: {e}")))?;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{BenchReport, Machine, Provenance, SCHEMA, bench_record};
    use crate::test_dir::TestDir;

    fn provenance(commit: &str, dirty: bool) -> Provenance {
        Provenance {
            schema: SCHEMA,
            commit: commit.into(),
            dirty,
            date: "2026-12-03T12:00:00Z".into(),
            machine: Machine {
                nproc: 2,
                cpu_model: Some("<cpu>".into()),
                memory_bytes: Some(8 << 30),
            },
        }
    }

    /// A run of `threads` threads with two cycles, allocate taking `ms`.
    fn report(threads: u32, ms: f64) -> BenchReport {
        serde_json::from_str(&format!(
            r#"{{"workload":"large","threads":{threads},"cycles":[
              {{"total_ms":{t},"snapshot_ms":1,"open_ms":1,"actions_ms":{{"enqueue":1,"allocate":{ms}}},"close_ms":1,"binds":500}},
              {{"total_ms":5,"snapshot_ms":1,"open_ms":1,"actions_ms":{{"enqueue":1,"allocate":1}},"close_ms":1,"binds":5}}],
              "peak_rss_bytes":1048576,"warm_up_ms":2}}"#,
            t = ms + 4.0
        ))
        .unwrap()
    }

    fn history() -> History {
        let runs = [report(2, 10.0), report(1, 18.0)];
        History {
            bench: vec![
                bench_record(provenance("0123456789ab", false), "head", &runs).unwrap(),
                bench_record(provenance("ba9876543210", true), "head", &runs[..1]).unwrap(),
            ],
            ..History::default()
        }
    }

    #[test]
    fn the_page_holds_a_canvas_per_chart_and_notes_for_what_is_missing() {
        let page = render(&history());
        for id in [
            "cycle-first-large",
            "cycle-steady-large",
            "threads-large",
            "peak-rss",
            "placements-first",
            "placements-steady",
        ] {
            assert!(page.contains(&format!("<canvas id=\"{id}\">")), "{id}");
        }
        assert_eq!(page.matches("<canvas").count(), 6);
        assert!(page.contains(NO_PEER_RUNS) && page.contains(NO_E2E_RUNS));
        assert!(page.contains("(&lt;cpu&gt;)"), "text is escaped");
        assert!(!page.contains("src=\"http"), "nothing is fetched");
        assert!(page.contains("Chart.js v4.6.1"), "Chart.js is inline");
    }

    #[test]
    fn commits_are_the_x_axis_and_dirty_ones_are_starred() {
        let page = render(&history());
        assert!(
            page.contains(r#""labels":["01234567","ba987654*"]"#),
            "{page}"
        );
    }

    #[test]
    fn the_output_is_a_file_or_a_folder_with_index_html() {
        let dir = TestDir::new(&[]);
        let history = dir.join("history");
        std::fs::create_dir_all(&history).unwrap();
        let folder = write_dashboard(&history, &dir.join("site")).unwrap();
        assert_eq!(folder, dir.join("site/index.html"));
        let file = write_dashboard(&history, &dir.join("page.html")).unwrap();
        assert_eq!(file, dir.join("page.html"));
        let empty = std::fs::read_to_string(file).unwrap();
        assert!(empty.contains("no bench runs recorded"), "{empty}");
        assert_eq!(empty.matches("<canvas").count(), 0);
    }
}
