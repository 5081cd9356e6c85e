//! TaintToleration: the filter (every NoSchedule/NoExecute taint tolerated) and the score (fewer
//! untolerated PreferNoSchedule taints is better).

use super::NodeScores;
use super::normalize::default_normalize;
use super::toleration::{first_untolerated, tolerated};
use crate::api::{Pod, Taint, Toleration};
use crate::framework::{Status, StatusCode};

/// kube's reason for an untolerated NoSchedule/NoExecute taint.
pub const REASON: &str = "node(s) had untolerated taint(s)";

/// Filter: U&U when some NoSchedule/NoExecute taint is not tolerated.
pub fn filter(pod: &Pod, taints: &[Taint]) -> Result<(), Status> {
    match first_untolerated(taints, &pod.spec.tolerations) {
        None => Ok(()),
        Some(_) => Err(Status {
            code: StatusCode::UnschedulableAndUnresolvable,
            reason: REASON.into(),
        }),
    }
}

/// Raw score: how many PreferNoSchedule taints the pod's tolerations leave untolerated. kube
/// keeps only the effect-less and PreferNoSchedule tolerations first; no other can tolerate a
/// PreferNoSchedule taint (`tolerates` checks the effect), so all are passed as they are.
fn intolerable_prefer_no_schedule(taints: &[Taint], tolerations: &[Toleration]) -> i64 {
    taints
        .iter()
        .filter(|t| t.effect == "PreferNoSchedule" && !tolerated(tolerations, t))
        .count() as i64
}

/// The normalised (reversed) scores of the nodes whose taints are given; never skips.
pub fn scores<'n>(pod: &Pod, node_taints: impl Iterator<Item = &'n [Taint]>) -> NodeScores {
    let mut scores: NodeScores = node_taints
        .map(|t| intolerable_prefer_no_schedule(t, &pod.spec.tolerations))
        .collect();
    default_normalize(&mut scores, true);
    scores
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_saphyr::from_str(yaml).unwrap()
    }

    fn taint(key: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: "v".into(),
            effect: effect.into(),
        }
    }

    #[test]
    fn an_untolerated_no_schedule_taint_is_unresolvable() {
        let err = filter(&pod("{}"), &[taint("k", "NoSchedule")]).unwrap_err();
        assert_eq!(err.code, StatusCode::UnschedulableAndUnresolvable);
        assert_eq!(err.reason, "node(s) had untolerated taint(s)");
        assert!(filter(&pod("{}"), &[taint("k", "PreferNoSchedule")]).is_ok());
        assert!(
            filter(
                &pod("spec: {tolerations: [{key: k, operator: Exists}]}"),
                &[taint("k", "NoExecute")]
            )
            .is_ok()
        );
    }

    #[test]
    fn prefer_no_schedule_taints_lower_the_score() {
        let clean: Vec<Taint> = vec![];
        let soft = vec![taint("key1", "PreferNoSchedule")];
        let s = scores(&pod("{}"), [clean.as_slice(), soft.as_slice()].into_iter());
        assert_eq!(s[..], [100, 0]);
    }

    #[test]
    fn no_schedule_tolerations_do_not_count_for_the_score() {
        let soft = vec![taint("key1", "PreferNoSchedule")];
        let p = pod("spec: {tolerations: [{key: key1, operator: Exists, effect: NoSchedule}]}");
        assert_eq!(scores(&p, [soft.as_slice(), &[]].into_iter())[..], [0, 100]);
        let q = pod("spec: {tolerations: [{key: key1, operator: Exists}]}");
        assert_eq!(
            scores(&q, [soft.as_slice(), &[]].into_iter())[..],
            [100, 100]
        );
    }
}
