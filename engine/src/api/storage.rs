//! Stripped storage objects: what kube-scheduler's VolumeBinding, VolumeZone and
//! NodeVolumeLimits filters read of claims, volumes, classes and CSI objects.

use serde::{Deserialize, Serialize};

use super::{LabelSelector, NodeSelector, ObjectMeta, ResourceList};
use crate::model::Quantity;

/// `storageClassName`'s beta annotation, which wins over the field on claims and volumes.
pub const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";
/// The claim annotation naming the node a delayed-binding claim is provisioned for.
pub const SELECTED_NODE_ANNOTATION: &str = "volume.kubernetes.io/selected-node";
/// The claim annotation the PV controller sets once it finished binding.
pub const BIND_COMPLETED_ANNOTATION: &str = "pv.kubernetes.io/bind-completed";
/// The volume annotation saying the binding was made by a controller (or the scheduler).
pub const BOUND_BY_CONTROLLER_ANNOTATION: &str = "pv.kubernetes.io/bound-by-controller";
/// The provisioner name of classes that cannot provision.
pub const NO_PROVISIONER: &str = "kubernetes.io/no-provisioner";

/// `metadata` of a claim: an ephemeral volume's claim must be controlled by its pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClaimMeta {
    #[serde(flatten)]
    pub meta: ObjectMeta,
    pub owner_references: Vec<OwnerReference>,
}

/// `metav1.OwnerReference`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OwnerReference {
    pub uid: String,
    pub controller: Option<bool>,
}

/// `v1.PersistentVolumeClaim`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PersistentVolumeClaim {
    pub metadata: ClaimMeta,
    pub spec: ClaimSpec,
    pub status: ClaimStatus,
}

/// `v1.PersistentVolumeClaimSpec`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClaimSpec {
    pub access_modes: Vec<String>,
    pub selector: Option<LabelSelector>,
    pub resources: ClaimResources,
    pub volume_name: String,
    pub storage_class_name: Option<String>,
    pub volume_mode: Option<String>,
    pub volume_attributes_class_name: Option<String>,
}

/// `v1.VolumeResourceRequirements`, the requests alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClaimResources {
    pub requests: ResourceList,
}

/// `v1.PersistentVolumeClaimStatus`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClaimStatus {
    pub phase: String,
}

impl PersistentVolumeClaim {
    /// `GetPersistentVolumeClaimClass`: the beta annotation, else the field, else "".
    pub fn class(&self) -> &str {
        match self
            .metadata
            .meta
            .annotations
            .get(BETA_STORAGE_CLASS_ANNOTATION)
        {
            Some(class) => class,
            None => self.spec.storage_class_name.as_deref().unwrap_or(""),
        }
    }

    /// The requested `storage`, in bytes (0 when none is requested).
    pub fn requested_bytes(&self) -> i64 {
        self.spec
            .resources
            .requests
            .get("storage")
            .map_or(0, Quantity::value)
    }

    /// `isPVCFullyBound`: bound to a volume and marked complete by the PV controller.
    pub fn fully_bound(&self) -> bool {
        !self.spec.volume_name.is_empty()
            && self
                .metadata
                .meta
                .annotations
                .contains_key(BIND_COMPLETED_ANNOTATION)
    }

    /// `metav1.IsControlledBy`: some owner reference is the controller and has `uid`.
    pub fn controlled_by(&self, uid: &str) -> bool {
        self.metadata
            .owner_references
            .iter()
            .any(|o| o.controller == Some(true) && o.uid == uid)
    }
}

/// `v1.PersistentVolume`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PersistentVolume {
    pub metadata: ObjectMeta,
    pub spec: VolumeSpec,
    pub status: VolumeStatus,
}

/// `v1.PersistentVolumeSpec`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolumeSpec {
    pub capacity: ResourceList,
    pub access_modes: Vec<String>,
    pub claim_ref: Option<ClaimReference>,
    pub storage_class_name: String,
    pub node_affinity: Option<VolumeNodeAffinity>,
    pub volume_mode: Option<String>,
    pub volume_attributes_class_name: Option<String>,
    pub csi: Option<CsiVolumeSource>,
}

/// `v1.ObjectReference` as a volume's `claimRef` holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClaimReference {
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

/// `v1.VolumeNodeAffinity`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolumeNodeAffinity {
    pub required: Option<NodeSelector>,
}

/// `v1.CSIPersistentVolumeSource`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CsiVolumeSource {
    pub driver: String,
    pub volume_handle: String,
}

/// `v1.PersistentVolumeStatus`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolumeStatus {
    pub phase: String,
}

impl PersistentVolume {
    /// `GetPersistentVolumeClass`: the beta annotation, else the field.
    pub fn class(&self) -> &str {
        match self.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION) {
            Some(class) => class,
            None => &self.spec.storage_class_name,
        }
    }

    /// The `storage` capacity, in bytes.
    pub fn capacity_bytes(&self) -> i64 {
        self.spec.capacity.get("storage").map_or(0, Quantity::value)
    }
}

/// `storage.k8s.io/v1 StorageClass`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StorageClass {
    pub metadata: ObjectMeta,
    pub provisioner: String,
    pub volume_binding_mode: Option<String>,
    pub allowed_topologies: Vec<TopologySelectorTerm>,
}

/// `v1.TopologySelectorTerm`: its expressions are ANDed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologySelectorTerm {
    pub match_label_expressions: Vec<TopologyRequirement>,
}

/// `v1.TopologySelectorLabelRequirement`: the label's value is one of `values`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologyRequirement {
    pub key: String,
    pub values: Vec<String>,
}

/// `storage.k8s.io/v1 CSINode`, named after its node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CsiNode {
    pub metadata: ObjectMeta,
    pub spec: CsiNodeSpec,
}

/// CSINode spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CsiNodeSpec {
    pub drivers: Vec<CsiNodeDriver>,
}

/// One driver on a CSINode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CsiNodeDriver {
    pub name: String,
    pub allocatable: Option<VolumeNodeResources>,
}

/// `storage.k8s.io/v1 VolumeNodeResources`: how many volumes of the driver the node attaches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolumeNodeResources {
    pub count: Option<i32>,
}

/// `storage.k8s.io/v1 CSIDriver`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CsiDriver {
    pub metadata: ObjectMeta,
    pub spec: CsiDriverSpec,
}

/// CSIDriver spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CsiDriverSpec {
    /// The driver publishes CSIStorageCapacity objects that provisioning must respect.
    pub storage_capacity: Option<bool>,
}

/// `storage.k8s.io/v1 CSIStorageCapacity`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CsiStorageCapacity {
    pub metadata: ObjectMeta,
    pub storage_class_name: String,
    pub node_topology: Option<LabelSelector>,
    pub capacity: Option<Quantity>,
    pub maximum_volume_size: Option<Quantity>,
}

/// `storage.k8s.io/v1 VolumeAttachment`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolumeAttachment {
    pub metadata: ObjectMeta,
    pub spec: VolumeAttachmentSpec,
}

/// VolumeAttachment spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolumeAttachmentSpec {
    pub attacher: String,
    pub node_name: String,
    pub source: VolumeAttachmentSource,
}

/// What a VolumeAttachment attaches: a named volume (inline sources are not counted).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolumeAttachmentSource {
    pub persistent_volume_name: Option<String>,
}
