//! One profile at a time: the sampler is process-wide (one signal handler, one timer), so a
//! second profile started alongside would mix its samples with the first's or fail.

use std::sync::Mutex;

/// What holds the profiler now, if anything.
static HOLDER: Mutex<Option<&'static str>> = Mutex::new(None);

/// The right to run the profiler until this is dropped.
#[derive(Debug)]
pub struct ProfilerClaim {
    _private: (),
}

impl Drop for ProfilerClaim {
    fn drop(&mut self) {
        *HOLDER.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Another profile runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a profile is already being taken ({0}); one runs at a time, try again when it ends")]
pub struct ProfilerBusy(pub &'static str);

/// Claims the profiler for `purpose` (named in the error another claimant gets).
pub fn claim_profiler(purpose: &'static str) -> Result<ProfilerClaim, ProfilerBusy> {
    let mut holder = HOLDER.lock().unwrap_or_else(|e| e.into_inner());
    match *holder {
        Some(other) => Err(ProfilerBusy(other)),
        None => {
            *holder = Some(purpose);
            Ok(ProfilerClaim { _private: () })
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    static SERIAL: Mutex<()> = Mutex::new(());

    /// Serializes the tests of this crate that claim the profiler (they share one process).
    pub fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[test]
    fn a_second_claim_fails_until_the_first_is_dropped() {
        let _serial = serial();
        let first = claim_profiler("a test").unwrap();
        let busy = claim_profiler("another").unwrap_err();
        assert_eq!(busy, ProfilerBusy("a test"));
        assert!(busy.to_string().contains("one runs at a time"), "{busy}");
        drop(first);
        assert!(claim_profiler("another").is_ok());
    }
}
