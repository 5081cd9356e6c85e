//! `cdp`, cool-down protection (Volcano: pkg/scheduler/plugins/cdp/cdp.go): a running pod that
//! asks for a cool-down time (`volcano.sh/cooldown-time`, a label or an annotation, as a Go
//! duration) may not be preempted or reclaimed until that long after it was scheduled, so an
//! elastic job's pods are not evicted again right after they came back.

use crate::api::Pod;
use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, SessionState};
use crate::model::{TaskId, parse_go_duration};

/// The label or annotation holding a pod's cool-down time.
pub const COOLDOWN_TIME_KEY: &str = "volcano.sh/cooldown-time";

/// The plugin (no arguments).
#[derive(Debug, Default)]
pub struct Cdp;

/// Builds the plugin.
pub fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Cdp))
}

/// The pod's cool-down in seconds: the label when there is one (even one that does not parse),
/// else the annotation; `None` when neither is set or the value is not a Go duration (Volcano:
/// cdp.go, podCooldownTime).
fn cooldown_secs(pod: &Pod) -> Option<f64> {
    let meta = &pod.metadata;
    let value = meta
        .labels
        .get(COOLDOWN_TIME_KEY)
        .or_else(|| meta.annotations.get(COOLDOWN_TIME_KEY))?;
    parse_go_duration(value).ok()
}

/// True when the pod is still cooling down at `now` (seconds): it is Running and its first
/// `PodScheduled=True` condition changed less than its cool-down ago. A condition without a
/// time counts from Go's zero time, so it protects nothing.
fn cooling_down(pod: &Pod, now: i64) -> bool {
    let Some(cooldown) = cooldown_secs(pod) else {
        return false;
    };
    if pod.status.phase != "Running" {
        return false;
    }
    pod.status
        .conditions
        .iter()
        .find(|c| c.type_ == "PodScheduled" && c.status == "True")
        .and_then(|c| c.last_transition_time)
        .is_some_and(|scheduled| scheduled.0 as f64 + cooldown > now as f64)
}

/// The candidates that are not cooling down, in order (Volcano: cdp.go, OnSessionOpen's
/// filterVictimFn).
fn out_of_cooldown(ssn: &SessionState, candidates: &[TaskId]) -> Vec<TaskId> {
    let now = ssn.options.now.0;
    candidates
        .iter()
        .copied()
        .filter(|t| !cooling_down(&ssn.snap.tasks.pod[t.idx()], now))
        .collect()
}

impl Plugin for Cdp {
    fn name(&self) -> &str {
        "cdp"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn preemptable(
        &self,
        ssn: &SessionState,
        _: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(out_of_cooldown(ssn, candidates))
    }

    fn reclaimable(
        &self,
        ssn: &SessionState,
        _: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(out_of_cooldown(ssn, candidates))
    }
}

#[cfg(test)]
mod tests {
    use crate::api::Time;
    use crate::harness::find::task;
    use crate::harness::objects::JOB;
    use crate::harness::session;

    const CONF: &str = "actions: preempt\ntiers:\n- plugins:\n  - name: cdp\n";

    /// A Running pod of `ns/pg` on n1 with `labels` and extra `annotations` (flow-map bodies)
    /// and a PodScheduled=True condition from `scheduled`.
    fn running(name: &str, labels: &str, annotations: &str, scheduled: &str) -> String {
        format!(
            "- {{kind: Pod, metadata: {{name: {name}, namespace: ns, uid: {name}, labels: {{{labels}}}, annotations: {{scheduling.k8s.io/group-name: pg, {annotations}}}}}, spec: {{nodeName: n1, containers: [{{name: c, resources: {{requests: {{cpu: '1'}}}}}}]}}, status: {{phase: Running, conditions: [{{type: PodScheduled, status: 'True', lastTransitionTime: '{scheduled}'}}]}}}}\n"
        )
    }

    /// The preemptable answer among the pods `a` and `b` at `now`.
    fn victims_at(pods: &str, now: &str) -> Vec<String> {
        let objects = format!(
            "{JOB}- {{kind: Node, metadata: {{name: n1}}, status: {{allocatable: {{cpu: '8', pods: '10'}}}}}}\n{pods}"
        );
        let mut ssn = session(CONF, &objects);
        ssn.state.options.now = Time::parse(now).unwrap();
        let s = &ssn.state.snap;
        let all: Vec<_> = ["ns/a", "ns/b"]
            .iter()
            .filter_map(|k| s.task_id(k))
            .collect();
        ssn.preemptable(task(&ssn, "ns/a"), &all)
            .into_iter()
            .map(|t| s.tasks.key(t))
            .collect()
    }

    #[test]
    fn a_pod_is_protected_for_its_cooldown_after_it_was_scheduled() {
        let pods = running(
            "a",
            "volcano.sh/cooldown-time: 10m",
            "",
            "2026-01-01T00:00:00Z",
        );
        assert!(victims_at(&pods, "2026-01-01T00:09:59Z").is_empty());
        assert_eq!(victims_at(&pods, "2026-01-01T00:10:00Z"), ["ns/a"]);
    }

    #[test]
    fn the_label_wins_over_the_annotation_even_when_it_does_not_parse() {
        let bad_label = running(
            "a",
            "volcano.sh/cooldown-time: soon",
            "volcano.sh/cooldown-time: 1h",
            "2026-01-01T00:00:00Z",
        );
        assert_eq!(victims_at(&bad_label, "2026-01-01T00:01:00Z"), ["ns/a"]);
        let annotation_only = running(
            "a",
            "",
            "volcano.sh/cooldown-time: 1h",
            "2026-01-01T00:00:00Z",
        );
        assert!(victims_at(&annotation_only, "2026-01-01T00:01:00Z").is_empty());
    }

    #[test]
    fn pods_without_a_cooldown_or_not_running_stay_victims() {
        let pods = running("a", "", "", "2026-01-01T00:00:00Z")
            + &running(
                "b",
                "volcano.sh/cooldown-time: 1h",
                "",
                "2026-01-01T00:00:00Z",
            )
            .replace("phase: Running", "phase: Pending");
        assert_eq!(victims_at(&pods, "2026-01-01T00:01:00Z"), ["ns/a", "ns/b"]);
    }
}
