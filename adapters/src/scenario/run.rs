//! Running one scenario as the Go harness does: one session, each configured action once in
//! order, then the checks.

use std::sync::Arc;

use tephra_cache::ClusterState;
use tephra_engine::actions;
use tephra_engine::config::{ConfigError, DEFAULT_SCHEDULER_CONF, SchedulerConfig};
use tephra_engine::framework::{PluginRegistry, Session, SessionOptions, Strictness, Timers};

use super::check::compare;
use super::observe::Observed;
use super::{Check, Scenario};
use crate::InputError;
use crate::offline::{DEFAULT_QUEUE, SCHEDULER_START, START_TIME};
use crate::simulate::{ResolvedConf, resolve_conf};

/// A fixed clock (the scenario's `now`, else the runner's start time) and session UID, so runs
/// are reproducible.
fn session_options(scenario: &Scenario) -> SessionOptions {
    SessionOptions {
        now: scenario.now.unwrap_or(START_TIME),
        uid: "tephra-conformance".into(),
        timers: Arc::new(Timers::new(SCHEDULER_START)),
        ..Default::default()
    }
}

/// The scenario's configuration (Volcano's default when it has none), checked against
/// `registry` as `tephra conformance` runs it; errors name the file and `schedulerConf`.
pub fn scenario_conf(
    scenario: &Scenario,
    registry: &PluginRegistry,
    strictness: Strictness,
) -> Result<ResolvedConf, InputError> {
    let text = scenario
        .scheduler_conf
        .as_deref()
        .unwrap_or(DEFAULT_SCHEDULER_CONF);
    let own = (scenario.path.clone(), text.to_string());
    resolve_conf(None, Some(&own), registry, strictness)
}

/// Runs the scenario with plugins from `registry` and returns one check per `expect` key. A
/// part of its configuration Volcano would skip refuses it, so a test suite learns of a case
/// naming a plugin tephra lacks (`tephra conformance` warns and runs, see `scenario_conf`).
pub fn run_scenario(
    scenario: &Scenario,
    registry: &PluginRegistry,
) -> Result<Vec<Check>, InputError> {
    let conf = scenario_conf(scenario, registry, Strictness::Refuse)?;
    run_scenario_under(scenario, conf.config, registry)
}

/// Runs the scenario under `conf` (from `scenario_conf`). Hook-level probes run on the fresh
/// session, before any action; PodGroup phases are read after close.
pub fn run_scenario_under(
    scenario: &Scenario,
    conf: SchedulerConfig,
    registry: &PluginRegistry,
) -> Result<Vec<Check>, InputError> {
    let conf_error = |e: ConfigError| InputError::new(&scenario.path, e).at("schedulerConf");
    let snap = Arc::new(
        ClusterState::from_objects(scenario.objects.iter().cloned()).snapshot(DEFAULT_QUEUE),
    );
    let mut ssn = Session::open(snap, Arc::new(conf), registry, session_options(scenario))
        .map_err(conf_error)?;
    let expect = &scenario.expect;
    let mut seen = Observed::default();
    if expect.node_order_scores.is_some() {
        seen.probe_node_order_scores(&ssn);
    }
    if expect.job_enqueueable.is_some() {
        seen.probe_job_enqueueable(&mut ssn);
    }
    if expect.backfill_candidate_order.is_some() {
        seen.probe_backfill_order(&mut ssn);
    }
    actions::run_all(&mut ssn);
    seen.record_actions(&ssn);
    seen.record_close(&ssn.close());
    Ok(compare(expect, &seen))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tephra_engine::config::{ArgumentError, Arguments};
    use tephra_engine::framework::{Plugin, SessionState, Vote};
    use tephra_engine::model::{JobId, NodeId, TaskId};

    /// Scores node i with i per node and 0.5 per batch; admits a job only once it was enqueued.
    #[derive(Default)]
    struct Probe {
        enqueued: Vec<JobId>,
    }

    impl Plugin for Probe {
        fn name(&self) -> &str {
            "probe"
        }
        fn node_order(
            &self,
            _: &SessionState,
            _: TaskId,
            node: NodeId,
        ) -> Option<Result<f64, String>> {
            Some(Ok(node.0 as f64))
        }
        fn batch_node_order(
            &self,
            _: &SessionState,
            _: TaskId,
            nodes: &[NodeId],
        ) -> Option<Result<Vec<f64>, String>> {
            Some(Ok(vec![0.5; nodes.len()]))
        }
        fn job_enqueued(&mut self, _: &SessionState, job: JobId) {
            self.enqueued.push(job);
        }
        fn job_enqueueable(&self, _: &SessionState, job: JobId) -> Vote {
            if self.enqueued.contains(&job) {
                Vote::Permit
            } else {
                Vote::Reject
            }
        }
    }

    fn registry() -> PluginRegistry {
        fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
            Ok(Box::<Probe>::default())
        }
        let mut r = PluginRegistry::new();
        r.register("probe", build);
        r
    }

    const HOOK_CONF: &str = "actions: ''\ntiers:\n- plugins:\n  - name: probe\n";

    fn scenario(conf: &str, expect: serde_json::Value) -> Scenario {
        let doc = json!({
            "schedulerConf": conf,
            "objects": [
                {"kind": "Queue", "metadata": {"name": "q"}},
                {"kind": "Node", "metadata": {"name": "n0"}},
                {"kind": "Node", "metadata": {"name": "n1"}},
                {"kind": "PodGroup", "metadata": {"name": "pg", "namespace": "ns"},
                 "spec": {"queue": "q", "minMember": 1}, "status": {"phase": "Inqueue"}},
                {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns",
                 "annotations": {"scheduling.k8s.io/group-name": "pg"}}, "status": {"phase": "Pending"}},
            ],
            "expect": expect,
        });
        super::super::parse_scenario(doc, "case.yaml").unwrap()
    }

    fn failures(checks: &[Check]) -> Vec<&Check> {
        checks.iter().filter(|c| !c.passed).collect()
    }

    #[test]
    fn node_order_scores_sum_per_node_and_batch_functions() {
        let expect = json!({"nodeOrderScores": {"ns/p": {"n0": 0.5, "n1": 1.5}}});
        let checks = run_scenario(&scenario(HOOK_CONF, expect), &registry()).unwrap();
        assert!(failures(&checks).is_empty(), "{checks:?}");
    }

    #[test]
    fn job_enqueueable_is_asked_after_job_enqueued() {
        let expect = json!({"jobEnqueueable": {"ns/pg": true}});
        let checks = run_scenario(&scenario(HOOK_CONF, expect), &registry()).unwrap();
        assert!(failures(&checks).is_empty(), "{checks:?}");
    }

    #[test]
    fn phases_and_counts_come_from_the_session() {
        let expect = json!({
            "binds": {}, "bindCount": 0, "evictions": [], "evictionCount": 0,
            "podGroupPhases": {"ns/pg": "Inqueue"},
            "taskStatusCounts": {"ns/pg": {"Pending": 1}},
        });
        let checks = run_scenario(&scenario(HOOK_CONF, expect), &registry()).unwrap();
        assert_eq!(checks.len(), 6);
        assert!(failures(&checks).is_empty(), "{checks:?}");
    }

    #[test]
    fn a_wrong_expectation_reports_expected_and_actual() {
        let expect = json!({"podGroupPhases": {"ns/pg": "Running", "ns/other": "Pending"}});
        let checks = run_scenario(&scenario(HOOK_CONF, expect), &registry()).unwrap();
        assert_eq!(checks[0].expected, "{ns/other: Pending, ns/pg: Running}");
        assert_eq!(
            checks[0].actual,
            "{ns/other: <not in session>, ns/pg: Inqueue}"
        );
    }

    const NOPE: &str = "actions: allocate\ntiers:\n- plugins:\n  - name: nope\n";

    #[test]
    fn an_unknown_plugin_is_set_aside_with_a_warning_and_the_case_runs_without_it() {
        let s = scenario(NOPE, json!({"bindCount": 0}));
        let conf = scenario_conf(&s, &registry(), Strictness::SetAside).unwrap();
        assert_eq!(
            conf.warnings,
            [
                "case.yaml: schedulerConf: unknown plugin \"nope\" in tier 0; skipped, the rest of the tiers run"
            ]
        );
        let checks = run_scenario_under(&s, conf.config, &registry()).unwrap();
        assert!(failures(&checks).is_empty(), "{checks:?}");
    }

    #[test]
    fn run_scenario_refuses_an_unknown_plugin_naming_the_file_and_plugin() {
        let s = scenario(NOPE, json!({}));
        let e = run_scenario(&s, &registry()).unwrap_err().to_string();
        assert_eq!(
            e,
            "case.yaml: schedulerConf: unknown plugin \"nope\" in tier 0"
        );
    }
}
