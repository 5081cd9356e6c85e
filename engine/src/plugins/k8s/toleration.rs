//! Toleration matching (`Toleration.ToleratesTaint`), shared by NodeUnschedulable,
//! TaintToleration and the topology-spread taint policy.
//!
//! The `TaintTolerationComparisonOperators` gate is off in Volcano, so `Gt`/`Lt` tolerations
//! never match.

use crate::api::{Taint, Toleration};

/// True when `tol` tolerates `taint`.
pub fn tolerates(tol: &Toleration, taint: &Taint) -> bool {
    if !tol.effect.is_empty() && tol.effect != taint.effect {
        return false;
    }
    if !tol.key.is_empty() && tol.key != taint.key {
        return false;
    }
    match tol.operator.as_str() {
        "" | "Equal" => tol.value == taint.value,
        "Exists" => true,
        _ => false,
    }
}

/// True when some toleration tolerates `taint`.
pub fn tolerated(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| tolerates(t, taint))
}

/// True for the effects a filter enforces (`DoNotScheduleTaintsFilterFunc`).
pub fn is_do_not_schedule(taint: &Taint) -> bool {
    taint.effect == "NoSchedule" || taint.effect == "NoExecute"
}

/// The first NoSchedule/NoExecute taint no toleration tolerates (`FindMatchingUntoleratedTaint`).
pub fn first_untolerated<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| is_do_not_schedule(t))
        .find(|t| !tolerated(tolerations, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.into(),
            effect: effect.into(),
        }
    }

    fn tol(key: &str, op: &str, value: &str, effect: &str) -> Toleration {
        Toleration {
            key: key.into(),
            operator: op.into(),
            value: value.into(),
            effect: effect.into(),
            ..Default::default()
        }
    }

    #[test]
    fn empty_key_with_exists_tolerates_every_taint() {
        assert!(tolerates(
            &tol("", "Exists", "", ""),
            &taint("a", "b", "NoSchedule")
        ));
    }

    #[test]
    fn equal_needs_the_same_value_and_empty_operator_means_equal() {
        let t = taint("k", "v", "NoSchedule");
        assert!(tolerates(&tol("k", "Equal", "v", "NoSchedule"), &t));
        assert!(tolerates(&tol("k", "", "v", ""), &t));
        assert!(!tolerates(&tol("k", "Equal", "w", ""), &t));
        assert!(
            !tolerates(&tol("k", "Exists", "", "NoExecute"), &t),
            "effect differs"
        );
    }

    #[test]
    fn comparison_operators_never_match_with_the_gate_off() {
        assert!(!tolerates(
            &tol("k", "Gt", "1", ""),
            &taint("k", "5", "NoSchedule")
        ));
    }

    #[test]
    fn prefer_no_schedule_taints_are_not_enforced() {
        let taints = [
            taint("soft", "", "PreferNoSchedule"),
            taint("hard", "", "NoExecute"),
        ];
        assert_eq!(
            first_untolerated(&taints, &[]).map(|t| t.key.as_str()),
            Some("hard")
        );
        assert!(first_untolerated(&taints, &[tol("hard", "Exists", "", "")]).is_none());
    }
}
