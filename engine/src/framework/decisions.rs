//! What a session decided, as plain data for the cache and the adapters to apply. A pod's
//! namespace, name and uid are the snapshot's shared strings: a contended cycle decides for 200k
//! pods, and copying each string cost an allocation.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::api::{ClaimReference, NumaSets, PodGroupStatus, ResourceList};
use crate::model::TaskId;

use super::{Event, SessionMetrics};

/// Bind a pod to a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    pub namespace: Arc<str>,
    pub name: Arc<str>,
    pub uid: Arc<str>,
    pub node: String,
    /// What to do to the pod's volumes before the bind, when anything.
    pub volumes: Option<Box<VolumeBinds>>,
    /// Annotations the bind sets on the pod (the devices `deviceshare` gave it, for the device
    /// plugin on the node); Volcano's binder sends them in the Binding, whose annotations the
    /// API server copies onto the pod.
    pub annotations: BTreeMap<String, String>,
    /// The node annotation to take as a lock before the bind (`deviceshare.NodeLockEnable`:
    /// the device plugin on the node releases it once it has read the pod's devices).
    pub node_lock: Option<&'static str>,
}

/// The volume work before one bind (VolumeBinding's PreBind, which Volcano's binder runs before
/// it binds the pod): volumes to bind to the pod's claims, claims to provision on the node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VolumeBinds {
    /// A volume's name and the claim it is bound to (its `claimRef`).
    pub volumes: Vec<(String, ClaimReference)>,
    /// Claims (`namespace`, `name`) the provisioner is to provision on the bind's node (each
    /// gets the `volume.kubernetes.io/selected-node` annotation).
    pub provisions: Vec<(String, String)>,
    /// How long the binder waits for the PV controller to complete these bindings before it
    /// gives up on the bind (`volumebinding.bindTimeoutSeconds`).
    pub bind_timeout: std::time::Duration,
}

/// Evict a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eviction {
    pub namespace: Arc<str>,
    pub name: Arc<str>,
    pub uid: Arc<str>,
    pub reason: String,
}

/// A task left pipelined on a node at close (it waits for resources being released).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipelined {
    pub namespace: Arc<str>,
    pub name: Arc<str>,
    pub node: String,
}

/// The PodGroup status computed at close; `changed` says whether it must be written.
#[derive(Debug, Clone, PartialEq)]
pub struct PodGroupUpdate {
    pub namespace: Arc<str>,
    pub name: Arc<str>,
    pub status: PodGroupStatus,
    pub changed: bool,
}

/// A queue whose `status.allocated` must be written.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueUpdate {
    pub name: String,
    pub allocated: ResourceList,
}

/// The `PodScheduled=False` condition for a task that is not bound yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodConditionUpdate {
    pub namespace: Arc<str>,
    pub name: Arc<str>,
    pub reason: &'static str,
    /// Shared by the tasks of a job that have the job's fit error as their message.
    pub message: Arc<str>,
    /// The nominated node, when an eviction was made for this task.
    pub nominated_node: Option<String>,
}

/// The NUMA resource sets (CPU ids by resource name) `numa-aware` chose for a pod it placed
/// this session: the cache keeps them taken on the node until the node's Numatopology reports
/// the pod (Volcano: pkg/scheduler/cache/cache.go, AddUnassignedNumaPods).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumaBooking {
    pub namespace: Arc<str>,
    pub name: Arc<str>,
    pub uid: Arc<str>,
    pub node: String,
    pub sets: NumaSets,
}

/// Everything one cycle decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decisions {
    pub binds: Vec<Bind>,
    pub evictions: Vec<Eviction>,
    pub pipelined: Vec<Pipelined>,
    pub pod_groups: Vec<PodGroupUpdate>,
    pub queues: Vec<QueueUpdate>,
    pub pod_conditions: Vec<PodConditionUpdate>,
    pub events: Vec<Event>,
    pub numa_bookings: Vec<NumaBooking>,
    /// The snapshot's task rows of the pods bound or evicted, whose pods assuming these decisions
    /// replaces: a cache that keeps the snapshot's task table lets go of them first
    /// (`TaskTables::let_go_of`). Ids, not decisions: they depend on how the snapshot numbered
    /// its tasks, so the checking mode does not compare them.
    pub replaced_tasks: Vec<TaskId>,
    /// What the session counted and timed for the metrics.
    pub metrics: SessionMetrics,
}
