//! Transparent huge pages off for the scheduler's process, unless `TEPHRA_KEEP_HUGE_PAGES` is
//! set.
//!
//! mimalloc asks for huge pages on its arenas, and with them the first touch of each 2 MiB of
//! fresh heap zeroes all 2 MiB inside one page fault. A cycle builds its snapshot, session and
//! decisions in memory it has not touched before, and on a VM whose memory the host backs
//! lazily zeroing whole huge pages dominates a first cycle; so huge pages are off. Where fresh
//! memory is cheap the trade goes the other way, by less: an operator on such machines keeps
//! huge pages with `TEPHRA_KEEP_HUGE_PAGES=1`.

/// The environment variable that keeps transparent huge pages on.
pub const KEEP_HUGE_PAGES: &str = "TEPHRA_KEEP_HUGE_PAGES";

/// Turns transparent huge pages off for this process (Linux; elsewhere nothing to do), unless
/// `KEEP_HUGE_PAGES` is set. A kernel that refuses leaves them as they were: the scheduler works
/// either way.
pub fn disable_transparent_huge_pages() {
    if std::env::var_os(KEEP_HUGE_PAGES).is_some() {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: `prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)` sets one flag on this process's memory
    // descriptor; it reads and writes none of our memory. Measured reason: see the module doc.
    #[allow(unsafe_code, reason = "prctl is a system call")]
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_reports_huge_pages_off_for_the_process_unless_kept() {
        disable_transparent_huge_pages();
        let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
        // Kernels before 5.0 do not report the flag.
        let Some(line) = status.lines().find(|l| l.starts_with("THP_enabled:")) else {
            return;
        };
        let kept = std::env::var_os(KEEP_HUGE_PAGES).is_some();
        let expected = if kept { "1" } else { "0" };
        assert_eq!(line.split_whitespace().nth(1), Some(expected), "{line}");
    }
}
