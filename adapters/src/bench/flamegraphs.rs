//! `tephra bench --flamegraph DIR`: one SVG per cycle phase (`snapshot.svg`, `open.svg`, one
//! per action, `close.svg`), each over every benchmarked cycle, sampled in-process.

use std::path::{Path, PathBuf};

use crate::InputError;
use crate::profiling::PhaseProfile;

/// Draws each phase of `profile` into `dir` (created if missing) as `<phase>.svg`; returns the
/// files written, in phase order.
pub fn write_phase_flamegraphs(
    profile: PhaseProfile,
    dir: &Path,
) -> Result<Vec<PathBuf>, InputError> {
    let origin = || format!("--flamegraph {}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| InputError::new(origin(), e))?;
    if let Some(problem) = &profile.problem {
        return Err(InputError::new(
            origin(),
            format!("samples are missing: {problem}"),
        ));
    }
    let mut written = Vec::new();
    for phase in profile.render() {
        let path = dir.join(format!("{}.svg", phase.phase));
        std::fs::write(&path, phase.svg)
            .map_err(|e| InputError::new(path.display().to_string(), e))?;
        written.push(path);
    }
    Ok(written)
}
