//! `--kube-api-qps` / `--kube-api-burst`: a token bucket every API write waits on, as
//! client-go's rate limiter does for every request of Volcano's client. (Watches are a
//! handful of long-lived requests and do not take tokens.)

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A token bucket: `burst` tokens, refilled at `qps` per second.
#[derive(Debug)]
pub struct RateLimiter {
    qps: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl RateLimiter {
    pub fn new(qps: f32, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        RateLimiter {
            qps: f64::from(qps).max(f64::MIN_POSITIVE),
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    /// Takes a token at `now` and returns how long the caller must wait before using it.
    pub fn reserve(&self, now: Instant) -> Duration {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let elapsed = now.saturating_duration_since(s.1).as_secs_f64();
        s.0 = (s.0 + elapsed * self.qps).min(self.burst) - 1.0;
        s.1 = now.max(s.1);
        if s.0 >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-s.0 / self.qps)
        }
    }

    /// Waits for a token.
    pub async fn acquire(&self) {
        let wait = self.reserve(Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_passes_at_once_then_requests_are_spaced_by_qps() {
        let l = RateLimiter::new(10.0, 3);
        let t = Instant::now();
        for _ in 0..3 {
            assert_eq!(l.reserve(t), Duration::ZERO);
        }
        assert_eq!(l.reserve(t), Duration::from_millis(100));
        assert_eq!(l.reserve(t), Duration::from_millis(200));
    }

    #[test]
    fn tokens_refill_up_to_the_burst() {
        let l = RateLimiter::new(10.0, 2);
        let t = Instant::now();
        l.reserve(t);
        l.reserve(t);
        let later = t + Duration::from_secs(60);
        assert_eq!(l.reserve(later), Duration::ZERO);
        assert_eq!(l.reserve(later), Duration::ZERO);
        assert!(l.reserve(later) > Duration::ZERO);
    }
}
