//! NodeUnschedulable filter: a cordoned node (`spec.unschedulable`) takes only pods that tolerate
//! the `node.kubernetes.io/unschedulable:NoSchedule` taint.

use std::sync::LazyLock;

use super::toleration::tolerated;
use crate::api::{Pod, Taint};
use crate::framework::{Status, StatusCode};

/// kube's reason for a cordoned node.
pub const REASON: &str = "node(s) were unschedulable";

/// The taint a cordoned node stands for; made once, not per node checked.
static UNSCHEDULABLE: LazyLock<Taint> = LazyLock::new(|| Taint {
    key: "node.kubernetes.io/unschedulable".into(),
    value: String::new(),
    effect: "NoSchedule".into(),
});

/// Filter: U&U on a cordoned node the pod does not tolerate.
pub fn filter(pod: &Pod, unschedulable: bool) -> Result<(), Status> {
    if !unschedulable {
        return Ok(());
    }
    if tolerated(&pod.spec.tolerations, &UNSCHEDULABLE) {
        Ok(())
    } else {
        Err(Status {
            code: StatusCode::UnschedulableAndUnresolvable,
            reason: REASON.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn a_cordoned_node_refuses_pods_without_the_toleration() {
        let err = filter(&pod("{}"), true).unwrap_err();
        assert_eq!(err.code, StatusCode::UnschedulableAndUnresolvable);
        assert_eq!(err.reason, "node(s) were unschedulable");
        assert!(filter(&pod("{}"), false).is_ok());
    }

    #[test]
    fn the_unschedulable_toleration_admits_the_pod() {
        let p = pod(
            "spec: {tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}]}",
        );
        assert!(filter(&p, true).is_ok());
    }
}
