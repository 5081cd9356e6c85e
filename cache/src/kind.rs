//! The kinds of object the cluster state holds, and the metadata every object carries.

use std::fmt;

use tephra_engine::api::{ClusterObject, ObjectMeta};

/// The `kind` of a watched object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjectKind {
    Pod,
    Node,
    PodGroup,
    Queue,
    PriorityClass,
    HyperNode,
    PodDisruptionBudget,
    ResourceQuota,
    NodeMetrics,
    Numatopology,
    Namespace,
    PersistentVolumeClaim,
    PersistentVolume,
    StorageClass,
    CsiNode,
    CsiDriver,
    CsiStorageCapacity,
    VolumeAttachment,
    Service,
    ReplicationController,
    ReplicaSet,
    StatefulSet,
    NodeShard,
}

impl ObjectKind {
    /// Every kind, in the order Volcano's cache is usually fed.
    pub const ALL: [ObjectKind; 23] = [
        ObjectKind::Namespace,
        ObjectKind::PriorityClass,
        ObjectKind::Queue,
        ObjectKind::Node,
        ObjectKind::HyperNode,
        ObjectKind::PodGroup,
        ObjectKind::Pod,
        ObjectKind::PodDisruptionBudget,
        ObjectKind::ResourceQuota,
        ObjectKind::NodeMetrics,
        ObjectKind::Numatopology,
        ObjectKind::PersistentVolumeClaim,
        ObjectKind::PersistentVolume,
        ObjectKind::StorageClass,
        ObjectKind::CsiNode,
        ObjectKind::CsiDriver,
        ObjectKind::CsiStorageCapacity,
        ObjectKind::VolumeAttachment,
        ObjectKind::Service,
        ObjectKind::ReplicationController,
        ObjectKind::ReplicaSet,
        ObjectKind::StatefulSet,
        ObjectKind::NodeShard,
    ];

    /// True for the kinds a snapshot's node side is built from (nodes and their measured usage).
    pub fn shapes_node_tables(self) -> bool {
        matches!(self, ObjectKind::Node | ObjectKind::NodeMetrics)
    }

    /// True for the kinds whose change may change every node's answer for a pod, so that
    /// nothing carried over from the last session can be trusted (a namespace's labels decide
    /// which pods an inter-pod affinity term with a `namespaceSelector` matches).
    pub fn invalidates_carryover(self) -> bool {
        matches!(self, ObjectKind::Namespace)
    }

    /// The kind of an object.
    pub fn of(object: &ClusterObject) -> ObjectKind {
        match object {
            ClusterObject::Pod(_) => ObjectKind::Pod,
            ClusterObject::Node(_) => ObjectKind::Node,
            ClusterObject::PodGroup(_) => ObjectKind::PodGroup,
            ClusterObject::Queue(_) => ObjectKind::Queue,
            ClusterObject::PriorityClass(_) => ObjectKind::PriorityClass,
            ClusterObject::HyperNode(_) => ObjectKind::HyperNode,
            ClusterObject::PodDisruptionBudget(_) => ObjectKind::PodDisruptionBudget,
            ClusterObject::ResourceQuota(_) => ObjectKind::ResourceQuota,
            ClusterObject::NodeMetrics(_) => ObjectKind::NodeMetrics,
            ClusterObject::Numatopology(_) => ObjectKind::Numatopology,
            ClusterObject::Namespace(_) => ObjectKind::Namespace,
            ClusterObject::PersistentVolumeClaim(_) => ObjectKind::PersistentVolumeClaim,
            ClusterObject::PersistentVolume(_) => ObjectKind::PersistentVolume,
            ClusterObject::StorageClass(_) => ObjectKind::StorageClass,
            ClusterObject::CsiNode(_) => ObjectKind::CsiNode,
            ClusterObject::CsiDriver(_) => ObjectKind::CsiDriver,
            ClusterObject::CsiStorageCapacity(_) => ObjectKind::CsiStorageCapacity,
            ClusterObject::VolumeAttachment(_) => ObjectKind::VolumeAttachment,
            ClusterObject::Service(_) => ObjectKind::Service,
            ClusterObject::ReplicationController(_) => ObjectKind::ReplicationController,
            ClusterObject::ReplicaSet(_) => ObjectKind::ReplicaSet,
            ClusterObject::StatefulSet(_) => ObjectKind::StatefulSet,
            ClusterObject::NodeShard(_) => ObjectKind::NodeShard,
        }
    }

    /// The kind named by a manifest's `kind` field, if tephra watches it.
    pub fn from_name(kind: &str) -> Option<ObjectKind> {
        ObjectKind::ALL.into_iter().find(|k| k.name() == kind)
    }

    /// The manifest `kind` name.
    pub fn name(self) -> &'static str {
        match self {
            ObjectKind::Pod => "Pod",
            ObjectKind::Node => "Node",
            ObjectKind::PodGroup => "PodGroup",
            ObjectKind::Queue => "Queue",
            ObjectKind::PriorityClass => "PriorityClass",
            ObjectKind::HyperNode => "HyperNode",
            ObjectKind::PodDisruptionBudget => "PodDisruptionBudget",
            ObjectKind::ResourceQuota => "ResourceQuota",
            ObjectKind::NodeMetrics => "NodeMetrics",
            ObjectKind::Numatopology => "Numatopology",
            ObjectKind::Namespace => "Namespace",
            ObjectKind::PersistentVolumeClaim => "PersistentVolumeClaim",
            ObjectKind::PersistentVolume => "PersistentVolume",
            ObjectKind::StorageClass => "StorageClass",
            ObjectKind::CsiNode => "CSINode",
            ObjectKind::CsiDriver => "CSIDriver",
            ObjectKind::CsiStorageCapacity => "CSIStorageCapacity",
            ObjectKind::VolumeAttachment => "VolumeAttachment",
            ObjectKind::Service => "Service",
            ObjectKind::ReplicationController => "ReplicationController",
            ObjectKind::ReplicaSet => "ReplicaSet",
            ObjectKind::StatefulSet => "StatefulSet",
            ObjectKind::NodeShard => "NodeShard",
        }
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The `metadata` of any object.
pub fn meta_of(object: &ClusterObject) -> &ObjectMeta {
    match object {
        ClusterObject::Pod(o) => &o.metadata,
        ClusterObject::Node(o) => &o.metadata,
        ClusterObject::PodGroup(o) => &o.metadata,
        ClusterObject::Queue(o) => &o.metadata,
        ClusterObject::PriorityClass(o) => &o.metadata,
        ClusterObject::HyperNode(o) => &o.metadata,
        ClusterObject::PodDisruptionBudget(o) => &o.metadata,
        ClusterObject::ResourceQuota(o) => &o.metadata,
        ClusterObject::NodeMetrics(o) => &o.metadata,
        ClusterObject::Numatopology(o) => &o.metadata,
        ClusterObject::Namespace(o) => &o.metadata,
        ClusterObject::PersistentVolumeClaim(o) => &o.metadata.meta,
        ClusterObject::PersistentVolume(o) => &o.metadata,
        ClusterObject::StorageClass(o) => &o.metadata,
        ClusterObject::CsiNode(o) => &o.metadata,
        ClusterObject::CsiDriver(o) => &o.metadata,
        ClusterObject::CsiStorageCapacity(o) => &o.metadata,
        ClusterObject::VolumeAttachment(o) => &o.metadata,
        ClusterObject::Service(o) => &o.metadata,
        ClusterObject::ReplicationController(o) => &o.metadata,
        ClusterObject::ReplicaSet(o) => &o.metadata,
        ClusterObject::StatefulSet(o) => &o.metadata,
        ClusterObject::NodeShard(o) => &o.metadata,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_name() {
        for k in ObjectKind::ALL {
            assert_eq!(ObjectKind::from_name(k.name()), Some(k));
        }
    }

    #[test]
    fn unwatched_kinds_have_no_object_kind() {
        assert_eq!(ObjectKind::from_name("Deployment"), None);
        assert_eq!(
            ObjectKind::from_name("pod"),
            None,
            "kinds are case-sensitive"
        );
    }
}
