//! Conformance cases whose behaviour is scheduled for a later issue, so a run can set them
//! aside and count them separately.

use std::fmt;

use super::{Scenario, parse_scenario_conf};

/// Why a case is deferred. (Network-topology cases, `allocate/nt-*`, were deferred too; they
/// pass now and run like any other.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Deferral {
    /// The actions include preempt, reclaim or shuffle.
    Eviction,
}

/// Actions whose cases wait for the eviction work.
const EVICTION_ACTIONS: [&str; 3] = ["preempt", "reclaim", "shuffle"];

impl Deferral {
    /// Deferred by configured actions (an unparsable configuration is not deferred: it fails).
    pub fn of_actions(scenario: &Scenario) -> Option<Deferral> {
        let conf = parse_scenario_conf(scenario.scheduler_conf.as_deref()?).ok()?;
        conf.actions
            .iter()
            .any(|a| EVICTION_ACTIONS.contains(&a.as_str()))
            .then_some(Deferral::Eviction)
    }
}

impl fmt::Display for Deferral {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Deferral::Eviction => "eviction (preempt/reclaim/shuffle)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(conf: &str) -> Scenario {
        let doc = serde_json::json!({"schedulerConf": conf, "objects": []});
        super::super::parse_scenario(doc, "case.yaml").unwrap()
    }

    #[test]
    fn eviction_actions_defer_a_case() {
        assert_eq!(
            Deferral::of_actions(&scenario("actions: enqueue, preempt\n")),
            Some(Deferral::Eviction)
        );
        assert_eq!(
            Deferral::of_actions(&scenario("actions: reclaim\n")),
            Some(Deferral::Eviction)
        );
        assert_eq!(
            Deferral::of_actions(&scenario("actions: shuffle\n")),
            Some(Deferral::Eviction)
        );
        assert_eq!(
            Deferral::of_actions(&scenario("actions: enqueue, allocate\n")),
            None
        );
        assert_eq!(Deferral::of_actions(&scenario("actions: nonsense\n")), None);
    }
}
