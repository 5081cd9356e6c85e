//! `sla` (Volcano: pkg/scheduler/plugins/sla/sla.go): jobs with a waiting-time SLA go first, and once a job has waited that
//! long it is admitted and counted as pipelined regardless of later tiers' quota checks.

use std::cmp::Ordering;

use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, SessionState, Vote};
use crate::model::{JobId, TaskId, parse_go_duration};

/// Argument and PodGroup annotation names of the waiting time.
pub const WAITING_TIME_KEY: &str = "sla-waiting-time";
/// PodGroup annotation with the job's own waiting time (takes precedence).
pub const JOB_WAITING_TIME_ANNOTATION: &str = "volcano.sh/sla-waiting-time";

/// The plugin: a cluster-wide default waiting time in seconds, if configured.
#[derive(Debug, Clone, PartialEq)]
pub struct Sla {
    default_wait: Option<f64>,
}

/// Builds the plugin. A `sla-waiting-time` that is not a positive Go duration is refused.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    let default_wait = match args.string(WAITING_TIME_KEY)? {
        None => None,
        Some(s) => {
            let secs = parse_go_duration(&s)
                .ok()
                .filter(|d| *d > 0.0)
                .ok_or_else(|| ArgumentError {
                    key: WAITING_TIME_KEY.into(),
                    value: s.clone(),
                    reason: "expected a positive Go duration such as 3m".into(),
                })?;
            Some(secs)
        }
    };
    Ok(Box::new(Sla { default_wait }))
}

impl Sla {
    /// The job's waiting time: its PodGroup annotation (a positive duration), else the default.
    fn waiting_time(&self, ssn: &SessionState, j: JobId) -> Option<f64> {
        let ann = &ssn.snap.jobs.podgroup[j.idx()].metadata.annotations;
        ann.get(JOB_WAITING_TIME_ANNOTATION)
            .or_else(|| ann.get(WAITING_TIME_KEY))
            .and_then(|v| parse_go_duration(v).ok())
            .filter(|d| *d > 0.0)
            .or(self.default_wait)
    }

    /// Permit once the job has waited its SLA, else abstain.
    fn expired(&self, ssn: &SessionState, j: JobId) -> Vote {
        match self.waiting_time(ssn, j) {
            Some(w) if (ssn.options.now.0 - ssn.snap.jobs.created[j.idx()].0) as f64 >= w => {
                Vote::Permit
            }
            _ => Vote::Abstain,
        }
    }
}

impl Plugin for Sla {
    fn name(&self) -> &str {
        "sla"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn job_order(&self, ssn: &SessionState, l: JobId, r: JobId) -> Ordering {
        match (self.waiting_time(ssn, l), self.waiting_time(ssn, r)) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(a), Some(b)) => {
                let dl = ssn.snap.jobs.created[l.idx()].0 as f64 + a;
                let dr = ssn.snap.jobs.created[r.idx()].0 as f64 + b;
                dl.partial_cmp(&dr).unwrap_or(Ordering::Equal)
            }
        }
    }

    fn job_enqueueable(&self, ssn: &SessionState, job: JobId) -> Vote {
        self.expired(ssn, job)
    }

    fn job_pipelined(&self, ssn: &SessionState, job: JobId) -> Vote {
        self.expired(ssn, job)
    }
}

#[cfg(test)]
mod tests {
    use crate::harness::Harness;

    const CONF: &str = "actions: enqueue\ntiers:\n- plugins:\n  - name: sla\n    arguments: {sla-waiting-time: 3m}\n";

    fn pg(name: &str, created: &str, annotation: Option<&str>) -> crate::api::PodGroup {
        let ann = annotation
            .map(|a| format!(", annotations: {{volcano.sh/sla-waiting-time: '{a}'}}"))
            .unwrap_or_default();
        Harness::parse(&format!(
            "metadata: {{name: {name}, namespace: ns, creationTimestamp: '{created}'{ann}}}\nspec: {{queue: q, minMember: 1, minResources: {{cpu: '1'}}}}\nstatus: {{phase: Pending}}\n"
        ))
    }

    #[test]
    fn expired_jobs_are_permitted_and_others_abstain() {
        let mut ssn = Harness::new(CONF)
            .queue("q", 1)
            .pod_group_object(pg("old", "2026-01-01T00:00:00Z", None))
            .pod_group_object(pg("new", "2026-01-01T00:09:00Z", None))
            .open()
            .unwrap();
        ssn.state.options.now = crate::api::Time::parse("2026-01-01T00:10:00Z").unwrap();
        let (old, new) = (
            ssn.state.snap.job_id("ns/old").unwrap(),
            ssn.state.snap.job_id("ns/new").unwrap(),
        );
        assert!(ssn.job_enqueueable(old));
        assert!(ssn.job_order_less(old, new), "earlier deadline first");
    }

    #[test]
    fn annotation_overrides_the_default_and_jobs_with_sla_go_first() {
        let ssn = Harness::new("actions: enqueue\ntiers:\n- plugins:\n  - name: sla\n")
            .queue("q", 1)
            .pod_group_object(pg("a", "2026-01-01T00:00:00Z", None))
            .pod_group_object(pg("b", "2026-01-01T00:00:00Z", Some("1h")))
            .open()
            .unwrap();
        let (a, b) = (
            ssn.state.snap.job_id("ns/a").unwrap(),
            ssn.state.snap.job_id("ns/b").unwrap(),
        );
        assert!(ssn.job_order_less(b, a));
    }

    #[test]
    fn invalid_waiting_time_is_refused() {
        let err = Harness::new("actions: enqueue\ntiers:\n- plugins:\n  - name: sla\n    arguments: {sla-waiting-time: soon}\n")
            .open()
            .unwrap_err();
        assert!(err.to_string().contains("sla-waiting-time"), "{err}");
    }
}
