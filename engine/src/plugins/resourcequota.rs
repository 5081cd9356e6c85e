//! `resourcequota` (Volcano: pkg/scheduler/plugins/resourcequota/resourcequota.go): a job is
//! admitted only while its PodGroup's `minResources`, added to what its namespace's
//! ResourceQuotas already use and to what jobs admitted this session asked for, stays within
//! every quota's hard limits. Only the dimensions a quota limits are compared; a job without
//! `minResources`, or in a namespace without quotas, is admitted. The plugin has no arguments.

use std::collections::BTreeMap;

use crate::api::{ResourceList, ResourceQuota};
use crate::config::{ArgumentError, Arguments};
use crate::framework::{Event, EventObject, Plugin, SessionState, Vote};
use crate::model::{JobId, TaskId};

/// Resource name → amount in thousandths (`Quantity.MilliValue()`), summed exactly.
type Amounts = BTreeMap<String, i128>;

fn amounts(list: &ResourceList) -> Amounts {
    list.iter()
        .map(|(name, q)| (name.clone(), i128::from(q.milli_value())))
        .collect()
}

/// `quotav1.Add`: every name of either side, summed.
fn add(a: &Amounts, b: &Amounts) -> Amounts {
    let mut sum = a.clone();
    for (name, v) in b {
        *sum.entry(name.clone()).or_default() += v;
    }
    sum
}

/// `quotav1.Mask`: only the entries named in `names`.
fn mask<'a>(a: &Amounts, names: impl IntoIterator<Item = &'a String>) -> Amounts {
    names
        .into_iter()
        .filter_map(|n| a.get(n).map(|v| (n.clone(), *v)))
        .collect()
}

/// Go's `%v` of a resource list, with each quantity written as Kubernetes prints it.
fn text(a: &Amounts) -> String {
    let parts: Vec<String> = a
        .iter()
        .map(|(name, milli)| {
            if milli % 1000 == 0 {
                format!("{name}:{}", milli / 1000)
            } else {
                format!("{name}:{milli}m")
            }
        })
        .collect();
    format!("map[{}]", parts.join(" "))
}

/// One quota's status.
#[derive(Debug, Clone)]
struct QuotaStatus {
    hard: Amounts,
    used: Amounts,
}

/// The plugin: the namespaces' quotas (by name, as Volcano's namespace collection keys them)
/// and what the jobs admitted this session asked for, per namespace.
#[derive(Debug, Default)]
pub struct ResourceQuotaPlugin {
    quotas: BTreeMap<String, BTreeMap<String, QuotaStatus>>,
    pending: BTreeMap<String, Amounts>,
}

/// Builds the plugin; it reads no arguments.
pub fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::<ResourceQuotaPlugin>::default())
}

fn quota_status(quota: &ResourceQuota) -> QuotaStatus {
    QuotaStatus {
        hard: amounts(&quota.status.hard),
        used: amounts(&quota.status.used),
    }
}

impl ResourceQuotaPlugin {
    /// The first quota (by name) the job's minimum would exceed, with the message Volcano
    /// records on the PodGroup.
    fn exceeded(&self, namespace: &str, min: &Amounts) -> Option<String> {
        let quotas = self.quotas.get(namespace)?;
        for quota in quotas.values() {
            let requested = mask(min, quota.hard.keys());
            let used = match self.pending.get(namespace) {
                Some(pending) => add(pending, &quota.used),
                None => quota.used.clone(),
            };
            let new_usage = mask(&add(&used, &requested), requested.keys());
            let exceeded: Vec<&String> = quota
                .hard
                .iter()
                .filter(|(name, hard)| new_usage.get(*name).is_some_and(|v| v > hard))
                .map(|(name, _)| name)
                .collect();
            if !exceeded.is_empty() {
                return Some(format!(
                    "resource quota insufficient, requested: {}, used: {}, limited: {}",
                    text(&mask(&requested, exceeded.iter().copied())),
                    text(&mask(&quota.used, exceeded.iter().copied())),
                    text(&mask(&quota.hard, exceeded.iter().copied())),
                ));
            }
        }
        None
    }
}

impl Plugin for ResourceQuotaPlugin {
    fn name(&self) -> &str {
        "resourcequota"
    }

    /// No predicate or node score.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        self.pending.clear();
        self.quotas.clear();
        for quota in &ssn.snap.resource_quotas {
            self.quotas
                .entry(quota.metadata.namespace.clone())
                .or_default()
                .insert(quota.metadata.name.clone(), quota_status(quota));
        }
    }

    fn job_enqueueable(&self, ssn: &SessionState, job: JobId) -> Vote {
        let jobs = &ssn.snap.jobs;
        let Some(min) = &jobs.podgroup[job.idx()].spec.min_resources else {
            return Vote::Permit;
        };
        let namespace = &jobs.namespace[job.idx()];
        match self.exceeded(namespace, &amounts(min)) {
            None => Vote::Permit,
            Some(message) => {
                ssn.record_event(Event {
                    object: EventObject::PodGroup {
                        namespace: namespace.clone(),
                        name: jobs.name[job.idx()].clone(),
                    },
                    type_: "Normal",
                    reason: "Unschedulable".into(),
                    message: message.into(),
                });
                Vote::Reject
            }
        }
    }

    fn job_enqueued(&mut self, ssn: &SessionState, job: JobId) {
        let jobs = &ssn.snap.jobs;
        let Some(min) = &jobs.podgroup[job.idx()].spec.min_resources else {
            return;
        };
        let namespace = jobs.namespace[job.idx()].to_string();
        if !self.quotas.contains_key(&namespace) {
            return;
        }
        let pending = self.pending.entry(namespace).or_default();
        *pending = add(pending, &amounts(min));
    }
}

#[cfg(test)]
mod tests {
    use crate::framework::Session;
    use crate::harness::Harness;

    const CONF: &str = "actions: enqueue\ntiers:\n- plugins:\n  - name: resourcequota\n";

    fn pg(name: &str, ns: &str, min: &str) -> String {
        format!(
            "- {{kind: PodGroup, metadata: {{name: {name}, namespace: {ns}}}, spec: {{queue: q, minMember: 1{min}}}, status: {{phase: Pending}}}}\n"
        )
    }

    fn quota(name: &str, hard: &str, used: &str) -> String {
        format!(
            "- {{kind: ResourceQuota, metadata: {{name: {name}, namespace: ns}}, status: {{hard: {{{hard}}}, used: {{{used}}}}}}}\n"
        )
    }

    fn session(objects: &str) -> Session {
        let base = "- {kind: Queue, metadata: {name: q}, status: {state: Open}}\n";
        Harness::new(CONF)
            .manifests(&format!("{base}{objects}"))
            .open()
            .expect("session")
    }

    fn job(ssn: &Session, uid: &str) -> crate::model::JobId {
        ssn.state.snap.job_id(uid).unwrap()
    }

    #[test]
    fn a_job_within_every_quota_is_admitted_and_one_beyond_is_refused_with_an_event() {
        let objects = pg("fits", "ns", ", minResources: {cpu: '1', memory: 1G}")
            + &pg("big", "ns", ", minResources: {cpu: '3'}")
            + &quota("a", "cpu: '2', memory: 2G", "cpu: '1'")
            + &quota("b", "memory: 4G", "");
        let mut ssn = session(&objects);
        assert!(ssn.job_enqueueable(job(&ssn, "ns/fits")));
        assert!(!ssn.job_enqueueable(job(&ssn, "ns/big")));
        let events = ssn.state.take_events();
        assert_eq!(events.len(), 1);
        assert_eq!(
            events[0].message,
            "resource quota insufficient, requested: map[cpu:3], used: map[cpu:1], limited: map[cpu:2]"
        );
    }

    #[test]
    fn admitted_jobs_count_against_the_quota_of_their_namespace_only() {
        let objects = pg("first", "ns", ", minResources: {cpu: '1'}")
            + &pg("second", "ns", ", minResources: {cpu: '1'}")
            + &pg("elsewhere", "other", ", minResources: {cpu: '9'}")
            + &quota("a", "cpu: '1'", "");
        let mut ssn = session(&objects);
        let (first, second) = (job(&ssn, "ns/first"), job(&ssn, "ns/second"));
        assert!(ssn.job_enqueueable(first));
        ssn.job_enqueued(first);
        assert!(
            !ssn.job_enqueueable(second),
            "the first job's minimum is pending"
        );
        assert!(
            ssn.job_enqueueable(job(&ssn, "other/elsewhere")),
            "no quota there"
        );
    }

    #[test]
    fn a_job_without_minimum_resources_or_a_dimension_the_quota_does_not_limit_is_admitted() {
        let objects = pg("none", "ns", "")
            + &pg("gpu", "ns", ", minResources: {nvidia.com/gpu: '8'}")
            + &quota("a", "cpu: '1'", "cpu: '1'");
        let ssn = session(&objects);
        assert!(ssn.job_enqueueable(job(&ssn, "ns/none")));
        assert!(ssn.job_enqueueable(job(&ssn, "ns/gpu")));
    }
}
