//! Memory the process frees stays with it instead of going back to the OS, unless the operator
//! sets mimalloc's own `MIMALLOC_PURGE_DELAY`, which then rules.
//!
//! Every cycle frees its snapshot's leftovers, its session and its decisions, and the next cycle
//! builds as much again. mimalloc hands freed memory back to the OS a second after it is freed
//! (a purge, `mi_option_purge_delay`'s default), so a cycle page-faulted back in, zeroed by the
//! kernel, the tables of a cycle or two before. Kept, it reuses them, which shortens steady
//! cycles and leaves peak RSS about where it was: the process holds what its largest cycle
//! needed, which is what its peak RSS was anyway.

/// mimalloc's `MIMALLOC_PURGE_DELAY`: an operator's value is left alone.
pub const PURGE_DELAY_VARIABLE: &str = "MIMALLOC_PURGE_DELAY";

/// mimalloc's `mi_option_purge_delay` (`mimalloc.h`, enum `mi_option_e`).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Tells mimalloc never to purge freed memory, unless `PURGE_DELAY_VARIABLE` is set. Call it first
/// thing in `main`, before any other thread runs (mimalloc's option setter is not thread safe).
pub fn keep_freed_memory() {
    if std::env::var_os(PURGE_DELAY_VARIABLE).is_some() {
        return;
    }
    // SAFETY: `mi_option_set` stores one integer in mimalloc's option table, read by its purge
    // scheduler; no other thread runs yet. Measured reason: see the module doc.
    #[allow(unsafe_code, reason = "mimalloc options are set through its C API")]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purging_is_off_after_the_call_unless_the_operator_set_a_delay() {
        keep_freed_memory();
        // SAFETY: `mi_option_get` reads one integer of mimalloc's option table.
        #[allow(unsafe_code, reason = "mimalloc options are set through its C API")]
        let delay = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        match std::env::var(PURGE_DELAY_VARIABLE) {
            Err(_) => assert_eq!(delay, -1),
            Ok(v) => assert_eq!(Some(delay as i64), v.trim().parse().ok()),
        }
    }
}
