//! A CPU profile of the whole process over a span of wall time, as `go tool pprof` reads it or
//! as a flamegraph.

use std::time::Duration;

use pprof::protos::{Mapping, Message, Profile};
use pprof::{ProfilerGuardBuilder, Report};

use super::samples::{drop_sampler_frames, total};
use super::{ProfileError, ProfilerClaim, flamegraph_svg};

/// Samples per second of CPU time for a whole-process profile. Go's runtime samples at 100 Hz;
/// a little more gives a scheduler that is idle between cycles enough samples in seconds.
pub const CPU_PROFILE_HZ: i32 = 199;

/// Shared libraries whose code the sampler does not unwind from: unwinding out of the C
/// library or the unwinder itself in a signal handler can deadlock on their locks.
const UNSAFE_TO_UNWIND: [&str; 4] = ["libc", "libgcc", "pthread", "vdso"];

/// Samples the process taken over some time.
pub struct CpuProfile {
    report: Report,
}

/// Samples every thread of the process at `hz` per CPU second for `duration` (the calling thread
/// sleeps meanwhile), under the `claim` that keeps other profiles out.
pub fn record_cpu_profile(
    _claim: &ProfilerClaim,
    duration: Duration,
    hz: i32,
) -> Result<CpuProfile, ProfileError> {
    let guard = ProfilerGuardBuilder::default()
        .frequency(hz)
        .blocklist(&UNSAFE_TO_UNWIND)
        .build()?;
    std::thread::sleep(duration);
    let report = guard
        .report()
        .frames_post_processor(drop_sampler_frames)
        .build()?;
    Ok(CpuProfile { report })
}

impl CpuProfile {
    /// Samples taken.
    pub fn samples(&self) -> isize {
        total(&self.report.data)
    }

    /// The profile in pprof's protobuf format (`profile.proto`), uncompressed; `go tool pprof`
    /// reads it, gzip-compressed or not.
    pub fn to_pprof(&self) -> Result<Vec<u8>, ProfileError> {
        let mut profile = self.report.pprof()?;
        mark_symbolized(&mut profile);
        Ok(profile.encode_to_vec())
    }

    /// The profile as an SVG flamegraph.
    pub fn to_flamegraph(&self, title: &str) -> String {
        flamegraph_svg(title, &self.report.data)
    }
}

/// Says the profile's functions are named already. pprof-rs names every function but leaves
/// its locations without a mapping or an address; `go tool pprof` then makes up a mapping and,
/// given the binary (`go tool pprof vc-scheduler profile`), looks every location up again at
/// address 0, so every sample lands in one wrong function. One mapping for the executable that
/// has functions, file names and lines keeps pprof-rs's names.
fn mark_symbolized(profile: &mut Profile) {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let filename = profile.string_table.len() as i64;
    profile.string_table.push(exe);
    profile.mapping = vec![Mapping {
        id: 1,
        filename,
        has_functions: true,
        has_filenames: true,
        has_line_numbers: true,
        has_inline_frames: true,
        ..Mapping::default()
    }];
    for location in &mut profile.location {
        location.mapping_id = 1;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::super::claim::tests::serial;
    use super::super::claim_profiler;
    use super::super::samples::is_sampler_function;
    use super::*;

    /// Burns CPU in a function whose name the profile must show, until `stop`.
    #[inline(never)]
    fn spin_in_profiled_code(stop: &AtomicBool) -> u64 {
        let mut x = 1u64;
        while !stop.load(Ordering::Relaxed) {
            for i in 0..10_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        x
    }

    #[test]
    fn a_cpu_profile_names_the_busy_function_in_pprof_format_and_svg() {
        let _serial = serial();
        let claim = claim_profiler("cpu test").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let busy = std::thread::spawn({
            let stop = stop.clone();
            move || spin_in_profiled_code(&stop)
        });
        let profile = record_cpu_profile(&claim, Duration::from_millis(800), 499).unwrap();
        stop.store(true, Ordering::Relaxed);
        busy.join().unwrap();
        assert!(profile.samples() >= 5, "{} samples", profile.samples());
        let pb = profile.to_pprof().unwrap();
        let decoded = Profile::decode(pb.as_slice()).unwrap();
        assert!(decoded.mapping.len() == 1 && decoded.mapping[0].has_functions);
        assert!(decoded.location.iter().all(|l| l.mapping_id == 1));
        assert!(
            decoded
                .string_table
                .iter()
                .any(|s| s.contains("spin_in_profiled_code")),
            "the profile lacks the busy function"
        );
        assert!(
            !decoded.string_table.iter().any(|s| is_sampler_function(s)),
            "the sampler's own frames are in the profile"
        );
        let svg = profile.to_flamegraph("cpu");
        assert!(svg.contains("spin_in_profiled_code"));
    }
}
