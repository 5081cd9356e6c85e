//! Clocks that outlive a session. Volcano keeps a few as package-level variables (the
//! rescheduling plugin's "last run"); tephra keeps them in one object the scheduler loop owns
//! and hands to every session.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::api::Time;

/// Named "last fired" times, starting at the scheduler's start.
#[derive(Debug)]
pub struct Timers {
    started: Time,
    last: Mutex<BTreeMap<String, f64>>,
}

/// A copy with the same last-fired times, taken under the lock; the copy's timers then run on
/// their own (the checking mode's reference session fires these, not the loop's).
impl Clone for Timers {
    fn clone(&self) -> Self {
        Timers {
            started: self.started,
            last: Mutex::new(self.last.lock().unwrap_or_else(|p| p.into_inner()).clone()),
        }
    }
}

impl Default for Timers {
    fn default() -> Self {
        Timers::new(Time(0))
    }
}

impl Timers {
    /// Timers of a scheduler started at `started`.
    pub fn new(started: Time) -> Self {
        Timers {
            started,
            last: Mutex::new(BTreeMap::new()),
        }
    }

    /// True (and restarted) when more than `interval_secs` passed since timer `name` last
    /// fired, or since the start when it never did.
    pub fn fire(&self, name: &str, interval_secs: f64, now: Time) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let prev = last.get(name).copied().unwrap_or(self.started.0 as f64);
        if prev + interval_secs < now.0 as f64 {
            last.insert(name.to_string(), now.0 as f64);
            true
        } else {
            false
        }
    }

    /// True (and restarted) unless timer `name` fired less than `interval_secs` before `now`.
    /// A timer that never fired fires: Volcano keeps such "last" times (tdm's last eviction)
    /// as package variables starting at the zero time, not at the scheduler's start.
    pub fn fire_unless_recent(&self, name: &str, interval_secs: f64, now: Time) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if last
            .get(name)
            .is_some_and(|&prev| prev + interval_secs > now.0 as f64)
        {
            return false;
        }
        last.insert(name.to_string(), now.0 as f64);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_once_per_interval_strictly_after_it() {
        let t = Timers::new(Time(100));
        assert!(
            !t.fire("x", 10.0, Time(110)),
            "exactly one interval is not enough"
        );
        assert!(t.fire("x", 10.0, Time(111)));
        assert!(!t.fire("x", 10.0, Time(115)));
        assert!(t.fire("x", 10.0, Time(122)));
        assert!(t.fire("y", 0.0, Time(101)), "timers are independent");
    }

    #[test]
    fn an_unfired_timer_fires_at_once_and_then_once_per_interval() {
        let t = Timers::new(Time(100));
        assert!(t.fire_unless_recent("x", 60.0, Time(101)), "never fired");
        assert!(!t.fire_unless_recent("x", 60.0, Time(160)));
        assert!(
            t.fire_unless_recent("x", 60.0, Time(161)),
            "a full interval passed"
        );
    }
}
