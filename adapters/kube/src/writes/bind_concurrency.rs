//! How many binds are in flight at once, sized from the API server's answers instead of a
//! constant. Volcano starts a goroutine per bind and leaves the pace to client-go's rate
//! limiter and the API server's priority and fairness, which answers 429 when its queues for
//! this client are full. Here each round of binds (a cycle's) tells the next how far to go:
//! a push-back (429, a 5xx, a connection that failed) halves the window; a round that filled
//! its window and came back under the latency bound widens it a step; a round whose median
//! latency passed twice that bound narrows it, as requests were queueing at the server and more
//! in flight would add waiting, not binds.

use std::time::Duration;

/// What one round of binds met.
#[derive(Debug, Clone, Copy, Default)]
pub struct BindRound {
    /// Bind calls made.
    pub sent: usize,
    /// Calls the API server pushed back (429, 5xx) or that found no server.
    pub pushed_back: usize,
    /// The median call's latency.
    pub median: Duration,
}

/// The window of binds in flight.
#[derive(Debug, Clone)]
pub struct BindConcurrency {
    limit: usize,
}

impl Default for BindConcurrency {
    fn default() -> Self {
        BindConcurrency {
            limit: Self::INITIAL,
        }
    }
}

impl BindConcurrency {
    /// The first round's window: enough to reach the binding ceiling of a small API server.
    pub const INITIAL: usize = 64;
    pub const MIN: usize = 4;
    pub const MAX: usize = 512;
    /// A step of growth: a round at most this much wider than the last.
    const STEP: usize = 16;
    /// Under this median latency the server is keeping up.
    const LATENCY_BOUND: Duration = Duration::from_millis(500);

    /// Binds to keep in flight now.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Sizes the next round from how this one went.
    pub fn after(&mut self, round: BindRound) {
        if round.pushed_back > 0 {
            self.limit = (self.limit / 2).max(Self::MIN);
        } else if round.median > 2 * Self::LATENCY_BOUND {
            self.limit = (self.limit - self.limit / 4).max(Self::MIN);
        } else if round.sent >= self.limit && round.median <= Self::LATENCY_BOUND {
            self.limit = (self.limit + Self::STEP).min(Self::MAX);
        }
    }
}

/// True when a bind's error is the API server pushing back (or absent), not a refusal of
/// this bind: too many requests, a server error, or no answer at all.
pub fn is_push_back(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(sent: usize, pushed_back: usize, median_ms: u64) -> BindRound {
        BindRound {
            sent,
            pushed_back,
            median: Duration::from_millis(median_ms),
        }
    }

    #[test]
    fn push_back_halves_the_window_down_to_the_floor() {
        let mut c = BindConcurrency::default();
        c.after(round(1000, 3, 50));
        assert_eq!(c.limit(), BindConcurrency::INITIAL / 2);
        for _ in 0..10 {
            c.after(round(1000, 1, 50));
        }
        assert_eq!(c.limit(), BindConcurrency::MIN);
    }

    #[test]
    fn a_full_fast_round_widens_the_window_up_to_the_cap() {
        let mut c = BindConcurrency::default();
        c.after(round(1000, 0, 50));
        assert_eq!(c.limit(), BindConcurrency::INITIAL + 16);
        for _ in 0..100 {
            c.after(round(10_000, 0, 50));
        }
        assert_eq!(c.limit(), BindConcurrency::MAX);
    }

    #[test]
    fn a_round_smaller_than_the_window_says_nothing_about_it() {
        let mut c = BindConcurrency::default();
        c.after(round(10, 0, 5));
        assert_eq!(c.limit(), BindConcurrency::INITIAL);
    }

    #[test]
    fn queueing_at_the_server_narrows_the_window() {
        let mut c = BindConcurrency::default();
        c.after(round(1000, 0, 1500));
        assert_eq!(c.limit(), 48);
        c.after(round(1000, 0, 700));
        assert_eq!(c.limit(), 48, "between the bounds the window holds");
    }

    #[test]
    fn too_many_requests_and_server_errors_are_push_back_a_refusal_is_not() {
        let api = |code| {
            kube::Error::Api(
                kube::core::Status {
                    code,
                    ..Default::default()
                }
                .boxed(),
            )
        };
        assert!(is_push_back(&api(429)));
        assert!(is_push_back(&api(503)));
        assert!(!is_push_back(&api(409)));
        assert!(!is_push_back(&api(404)));
    }
}
