//! `overcommit`: admits jobs while the cluster, inflated by `overcommit-factor`, still has room
//! for their minimum next to what running usage and admitted jobs already take (Volcano: pkg/scheduler/plugins/overcommit/overcommit.go).

use super::{job_resources, unschedulable_event};
use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, SessionState, Vote};
use crate::model::{JobId, Resource, TaskId};

/// `overcommit-factor` when unset or below 1.
const DEFAULT_FACTOR: f64 = 1.2;

/// The plugin.
#[derive(Debug)]
pub struct Overcommit {
    factor: f64,
    /// `total × factor − Σ node used`, fixed at session open.
    idle: Resource,
    /// Minimums of the admitted jobs not yet running.
    inqueue: Resource,
}

/// Builds the plugin; `overcommit-factor` must be a number, and one below 1 means the default.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    let factor = args.float("overcommit-factor")?.unwrap_or(DEFAULT_FACTOR);
    let factor = if factor < 1.0 { DEFAULT_FACTOR } else { factor };
    Ok(Box::new(Overcommit {
        factor,
        idle: Resource::empty(),
        inqueue: Resource::empty(),
    }))
}

/// What an admitted job reserves at session open: an Inqueue job its whole minimum (less gated
/// pods), a Running one what it still lacks of it once its allocated tasks reach `minMember`.
fn reserved_at_open(ssn: &SessionState, j: JobId) -> Option<Resource> {
    let min = job_resources::min_resources(ssn, j)?;
    if ssn.job_phase(j) == "Inqueue" {
        return Some(job_resources::deduct_sch_gated(ssn, j, min));
    }
    job_resources::reserved_at_open(ssn, j)
}

impl Plugin for Overcommit {
    fn name(&self) -> &str {
        "overcommit"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        let mut idle = ssn.snap.total.clone();
        idle.multi(self.factor);
        for used in &ssn.nodes.used {
            idle.sub(used);
        }
        self.idle = idle;
        self.inqueue = Resource::empty();
        for j in ssn.snap.jobs.ids() {
            if let Some(r) = reserved_at_open(ssn, j) {
                self.inqueue.add(&r);
            }
        }
    }

    /// Permits a job whose minimum fits, with everything already admitted, in the inflated
    /// idle resources on the dimensions it asks for; jobs without a minimum always pass.
    fn job_enqueueable(&self, ssn: &SessionState, job: JobId) -> Vote {
        let Some(min) = job_resources::min_resources(ssn, job) else {
            return Vote::Permit;
        };
        match self
            .inqueue
            .plus(min)
            .less_equal_with_dimension(&self.idle, min)
        {
            Ok(()) => Vote::Permit,
            Err(names) => {
                unschedulable_event::record(
                    ssn,
                    job,
                    "resource in cluster is overused",
                    "overused",
                    &names,
                );
                Vote::Reject
            }
        }
    }

    fn job_enqueued(&mut self, ssn: &SessionState, job: JobId) {
        if let Some(min) = job_resources::min_resources(ssn, job) {
            let reserved = job_resources::deduct_sch_gated(ssn, job, min);
            self.inqueue.add(&reserved);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Session;
    use crate::harness::find::job;
    use crate::harness::objects::{group_pod, pod_group, sized_node};
    use crate::harness::session;

    fn conf(factor: &str) -> String {
        format!(
            "actions: enqueue\ntiers:\n- plugins:\n  - name: overcommit\n    arguments: {{overcommit-factor: {factor}}}\n"
        )
    }

    /// Volcano's overcommit test cluster (6 cpu, 20Gi) with one Inqueue PodGroup.
    fn cluster(factor: &str, min_resources: &str) -> Session {
        let mut m = String::from("kind: Queue\nmetadata: {name: c1}\n");
        m += &sized_node("n1", "{cpu: 2, memory: 4Gi}");
        m += &sized_node("n2", "{cpu: 4, memory: 16Gi}");
        m += &pod_group("test-namespace/pg1", "c1", 2, min_resources, "Inqueue");
        session(&conf(factor), &m)
    }

    /// The conformance cases' call order: JobEnqueued first, then JobEnqueueable.
    fn enqueued_then_enqueueable(ssn: &mut Session) -> bool {
        let pg1 = job(ssn, "test-namespace/pg1");
        ssn.job_enqueued(pg1);
        ssn.job_enqueueable(pg1)
    }

    #[test]
    fn factor_below_one_falls_back_to_the_default() {
        // With 0.8 the cluster would offer 4.8 cpu against the 6 cpu booked.
        assert!(enqueued_then_enqueueable(&mut cluster(
            "0.8",
            "{cpu: 2000m, memory: 2G}"
        )));
    }

    #[test]
    fn job_fitting_the_inflated_cluster_is_admitted() {
        assert!(enqueued_then_enqueueable(&mut cluster(
            "1.2",
            "{cpu: 2000m, memory: 2G}"
        )));
    }

    #[test]
    fn job_larger_than_the_inflated_cluster_is_refused_with_a_pod_group_event() {
        let mut ssn = cluster("1.2", "{cpu: 20000m, memory: 20G}");
        assert!(!enqueued_then_enqueueable(&mut ssn));
        let events = ssn.state.take_events();
        assert_eq!(events.len(), 1);
        assert_eq!(
            events[0].message,
            "resource in cluster is overused: overused cpu, overused memory"
        );
    }

    #[test]
    fn factor_must_be_a_number() {
        let args = |yaml: &str| Arguments(serde_saphyr::from_str(yaml).unwrap());
        assert!(build(&args("overcommit-factor: lots\n")).is_err());
        assert!(build(&args("overcommit-factor: 2\n")).is_ok());
    }

    #[test]
    fn running_usage_and_running_jobs_remaining_minimum_take_room() {
        let mut m = String::from("kind: Queue\nmetadata: {name: q}\n");
        m += &sized_node("n1", "{cpu: 10, memory: 10Gi}");
        m += &pod_group("ns/run", "q", 1, "{cpu: 6}", "Running");
        m += &group_pod("ns/run-0", "run", "n1", "{cpu: 2}", "Running");
        m += &pod_group("ns/fits", "q", 1, "{cpu: 4}", "Pending");
        m += &pod_group("ns/big", "q", 1, "{cpu: 5}", "Pending");
        m += &pod_group("ns/free", "q", 1, "", "Pending");
        let ssn = session(&conf("1.0"), &m);
        // 10 cpu less 2 used less the 4 the running job still reserves leaves 4.
        assert!(ssn.job_enqueueable(job(&ssn, "ns/fits")));
        assert!(!ssn.job_enqueueable(job(&ssn, "ns/big")));
        assert!(
            ssn.job_enqueueable(job(&ssn, "ns/free")),
            "no minResources: always admitted"
        );
    }
}
