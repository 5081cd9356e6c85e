//! `/debug/pprof/cycle` hands its request to the scheduler loop here; the loop profiles the
//! phases of its next cycles and answers. With `--enable-pprof` unset there is no mailbox, and
//! with it set a cycle that finds none waiting pays one atomic load.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tephra_adapters::profiling::{
    PHASE_PROFILE_HZ, PhaseProfile, PhaseProfiler, ProfileError, ProfilerClaim,
};
use tokio::sync::oneshot;

/// A request: profile the phases of the next `cycles` cycles.
pub struct CycleProfileRequest {
    pub cycles: usize,
    /// The profiler, claimed by the HTTP handler for this request.
    pub claim: ProfilerClaim,
    pub reply: oneshot::Sender<Result<PhaseProfile, ProfileError>>,
}

/// The mailbox between the HTTP endpoint and the loop: at most one request waits.
#[derive(Default)]
pub struct CycleProfileRequests {
    waiting: AtomicBool,
    request: Mutex<Option<CycleProfileRequest>>,
}

impl CycleProfileRequests {
    /// Leaves `request` for the loop's next cycle. The profiler claim the request holds keeps a
    /// second one out, so none is waiting already.
    pub fn submit(&self, request: CycleProfileRequest) {
        *self.lock() = Some(request);
        self.waiting.store(true, Ordering::Release);
    }

    /// Takes the waiting request back, if no cycle has picked it up yet.
    pub fn withdraw(&self) -> bool {
        let taken = self.lock().take();
        self.waiting.store(false, Ordering::Release);
        taken.is_some()
    }

    /// The waiting request, for a cycle about to start.
    fn take(&self) -> Option<CycleProfileRequest> {
        if !self.waiting.load(Ordering::Acquire) {
            return None;
        }
        self.waiting.store(false, Ordering::Release);
        self.lock().take()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<CycleProfileRequest>> {
        self.request.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A request being served: the profiler runs across the cycles until enough have run.
pub struct ActiveCycleProfile {
    pub profiler: PhaseProfiler,
    cycles: usize,
    reply: oneshot::Sender<Result<PhaseProfile, ProfileError>>,
}

impl ActiveCycleProfile {
    /// Starts serving the waiting request, if there is one (a failure to start the sampler is
    /// the request's answer).
    pub fn pick_up(requests: &CycleProfileRequests) -> Option<ActiveCycleProfile> {
        let request = requests.take()?;
        match PhaseProfiler::start(request.claim, PHASE_PROFILE_HZ) {
            Ok(profiler) => Some(ActiveCycleProfile {
                profiler,
                cycles: request.cycles,
                reply: request.reply,
            }),
            Err(e) => {
                let _ = request.reply.send(Err(e));
                None
            }
        }
    }

    /// After a cycle: the profile, once it holds every requested cycle, goes to the requester
    /// (`None` then); until then the profile goes on.
    pub fn after_cycle(self) -> Option<ActiveCycleProfile> {
        if self.profiler.cycles() < self.cycles {
            return Some(self);
        }
        let _ = self.reply.send(Ok(self.profiler.finish()));
        None
    }
}

/// Serializes this crate's tests that claim the process-wide profiler (`blocking_lock` in a
/// plain test, `lock().await` in an async one).
#[cfg(test)]
pub(crate) static PROFILER_TESTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[cfg(test)]
mod tests {
    use tephra_adapters::profiling::claim_profiler;

    use super::*;

    #[test]
    fn a_request_is_answered_after_its_cycles_and_frees_the_profiler() {
        let _serial = PROFILER_TESTS.blocking_lock();
        let requests = CycleProfileRequests::default();
        assert!(ActiveCycleProfile::pick_up(&requests).is_none());
        let (tx, mut rx) = oneshot::channel();
        requests.submit(CycleProfileRequest {
            cycles: 2,
            claim: claim_profiler("kube test").unwrap(),
            reply: tx,
        });
        let mut active = ActiveCycleProfile::pick_up(&requests);
        assert!(
            !requests.withdraw(),
            "a picked-up request cannot be withdrawn"
        );
        for cycle in 0..2 {
            let a = active.as_mut().expect("still profiling");
            a.profiler.begin_cycle();
            a.profiler.enter("snapshot");
            a.profiler.leave();
            active = active.and_then(ActiveCycleProfile::after_cycle);
            assert_eq!(active.is_some(), cycle == 0);
        }
        let profile = rx.try_recv().unwrap().unwrap();
        assert_eq!(profile.cycles.len(), 2);
        assert!(claim_profiler("after").is_ok());
    }

    #[test]
    fn a_withdrawn_request_is_not_served() {
        let _serial = PROFILER_TESTS.blocking_lock();
        let requests = CycleProfileRequests::default();
        let (tx, _rx) = oneshot::channel();
        requests.submit(CycleProfileRequest {
            cycles: 1,
            claim: claim_profiler("kube test").unwrap(),
            reply: tx,
        });
        assert!(requests.withdraw());
        assert!(ActiveCycleProfile::pick_up(&requests).is_none());
    }
}
