//! The PodGroup event a quota plugin records when it refuses to admit a job.

use crate::framework::{Event, EventObject, SessionState};
use crate::model::{JobId, ResourceName};

/// Volcano's `FormatResourceNames`: `"<prefix>: <verb> cpu, <verb> memory"`, or the bare
/// prefix when no dimension is named.
fn format_resource_names(prefix: &str, verb: &str, names: &[ResourceName]) -> String {
    if names.is_empty() {
        return prefix.to_string();
    }
    let parts: Vec<String> = names.iter().map(|n| format!("{verb} {n}")).collect();
    format!("{prefix}: {}", parts.join(", "))
}

/// Records a Normal `Unschedulable` event on the job's PodGroup naming the short dimensions.
pub(crate) fn record(
    ssn: &SessionState,
    j: JobId,
    prefix: &str,
    verb: &str,
    names: &[ResourceName],
) {
    let jobs = &ssn.snap.jobs;
    ssn.record_event(Event {
        object: EventObject::PodGroup {
            namespace: jobs.namespace[j.idx()].clone(),
            name: jobs.name[j.idx()].clone(),
        },
        type_: "Normal",
        reason: "Unschedulable".into(),
        message: format_resource_names(prefix, verb, names).into(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Dim;

    #[test]
    fn names_are_listed_with_the_verb_after_the_prefix() {
        let names = [
            ResourceName::Cpu,
            ResourceName::Scalar(Dim::of("nvidia.com/gpu")),
        ];
        assert_eq!(
            format_resource_names("queue resource quota insufficient", "insufficient", &names),
            "queue resource quota insufficient: insufficient cpu, insufficient nvidia.com/gpu"
        );
    }

    #[test]
    fn no_names_leave_the_bare_prefix() {
        assert_eq!(
            format_resource_names("resource in cluster is overused", "overused", &[]),
            "resource in cluster is overused"
        );
    }
}
