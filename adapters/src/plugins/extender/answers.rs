//! Reading an extender's decoded answers back into the session's values, in Volcano's
//! meaning (Volcano: pkg/scheduler/plugins/extender/extender.go).

use tephra_engine::framework::{FitError, SessionState, StatusCode, Vote};
use tephra_engine::model::{NodeId, TaskId};

use super::wire;

/// Volcano's status codes; 0 (Success) with a message counts as Error.
pub(crate) fn status_code(code: i32) -> StatusCode {
    match code {
        2 => StatusCode::Unschedulable,
        3 => StatusCode::UnschedulableAndUnresolvable,
        4 => StatusCode::Wait,
        5 => StatusCode::Skip,
        _ => StatusCode::Error,
    }
}

pub(crate) fn vote(status: i32) -> Vote {
    match status.signum() {
        1 => Vote::Permit,
        -1 => Vote::Reject,
        _ => Vote::Abstain,
    }
}

/// A predicate's answer: an empty `status` passes.
pub(crate) fn fit_of(r: wire::PredicateResponse) -> Result<(), FitError> {
    if r.status.is_empty() {
        Ok(())
    } else {
        Err(FitError::new(status_code(r.code), r.status))
    }
}

/// Prioritize's scores in the order of `nodes`; a node the answer leaves out scores 0.
pub(crate) fn scores_of(
    r: wire::PrioritizeResponse,
    ssn: &SessionState,
    nodes: &[NodeId],
) -> Result<Vec<f64>, String> {
    match r {
        wire::PrioritizeResponse {
            node_score: Some(scores),
            error_message,
        } if error_message.is_empty() => Ok(nodes
            .iter()
            .map(|n| {
                let name = &ssn.snap.nodes.name[n.idx()];
                scores.get(name).copied().unwrap_or(0.0)
            })
            .collect()),
        r => Err(r.error_message),
    }
}

/// The candidates a victims answer names by UID, in the answer's order; status 0 (Abstain)
/// is no answer.
pub(crate) fn victims_of(
    r: wire::VictimsResponse,
    ssn: &SessionState,
    candidates: &[TaskId],
) -> Option<Vec<TaskId>> {
    if r.status == 0 {
        return None;
    }
    Some(
        r.victims
            .unwrap_or_default()
            .iter()
            .filter_map(|v| {
                candidates
                    .iter()
                    .copied()
                    .find(|&c| *ssn.snap.tasks.uid[c.idx()] == *v.uid)
            })
            .collect(),
    )
}
