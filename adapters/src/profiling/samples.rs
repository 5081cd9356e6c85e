//! Sample tables: the running profiler's counts per call stack, differences of two readings,
//! and symbol names for the stacks.

use std::collections::HashMap;

use pprof::{Frames, ProfilerGuard, Symbol, UnresolvedReport};

use super::ProfileError;

/// Samples per call stack (in `data`), stacks as raw return addresses (cheap to read and
/// compare).
pub type RawStacks = UnresolvedReport;

/// Samples per call stack, with symbol names.
pub type Stacks = HashMap<Frames, isize>;

/// The running profiler's counts so far (they only grow while it runs).
pub fn read(guard: &ProfilerGuard<'_>) -> Result<RawStacks, ProfileError> {
    Ok(guard.report().build_unresolved()?)
}

/// A table without samples.
pub fn empty() -> RawStacks {
    UnresolvedReport {
        data: HashMap::new(),
        timing: Default::default(),
    }
}

/// Adds to `into` the samples taken between readings `before` and `after`.
pub fn add_difference(into: &mut RawStacks, before: &RawStacks, after: RawStacks) {
    for (stack, count) in after.data {
        let new = count - before.data.get(&stack).copied().unwrap_or(0);
        if new > 0 {
            *into.data.entry(stack).or_insert(0) += new;
        }
    }
}

/// Names the stacks' functions (from the binary's symbols and debug information), leaving out
/// the sampler's own frames.
pub fn resolve(raw: RawStacks) -> Stacks {
    let mut out = Stacks::new();
    for (stack, count) in raw.data {
        let mut frames = Frames::from(stack);
        drop_sampler_frames(&mut frames);
        *out.entry(frames).or_insert(0) += count;
    }
    out
}

/// Removes the frames the signal handler runs in (the unwinder's) from the leaf end of a
/// stack, so a profile's hottest functions are the program's.
pub fn drop_sampler_frames(frames: &mut Frames) {
    let sampler = frames
        .frames
        .iter()
        .take_while(|symbols| symbols.iter().any(is_sampler_symbol))
        .count();
    frames.frames.drain(..sampler);
}

/// Whether `symbol` is the sampler's: pprof-rs, the unwinder, the signal trampoline (trait
/// methods start with `<`: `<pprof::backtrace::… as …>::trace`).
fn is_sampler_symbol(symbol: &Symbol) -> bool {
    is_sampler_function(&symbol.name())
}

pub(super) fn is_sampler_function(name: &str) -> bool {
    let name = name.trim_start_matches('<');
    ["backtrace::", "pprof::", "_Unwind_", "__restore_rt"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// Total samples of a table.
pub fn total(stacks: &Stacks) -> isize {
    stacks.values().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sampler_is_known_by_its_functions_trait_methods_included() {
        for sampler in [
            "pprof::profiler::perf_signal_handler",
            "<pprof::backtrace::backtrace_rs::Trace as pprof::backtrace::Trace>::trace",
            "backtrace::backtrace::libunwind::trace",
            "_Unwind_Backtrace",
            "__restore_rt",
        ] {
            assert!(is_sampler_function(sampler), "{sampler}");
        }
        for program in [
            "tephra_engine::actions::allocate::run",
            "<T as core::any::Any>::type_id",
        ] {
            assert!(!is_sampler_function(program), "{program}");
        }
    }
}
