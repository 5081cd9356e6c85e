//! CPU time of this process's threads, from `/proc/self/task/*/schedstat` (nanoseconds on a
//! core). On a busy machine a cycle's wall time includes waiting for a core; its CPU time does
//! not, so the two together tell cost from contention.

/// Nanoseconds this process's live threads have run; `None` where `/proc` does not say.
pub fn process_cpu_ns() -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("schedstat");
        // A thread may end between listing and reading; it no longer counts.
        if let Ok(text) = std::fs::read_to_string(path) {
            total += parse_schedstat(&text)?;
        }
    }
    Some(total)
}

/// The first field of a schedstat line: time spent on the CPU, in nanoseconds.
fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_field_is_the_time_on_cpu() {
        assert_eq!(parse_schedstat("123456 789 10\n"), Some(123_456));
        assert_eq!(parse_schedstat(""), None);
    }

    #[test]
    fn busy_work_shows_up() {
        let Some(before) = process_cpu_ns() else {
            return;
        };
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        assert!(process_cpu_ns().unwrap() > before);
    }
}
