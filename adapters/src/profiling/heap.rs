//! What the allocator can tell about the heap. tephra samples no allocations, so there is no
//! heap profile (no call stacks of live memory); mimalloc, the global allocator, counts the
//! process's memory and prints its statistics, and that is what is served.

use std::ffi::{CStr, c_char, c_void};
use std::fmt::Write;

/// mimalloc's process counters, then its statistics as it prints them (byte sizes in its
/// units: B, KiB, MiB, GiB).
pub fn heap_stats_text() -> String {
    let mut out = String::from(
        "# tephra keeps no heap profile (no allocation sampling); these are the allocator's \
         (mimalloc's) counters.\n",
    );
    let mut v = [0usize; 8];
    let [
        elapsed,
        user,
        system,
        rss,
        peak_rss,
        commit,
        peak_commit,
        faults,
    ] = &mut v;
    // SAFETY: `mi_process_info` writes one integer through each pointer; all eight point to
    // distinct elements of `v`, which outlives the call.
    #[allow(unsafe_code, reason = "mimalloc's counters are read through its C API")]
    unsafe {
        libmimalloc_sys::mi_process_info(
            elapsed,
            user,
            system,
            rss,
            peak_rss,
            commit,
            peak_commit,
            faults,
        );
    }
    let names = [
        "elapsed_ms",
        "user_ms",
        "system_ms",
        "current_rss_bytes",
        "peak_rss_bytes",
        "current_commit_bytes",
        "peak_commit_bytes",
        "page_faults",
    ];
    for (name, value) in names.iter().zip(v) {
        let _ = writeln!(out, "{name} {value}");
    }
    out.push_str("\n# mimalloc statistics\n");
    // SAFETY: `append` only reads the message mimalloc passes and appends it to the `String`
    // that `arg` points to, which lives through the call; mimalloc calls `append` only during
    // this call, on this thread.
    #[allow(unsafe_code, reason = "mimalloc prints through its C API")]
    unsafe {
        libmimalloc_sys::mi_stats_print_out(Some(append), (&raw mut out).cast::<c_void>());
    }
    out
}

/// mimalloc's output callback: appends `msg` to the `String` at `arg`.
#[allow(unsafe_code, reason = "a callback of mimalloc's C API")]
unsafe extern "C" fn append(msg: *const c_char, arg: *mut c_void) {
    if msg.is_null() || arg.is_null() {
        return;
    }
    // SAFETY: mimalloc passes a NUL-terminated message; `arg` is the `String` that
    // `heap_stats_text` passed, borrowed by nothing else during the call.
    let (msg, out) = unsafe { (CStr::from_ptr(msg), &mut *arg.cast::<String>()) };
    out.push_str(&msg.to_string_lossy());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_stats_say_there_is_no_heap_profile_and_give_the_process_rss() {
        let text = heap_stats_text();
        assert!(text.starts_with("# tephra keeps no heap profile"), "{text}");
        let rss: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("current_rss_bytes "))
            .and_then(|v| v.parse().ok())
            .unwrap();
        assert!(rss > 0, "{text}");
        assert!(text.contains("# mimalloc statistics\n"));
    }
}
