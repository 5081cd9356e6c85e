//! Running one scenario as the Go harness does: one session, each configured action once in
//! order, then the checks.

use std::sync::Arc;

use tephra_cache::ClusterState;
use tephra_cache::cycle::{CycleDriver, CycleError, CycleObserver};
use tephra_engine::api::Time;
use tephra_engine::config::{DEFAULT_SCHEDULER_CONF, SchedulerConfig};
use tephra_engine::framework::{PluginRegistry, Session, Strictness};

use super::check::compare;
use super::observe::Observed;
use super::{Check, Scenario};
use crate::InputError;
use crate::offline::{DEFAULT_QUEUE, SCHEDULER_START, START_TIME};
use crate::simulate::{ResolvedConf, resolve_conf};

/// The clock of a case that states no `now`: noon of the offline start day, away from the
/// minute after midnight that the tdm cases' revocable-zone windows are written around.
pub const DEFAULT_NOW: Time = Time(START_TIME.0 + 12 * 3600);

/// A driver with a fixed clock (`now`) and session UID, so runs are reproducible; the scheduler
/// started one period before, as offline runs have it.
fn driver(conf: SchedulerConfig, now: Time, checking: bool) -> CycleDriver {
    CycleDriver::new(Arc::new(conf), DEFAULT_QUEUE)
        .started_at(Time(now.0 - (START_TIME.0 - SCHEDULER_START.0)))
        .checking(checking)
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
/// naming a plugin tephra lacks (`tephra conformance` warns and runs, see `scenario_conf`),
/// and it runs in checking mode.
pub fn run_scenario(
    scenario: &Scenario,
    registry: &PluginRegistry,
) -> Result<Vec<Check>, InputError> {
    let conf = scenario_conf(scenario, registry, Strictness::Refuse)?;
    run_scenario_under(scenario, conf.config, registry, true)
}

/// Whether the Go test called JobEnqueued on a job before asking JobEnqueueable: the README
/// leaves it to the notes, which say so when it did not (the resourcequota cases).
fn job_enqueued_first(notes: &str) -> bool {
    !notes
        .to_ascii_lowercase()
        .contains("without calling jobenqueued")
}

/// Runs the scenario under `conf` (from `scenario_conf`). Hook-level probes run on the fresh
/// session, before any action; PodGroup phases are read after close. In checking mode the
/// cycle is run again from scratch and must decide the same (`CycleDriver::checking`); a
/// difference is an error naming the file.
pub fn run_scenario_under(
    scenario: &Scenario,
    conf: SchedulerConfig,
    registry: &PluginRegistry,
    checking: bool,
) -> Result<Vec<Check>, InputError> {
    let mut state = ClusterState::from_objects(scenario.objects.iter().cloned());
    state.set_sharding(scenario.sharding.clone());
    let mut probes = Probes {
        scenario,
        seen: Observed::default(),
        probed: false,
    };
    let cycle = driver(conf, scenario.now, checking)
        .decide(
            &mut state,
            registry,
            scenario.now,
            "tephra-conformance".into(),
            &mut probes,
        )
        .map_err(|e| match e {
            CycleError::Config(e) => InputError::new(&scenario.path, e).at("schedulerConf"),
            checked => InputError::new(&scenario.path, checked),
        })?;
    let mut seen = probes.seen;
    seen.record_close(&cycle.decisions);
    Ok(compare(&scenario.expect, &seen))
}

/// What the scenario's expectations ask to see of the session: the hook-level probes on the
/// fresh session, then what the actions did. The checking mode's session from scratch is
/// probed too (a probe may change the session, as JobEnqueued does), into a copy left unread.
struct Probes<'a> {
    scenario: &'a Scenario,
    seen: Observed,
    probed: bool,
}

impl CycleObserver for Probes<'_> {
    fn opened(&mut self, ssn: &mut Session) {
        let mut unread = Observed::default();
        let seen = if self.probed {
            &mut unread
        } else {
            &mut self.seen
        };
        self.probed = true;
        let expect = &self.scenario.expect;
        if expect.node_order_scores.is_some() {
            seen.probe_node_order_scores(ssn);
        }
        if expect.predicate_results.is_some() {
            seen.probe_predicate_results(ssn);
        }
        if expect.job_enqueueable.is_some() {
            seen.probe_job_enqueueable(ssn, job_enqueued_first(&self.scenario.notes));
        }
        if expect.victim_task_count.is_some() {
            seen.probe_victim_tasks(ssn);
        }
        if expect.backfill_candidate_order.is_some() {
            seen.probe_backfill_order(ssn);
        }
    }

    fn acted(&mut self, ssn: &Session) {
        self.seen.record_actions(ssn);
    }
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
        let checks = run_scenario_under(&s, conf.config, &registry(), false).unwrap();
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
