//! Transparent huge pages off for the scheduler's process.
//!
//! mimalloc asks for huge pages on its arenas, and with them the first touch of each 2 MiB of
//! fresh heap zeroes all 2 MiB inside one page fault. A cycle builds its snapshot, session and
//! decisions in memory it has not touched before, and on the benchmark machine (a VM) those
//! faults were a third to a half of a first cycle. Measured side by side with `tephra bench`
//! (medians, 2 threads): `large` first cycle 1,383 → 757 ms, `medium-contended` 1,669 →
//! 1,231 ms, steady-state cycles no slower, peak RSS a little lower.

/// Turns transparent huge pages off for this process (Linux; elsewhere nothing to do). A kernel
/// that refuses leaves them as they were: the scheduler works either way, only slower.
pub fn disable_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: `prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)` sets one flag on this process's memory
    // descriptor; it reads and writes none of our memory. Measured reason: see the module doc.
    #[allow(unsafe_code)]
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
