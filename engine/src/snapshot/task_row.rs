//! What a task row takes from its pod alone, derived once per version of the pod.
//!
//! The cache hands every snapshot the same `Arc<Pod>` until the pod changes, and the row is kept
//! in the pod's memo, so a snapshot only derives the rows of pods that changed since the last
//! cycle; the others are copied (shared strings, no parsing).

use std::sync::{Arc, OnceLock};

use super::build::{PREEMPTABLE_KEY, TASK_PRIORITY_KEY, TASK_SPEC_KEY, parse_go_bool, pod_request};
use super::few_text::few_text;
use super::signature::{self, SignatureId, TaskSignature};
use crate::api::{Lent, Pod, Time};
use crate::model::{Resource, TaskStatus};

/// One pod's task row, before it is placed in a job and on a node.
#[derive(Debug)]
pub(super) struct TaskRow {
    /// The pod's UID, or `namespace/name` when it has none.
    pub uid: Arc<str>,
    pub name: Arc<str>,
    pub namespace: Arc<str>,
    pub role: Arc<str>,
    pub resreq: Resource,
    pub priority: i32,
    pub preemptable: bool,
    pub sch_gated: bool,
    pub status: TaskStatus,
    pub created: Time,
    pub name_index: Option<i64>,
    /// The task's interned scheduling signature.
    pub signature: SignatureId,
    /// Where the pod may go depends on other pods: it sets pod affinity, pod anti-affinity or
    /// topology spread constraints.
    pub inter_pod: bool,
    /// The pod sets preferred node affinity terms.
    pub preferred_node_affinity: bool,
    /// The pod has a `status.nominatedNodeName`.
    pub nominated: bool,
    /// The pod's volumes name claims (persistent or ephemeral).
    pub claims: bool,
}

/// Derives and memoises the task row of `pod` (the cache calls it as pods arrive).
pub fn prepare_task_row(pod: &Pod) {
    TaskRow::of(pod);
}

/// `text` as a shared string; the empty one (most pods have no role) is allocated once.
fn shared_text(text: &str) -> Arc<str> {
    static EMPTY: OnceLock<Arc<str>> = OnceLock::new();
    if text.is_empty() {
        EMPTY.get_or_init(|| Arc::from("")).clone()
    } else {
        text.into()
    }
}

/// The index Volcano's `CompareTask` reads from a pod name: the last of at least three
/// `-`-separated parts, when it is an integer.
fn name_index(name: &str) -> Option<i64> {
    let mut parts = name.rsplitn(3, '-');
    let last = parts.next()?;
    parts.next()?;
    parts.next()?;
    last.parse().ok()
}

impl TaskRow {
    /// The row of this version of `pod` (derived the first time it is asked for).
    pub fn of(pod: &Pod) -> Arc<TaskRow> {
        pod.memo.get_or_init(|| TaskRow::derive(pod))
    }

    /// The row of `pod`, lent where its memo can lend it (no reference count touched).
    pub fn lent(pod: &Pod) -> Lent<'_, TaskRow> {
        pod.memo.lend(|| TaskRow::derive(pod))
    }

    fn derive(p: &Pod) -> TaskRow {
        let m = &p.metadata;
        let uid = if m.uid.is_empty() {
            m.key()
        } else {
            m.uid.clone()
        };
        let role = m
            .annotations
            .get(TASK_SPEC_KEY)
            .or_else(|| m.labels.get(TASK_SPEC_KEY))
            .map(String::as_str)
            .unwrap_or_default();
        let priority = m
            .annotations
            .get(TASK_PRIORITY_KEY)
            .and_then(|v| v.parse::<i32>().ok())
            .unwrap_or(p.spec.priority.unwrap_or(1));
        let preemptable = m
            .annotations
            .get(PREEMPTABLE_KEY)
            .or_else(|| m.labels.get(PREEMPTABLE_KEY))
            .map(|v| parse_go_bool(v).unwrap_or(false))
            .unwrap_or(true);
        let resreq = pod_request(p);
        TaskRow {
            uid: uid.into(),
            name: m.name.as_str().into(),
            namespace: few_text(&m.namespace),
            role: shared_text(role),
            signature: signature::intern(&TaskSignature::new(p, &resreq)),
            resreq,
            priority,
            preemptable,
            sch_gated: !p.spec.scheduling_gates.is_empty(),
            status: TaskStatus::from_pod(
                &p.status.phase,
                m.deletion_timestamp.is_some(),
                &p.spec.node_name,
            ),
            created: m.creation_timestamp.unwrap_or_default(),
            name_index: name_index(&m.name),
            inter_pod: p
                .spec
                .affinity
                .as_ref()
                .is_some_and(|a| a.pod_affinity.is_some() || a.pod_anti_affinity.is_some())
                || !p.spec.topology_spread_constraints.is_empty(),
            preferred_node_affinity: p
                .spec
                .affinity
                .as_ref()
                .and_then(|a| a.node_affinity.as_ref())
                .is_some_and(|na| {
                    !na.preferred_during_scheduling_ignored_during_execution
                        .is_empty()
                }),
            nominated: !p.status.nominated_node_name.is_empty(),
            claims: p
                .spec
                .volumes
                .iter()
                .any(|v| v.persistent_volume_claim.is_some() || v.ephemeral.is_some()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::name_index;

    #[test]
    fn rows_of_pods_with_equal_signatures_have_one_signature_id() {
        let parse = |yaml: &str| -> crate::api::Pod { crate::harness::Harness::parse(yaml) };
        let spec =
            "spec: {nodeSelector: {zone: a}, containers: [{resources: {requests: {cpu: '1'}}}]}";
        let (a, b) = (
            parse(spec),
            parse(&format!("metadata: {{name: b}}\n{spec}")),
        );
        let other = parse(&spec.replace("zone: a", "zone: b"));
        let (row_a, row_b) = (super::TaskRow::of(&a), super::TaskRow::of(&b));
        assert_eq!(row_a.signature, row_b.signature);
        assert_ne!(super::TaskRow::of(&other).signature, row_a.signature);
    }

    #[test]
    fn a_pod_depends_on_other_pods_with_pod_affinity_anti_affinity_or_spread_constraints() {
        let parse = |yaml: &str| -> crate::api::Pod { crate::harness::Harness::parse(yaml) };
        let inter_pod = |yaml: &str| super::TaskRow::of(&parse(yaml)).inter_pod;
        assert!(!inter_pod("spec: {nodeSelector: {zone: a}}"));
        assert!(!inter_pod("spec: {affinity: {nodeAffinity: {}}}"));
        assert!(inter_pod("spec: {affinity: {podAffinity: {}}}"));
        assert!(inter_pod("spec: {affinity: {podAntiAffinity: {}}}"));
        assert!(inter_pod(
            "spec: {topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}"
        ));
    }

    #[test]
    fn a_row_says_whether_its_pod_prefers_nodes_or_has_a_nominated_node() {
        let parse = |yaml: &str| -> crate::api::Pod { crate::harness::Harness::parse(yaml) };
        let row = |yaml: &str| super::TaskRow::of(&parse(yaml));
        let preferred = "spec: {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}]}}}";
        assert!(row(preferred).preferred_node_affinity);
        assert!(!row("spec: {affinity: {nodeAffinity: {}}}").preferred_node_affinity);
        assert!(row("status: {nominatedNodeName: n1}").nominated);
        assert!(!row("status: {phase: Pending}").nominated);
    }

    #[test]
    fn a_row_says_whether_its_pod_names_claims() {
        let parse = |yaml: &str| -> crate::api::Pod { crate::harness::Harness::parse(yaml) };
        let claims = |yaml: &str| super::TaskRow::of(&parse(yaml)).claims;
        assert!(claims(
            "spec: {volumes: [{name: data, persistentVolumeClaim: {claimName: c}}]}"
        ));
        assert!(claims("spec: {volumes: [{name: scratch, ephemeral: {}}]}"));
        assert!(!claims("spec: {volumes: [{name: tmp, emptyDir: {}}]}"));
        assert!(!claims("spec: {}"));
    }

    #[test]
    fn name_index_needs_three_components() {
        assert_eq!(name_index("pg1-p-2"), Some(2));
        assert_eq!(name_index("p-2"), None);
        assert_eq!(name_index("a-b-x"), None);
        assert_eq!(name_index("job-a-b-7"), Some(7));
        assert_eq!(name_index("a--"), None);
    }
}
