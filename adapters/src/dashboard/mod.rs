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
