//! The objects that select pods and whose selectors kube-scheduler's default topology spreading
//! reads (kube-scheduler: pkg/scheduler/framework/plugins/helper/spread.go, `DefaultSelector`):
//! Services, ReplicationControllers, ReplicaSets and StatefulSets, stripped to their selectors,
//! and the reference from a pod to the workload that controls it.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{LabelSelector, ObjectMeta};

/// `v1 Service`, stripped to its pod selector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Service {
    pub metadata: ObjectMeta,
    pub spec: MapSelectorSpec,
}

/// `v1 ReplicationController`, stripped to its pod selector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicationController {
    pub metadata: ObjectMeta,
    pub spec: MapSelectorSpec,
}

/// The spec of a Service or ReplicationController: a plain label map. Absent (`None`) selects
/// nothing; present and empty selects every pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MapSelectorSpec {
    pub selector: Option<BTreeMap<String, String>>,
}

/// `apps/v1 ReplicaSet`, stripped to its pod selector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicaSet {
    pub metadata: ObjectMeta,
    pub spec: LabelSelectorSpec,
}

/// `apps/v1 StatefulSet`, stripped to its pod selector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StatefulSet {
    pub metadata: ObjectMeta,
    pub spec: LabelSelectorSpec,
}

/// The spec of a ReplicaSet or StatefulSet: a `metav1.LabelSelector`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LabelSelectorSpec {
    pub selector: Option<LabelSelector>,
}

/// The workload kinds whose selector default spreading reads when one controls a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkloadKind {
    ReplicationController,
    ReplicaSet,
    StatefulSet,
}

impl WorkloadKind {
    /// The kind an owner reference's `apiVersion` and `kind` name, compared as a parsed
    /// group/version and kind are (`v1` is the core group, `apps/v1` the apps group).
    fn of(api_version: &str, kind: &str) -> Option<WorkloadKind> {
        match (api_version, kind) {
            ("v1", "ReplicationController") => Some(WorkloadKind::ReplicationController),
            ("apps/v1", "ReplicaSet") => Some(WorkloadKind::ReplicaSet),
            ("apps/v1", "StatefulSet") => Some(WorkloadKind::StatefulSet),
            _ => None,
        }
    }

    fn api_version(self) -> &'static str {
        match self {
            WorkloadKind::ReplicationController => "v1",
            WorkloadKind::ReplicaSet | WorkloadKind::StatefulSet => "apps/v1",
        }
    }

    fn name(self) -> &'static str {
        match self {
            WorkloadKind::ReplicationController => "ReplicationController",
            WorkloadKind::ReplicaSet => "ReplicaSet",
            WorkloadKind::StatefulSet => "StatefulSet",
        }
    }
}

/// The workload controlling an object, in its namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadRef {
    pub kind: WorkloadKind,
    pub name: String,
}

/// One `ownerReferences` entry, as much of it as finding the controller needs.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OwnerReference {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    controller: Option<bool>,
}

/// Reads `metadata.ownerReferences` down to the controlling workload: the first reference
/// marked `controller: true` (`metav1.GetControllerOfNoCopy`), kept only when it is one of the
/// `WorkloadKind`s. Every other owner (a Volcano Job, a batch Job) is dropped, so a pod carries
/// nothing for them.
pub(super) fn deserialize_controller<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Box<WorkloadRef>>, D::Error> {
    let owners = Option::<Vec<OwnerReference>>::deserialize(d)?.unwrap_or_default();
    Ok(owners
        .into_iter()
        .find(|o| o.controller == Some(true))
        .and_then(|o| {
            WorkloadKind::of(&o.api_version, &o.kind)
                .map(|kind| Box::new(WorkloadRef { kind, name: o.name }))
        }))
}

/// Writes the controlling workload back as a one-entry `ownerReferences`.
pub(super) fn serialize_controller<S: Serializer>(
    controller: &Option<Box<WorkloadRef>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let owners: Vec<OwnerReference> = controller
        .iter()
        .map(|w| OwnerReference {
            api_version: w.kind.api_version().into(),
            kind: w.kind.name().into(),
            name: w.name.clone(),
            controller: Some(true),
        })
        .collect();
    owners.serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(yaml: &str) -> ObjectMeta {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn the_first_controller_reference_decides_and_only_workload_kinds_are_kept() {
        let m = meta(concat!(
            "ownerReferences:\n",
            "- {apiVersion: apps/v1, kind: ReplicaSet, name: not-controller}\n",
            "- {apiVersion: apps/v1, kind: ReplicaSet, name: web-1, controller: true}\n",
        ));
        assert_eq!(
            m.controller.as_deref(),
            Some(&WorkloadRef {
                kind: WorkloadKind::ReplicaSet,
                name: "web-1".into()
            })
        );
        let vcjob = meta(concat!(
            "ownerReferences:\n",
            "- {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: j, controller: true}\n",
            "- {apiVersion: apps/v1, kind: StatefulSet, name: later, controller: true}\n",
        ));
        assert_eq!(vcjob.controller, None, "only the first controller counts");
        let wrong_group = meta(
            "ownerReferences: [{apiVersion: extensions/v1beta1, kind: ReplicaSet, name: r, controller: true}]",
        );
        assert_eq!(wrong_group.controller, None);
    }

    #[test]
    fn a_controller_survives_a_round_trip() {
        let m = meta(
            "ownerReferences: [{apiVersion: v1, kind: ReplicationController, name: rc, controller: true}]",
        );
        let back: ObjectMeta = serde_json::from_value(serde_json::to_value(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        let none = serde_json::to_value(ObjectMeta::default()).unwrap();
        assert!(none.get("ownerReferences").is_none());
    }
}
