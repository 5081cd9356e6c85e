//! Binds before status: while a cycle's binds are on their way, status writes (PodGroups,
//! queues, pod conditions, events) wait, so they do not take the API server's capacity from a
//! bind; they go out between cycles, when the binds are done. Volcano's binds and status
//! updates share one client and its rate limiter; putting binds first is what makes a pod's
//! creation-to-bound time depend on binds alone.
//!
//! The wait is bounded (`STATUS_HOLD_MAX`): under a steady stream of pods whose rounds of
//! binds outlast the schedule period, one round follows another with no gap between them, and
//! a gate that waited for a gap would hold every PodGroup's status until the stream stopped.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// The longest a status write waits for binds: a cycle's statuses reach the API server within
/// a few periods however busy the binds are.
pub const STATUS_HOLD_MAX: Duration = Duration::from_secs(2);

/// Counts the rounds of binds in flight; status writes wait until there are none.
#[derive(Debug, Clone)]
pub struct BindGate {
    rounds: Arc<watch::Sender<usize>>,
}

impl Default for BindGate {
    fn default() -> Self {
        BindGate {
            rounds: Arc::new(watch::channel(0).0),
        }
    }
}

/// A round of binds in flight; the gate opens again when the last round's guard drops.
#[derive(Debug)]
pub struct Binding {
    rounds: Arc<watch::Sender<usize>>,
}

impl Drop for Binding {
    fn drop(&mut self) {
        self.rounds.send_modify(|n| *n -= 1);
    }
}

impl BindGate {
    /// A round of binds starts; status writes wait until its guard drops.
    pub fn binding(&self) -> Binding {
        self.rounds.send_modify(|n| *n += 1);
        Binding {
            rounds: self.rounds.clone(),
        }
    }

    /// Returns when no bind round is in flight, or at `deadline`, whichever comes first.
    pub async fn binds_done_by(&self, deadline: Instant) {
        let mut rx = self.rounds.subscribe();
        // The sender lives in `self`: the wait ends only on a zero count or the deadline.
        let _ = tokio::time::timeout_at(deadline, rx.wait_for(|n| *n == 0)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(3600)
    }

    #[tokio::test]
    async fn status_writes_wait_until_every_bind_round_is_done() {
        let gate = BindGate::default();
        gate.binds_done_by(far()).await;
        let first = gate.binding();
        let second = gate.binding();
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move { gate.binds_done_by(far()).await }
        });
        drop(first);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "one round is still in flight");
        drop(second);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the gate opens when the last round ends")
            .expect("the waiting task");
    }

    #[tokio::test]
    async fn a_status_write_waits_for_binds_no_longer_than_its_deadline() {
        let gate = BindGate::default();
        let _round = gate.binding();
        let hold = Duration::from_millis(50);
        let started = Instant::now();
        tokio::time::timeout(Duration::from_secs(5), gate.binds_done_by(started + hold))
            .await
            .expect("the write goes at its deadline though the round is still in flight");
        assert!(
            started.elapsed() >= hold,
            "it waited for the round until then"
        );
    }
}
