//! Conformance cases whose behaviour is scheduled for a later issue, so a run can set them
//! aside and count them separately.

use std::fmt;
use std::path::Path;

use super::{Scenario, parse_scenario_conf};

/// Why a case is deferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Deferral {
    /// `allocate/nt-*`: network-topology-aware allocation.
    NetworkTopology,
    /// The actions include preempt, reclaim or shuffle.
    Eviction,
}

/// Actions whose cases wait for the eviction work.
const EVICTION_ACTIONS: [&str; 3] = ["preempt", "reclaim", "shuffle"];

impl Deferral {
    /// Deferred by file location: files under `allocate/` named `nt-*`.
    pub fn of_path(path: &Path) -> Option<Deferral> {
        let in_allocate = path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == "allocate");
        let nt = path
            .file_name()
            .and_then(|f| f.to_str())
            .is_some_and(|f| f.starts_with("nt-"));
        (in_allocate && nt).then_some(Deferral::NetworkTopology)
    }

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
            Deferral::NetworkTopology => "network topology (allocate/nt-*)",
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
    fn only_nt_files_under_allocate_are_deferred_by_path() {
        assert_eq!(
            Deferral::of_path(Path::new("c/allocate/nt-01-x.yaml")),
            Some(Deferral::NetworkTopology)
        );
        assert_eq!(
            Deferral::of_path(Path::new("c/allocate/subgroup-02.yaml")),
            None
        );
        assert_eq!(Deferral::of_path(Path::new("c/preempt/nt-01-x.yaml")), None);
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
