//! Stripped Kubernetes and Volcano objects.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{
    CsiDriver, CsiNode, CsiStorageCapacity, Memo, Numatopology, PersistentVolume,
    PersistentVolumeClaim, ResourceList, StorageClass, StringMap, Time, VolumeAttachment,
};

/// `metadata`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectMeta {
    pub name: String,
    pub namespace: String,
    pub uid: String,
    pub labels: StringMap,
    pub annotations: StringMap,
    pub creation_timestamp: Option<Time>,
    pub deletion_timestamp: Option<Time>,
    pub resource_version: String,
    /// The workload controlling the object, read from `ownerReferences` when it is one that
    /// default topology spreading reads (`super::workloads`); every other owner is dropped.
    #[serde(
        rename = "ownerReferences",
        deserialize_with = "super::workloads::deserialize_controller",
        serialize_with = "super::workloads::serialize_controller",
        skip_serializing_if = "Option::is_none"
    )]
    pub controller: Option<Box<super::WorkloadRef>>,
}

impl ObjectMeta {
    /// `namespace/name` (concatenated by hand: a snapshot makes 50k of them, and formatting
    /// cost three times as much).
    pub fn key(&self) -> String {
        let mut key = String::with_capacity(self.namespace.len() + 1 + self.name.len());
        key.push_str(&self.namespace);
        key.push('/');
        key.push_str(&self.name);
        key
    }
}

/// `metav1.LabelSelector`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LabelSelector {
    pub match_labels: BTreeMap<String, String>,
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One `matchExpressions` entry of a label selector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LabelSelectorRequirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// Pod

/// `v1.Pod`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Pod {
    pub metadata: ObjectMeta,
    pub spec: PodSpec,
    pub status: PodStatus,
    /// What scheduling derived from this version of the pod (request, parsed terms).
    #[serde(skip)]
    pub memo: Memo,
}

/// `v1.PodSpec`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodSpec {
    pub node_name: String,
    pub scheduler_name: String,
    pub priority: Option<i32>,
    pub priority_class_name: String,
    pub preemption_policy: Option<String>,
    pub containers: Vec<Container>,
    pub init_containers: Vec<Container>,
    pub overhead: ResourceList,
    pub node_selector: BTreeMap<String, String>,
    /// Boxed: most pods have none, and inline it would push a shared pod past the 768-byte
    /// allocation class (see the test below).
    pub affinity: Option<Box<Affinity>>,
    pub tolerations: Vec<Toleration>,
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    pub scheduling_gates: Vec<SchedulingGate>,
    pub volumes: Box<[Volume]>,
    /// Dynamic resource allocation claims (`resourceClaims`): only whether the pod has any is
    /// read (tephra allocates none, and refuses such pods: `predicates`).
    pub resource_claims: Box<[PodResourceClaim]>,
}

/// `v1.PodResourceClaim`, stripped to its name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodResourceClaim {
    pub name: String,
}

/// `v1.Volume`, stripped to the claim it names: a persistent volume claim, or an ephemeral
/// volume's generated claim. Inline in-tree volumes are not modelled.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Volume {
    pub name: String,
    pub persistent_volume_claim: Option<ClaimSource>,
    pub ephemeral: Option<EphemeralSource>,
}

/// `v1.PersistentVolumeClaimVolumeSource`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClaimSource {
    pub claim_name: String,
}

/// `v1.EphemeralVolumeSource`: only its presence matters (its claim is `<pod>-<volume>`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EphemeralSource {}

impl Pod {
    /// The claims the pod's volumes use, as `(claim name, ephemeral)`, in volume order
    /// (`ephemeral.VolumeClaimName` names an ephemeral volume's claim `<pod>-<volume>`).
    pub fn claims(&self) -> impl Iterator<Item = (Cow<'_, str>, bool)> {
        self.spec.volumes.iter().filter_map(move |v| {
            if let Some(c) = &v.persistent_volume_claim {
                Some((Cow::Borrowed(c.claim_name.as_str()), false))
            } else {
                v.ephemeral.as_ref().map(|_| {
                    let name = format!("{}-{}", self.metadata.name, v.name);
                    (Cow::Owned(name), true)
                })
            }
        })
    }
}

/// `v1.Container`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Container {
    pub name: String,
    pub image: String,
    pub resources: ResourceRequirements,
    pub ports: Vec<ContainerPort>,
    pub restart_policy: Option<String>,
}

/// `v1.ResourceRequirements`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResourceRequirements {
    pub requests: ResourceList,
    pub limits: ResourceList,
}

/// `v1.ContainerPort`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContainerPort {
    pub container_port: i32,
    pub host_port: i32,
    #[serde(rename = "hostIP")]
    pub host_ip: String,
    pub protocol: String,
}

/// `v1.PodSchedulingGate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SchedulingGate {
    pub name: String,
}

/// `v1.Affinity`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Affinity {
    pub node_affinity: Option<NodeAffinity>,
    pub pod_affinity: Option<PodAffinity>,
    pub pod_anti_affinity: Option<PodAffinity>,
}

/// `v1.NodeAffinity`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeAffinity {
    pub required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
    pub preferred_during_scheduling_ignored_during_execution: Vec<PreferredSchedulingTerm>,
}

/// `v1.NodeSelector`: terms are ORed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelector {
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

/// `v1.NodeSelectorTerm`: requirements are ANDed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelectorTerm {
    pub match_expressions: Vec<NodeSelectorRequirement>,
    pub match_fields: Vec<NodeSelectorRequirement>,
}

/// `v1.NodeSelectorRequirement`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelectorRequirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

/// `v1.PreferredSchedulingTerm`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PreferredSchedulingTerm {
    pub weight: i32,
    pub preference: NodeSelectorTerm,
}

/// `v1.PodAffinity` / `v1.PodAntiAffinity` (same shape).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodAffinity {
    pub required_during_scheduling_ignored_during_execution: Vec<PodAffinityTerm>,
    pub preferred_during_scheduling_ignored_during_execution: Vec<WeightedPodAffinityTerm>,
}

/// `v1.PodAffinityTerm`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodAffinityTerm {
    pub label_selector: Option<LabelSelector>,
    pub namespaces: Vec<String>,
    pub topology_key: String,
    pub namespace_selector: Option<LabelSelector>,
}

/// `v1.WeightedPodAffinityTerm`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WeightedPodAffinityTerm {
    pub weight: i32,
    pub pod_affinity_term: PodAffinityTerm,
}

/// `v1.Toleration`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Toleration {
    pub key: String,
    pub operator: String,
    pub value: String,
    pub effect: String,
    pub toleration_seconds: Option<i64>,
}

/// `v1.TopologySpreadConstraint`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologySpreadConstraint {
    pub max_skew: i32,
    pub topology_key: String,
    pub when_unsatisfiable: String,
    pub label_selector: Option<LabelSelector>,
    pub min_domains: Option<i32>,
    pub node_affinity_policy: Option<String>,
    pub node_taints_policy: Option<String>,
    pub match_label_keys: Vec<String>,
}

/// `v1.PodStatus`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodStatus {
    pub phase: String,
    /// When the kubelet started the pod (the `usage` plugin counts recently started pods whose
    /// load its metrics cannot show yet).
    pub start_time: Option<Time>,
    pub nominated_node_name: String,
    pub conditions: Vec<PodCondition>,
}

/// `v1.PodCondition`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    /// When the condition last changed status (`cdp` measures a pod's cool-down from its
    /// `PodScheduled` one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

// ---------------------------------------------------------------------------------------------
// Node

/// `v1.Node`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Node {
    pub metadata: ObjectMeta,
    pub spec: NodeSpec,
    pub status: NodeStatus,
    /// What scheduling derived from this version of the node (its snapshot row).
    #[serde(skip)]
    pub memo: Memo,
}

/// `v1.NodeSpec`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSpec {
    pub unschedulable: bool,
    pub taints: Vec<Taint>,
}

/// `v1.Taint`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Taint {
    pub key: String,
    pub value: String,
    pub effect: String,
}

/// `v1.NodeStatus`, stripped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeStatus {
    pub capacity: ResourceList,
    pub allocatable: ResourceList,
    pub images: Vec<ContainerImage>,
}

/// `v1.ContainerImage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContainerImage {
    pub names: Vec<String>,
    pub size_bytes: i64,
}

// ---------------------------------------------------------------------------------------------
// Volcano objects

/// `scheduling.volcano.sh/v1beta1 PodGroup`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodGroup {
    pub metadata: ObjectMeta,
    pub spec: PodGroupSpec,
    pub status: PodGroupStatus,
    /// What scheduling derived from this version of the PodGroup: its job row, the one type
    /// kept (a slot is 40 bytes on every PodGroup).
    #[serde(skip)]
    pub memo: Memo<1>,
}

/// PodGroup spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodGroupSpec {
    pub min_member: i32,
    pub min_task_member: BTreeMap<String, i32>,
    pub queue: String,
    pub priority_class_name: String,
    pub min_resources: Option<ResourceList>,
    pub network_topology: Option<NetworkTopologySpec>,
    pub sub_group_policy: Vec<SubGroupPolicy>,
}

/// `networkTopology` of a PodGroup or sub-group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NetworkTopologySpec {
    pub mode: String,
    pub highest_tier_allowed: Option<i32>,
    pub highest_tier_name: String,
}

/// One `subGroupPolicy` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SubGroupPolicy {
    pub name: String,
    pub sub_group_size: Option<i32>,
    pub min_sub_groups: Option<i32>,
    pub label_selector: Option<LabelSelector>,
    pub match_label_keys: Vec<String>,
    pub network_topology: Option<NetworkTopologySpec>,
}

/// PodGroup status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodGroupStatus {
    /// Static when the scheduler set it (each cycle sets every job's status).
    pub phase: Cow<'static, str>,
    pub conditions: Vec<PodGroupCondition>,
    pub running: i32,
    pub succeeded: i32,
    pub failed: i32,
}

/// A PodGroup condition. Type, status and reason are static when the scheduler wrote them: gang
/// sets a condition on every job each cycle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodGroupCondition {
    #[serde(rename = "type")]
    pub type_: Cow<'static, str>,
    pub status: Cow<'static, str>,
    #[serde(rename = "transitionID")]
    /// The session UID: one string, shared by every condition a session sets.
    pub transition_id: Arc<str>,
    pub last_transition_time: Option<Time>,
    pub reason: Cow<'static, str>,
    pub message: String,
}

/// `scheduling.volcano.sh/v1beta1 Queue`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Queue {
    pub metadata: ObjectMeta,
    pub spec: QueueSpec,
    pub status: QueueStatus,
}

/// Queue spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct QueueSpec {
    pub weight: i32,
    pub capability: ResourceList,
    pub deserved: ResourceList,
    pub guarantee: Guarantee,
    pub reclaimable: Option<bool>,
    pub parent: String,
    pub priority: i32,
    /// Node groups the queue's jobs go to or avoid (the `nodegroup` plugin's input).
    pub affinity: Option<QueueAffinity>,
}

/// Queue `spec.affinity`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct QueueAffinity {
    pub node_group_affinity: Option<NodeGroupTerms>,
    pub node_group_anti_affinity: Option<NodeGroupTerms>,
}

/// Required and preferred node group names of a queue's affinity or anti-affinity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeGroupTerms {
    pub required_during_scheduling_ignored_during_execution: Vec<String>,
    pub preferred_during_scheduling_ignored_during_execution: Vec<String>,
}

impl Default for QueueSpec {
    /// The CRD defaults `weight` to 1.
    fn default() -> Self {
        QueueSpec {
            weight: 1,
            capability: ResourceList::new(),
            deserved: ResourceList::new(),
            guarantee: Guarantee::default(),
            reclaimable: None,
            parent: String::new(),
            priority: 0,
            affinity: None,
        }
    }
}

/// Queue `spec.guarantee`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Guarantee {
    pub resource: ResourceList,
}

/// Queue status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct QueueStatus {
    pub state: String,
    pub allocated: ResourceList,
}

/// `scheduling.k8s.io/v1 PriorityClass`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PriorityClass {
    pub metadata: ObjectMeta,
    pub value: i32,
    pub global_default: bool,
}

/// `topology.volcano.sh/v1alpha1 HyperNode`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HyperNode {
    pub metadata: ObjectMeta,
    pub spec: HyperNodeSpec,
}

/// HyperNode spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HyperNodeSpec {
    pub tier: i32,
    pub tier_name: String,
    pub members: Vec<HyperNodeMember>,
}

/// A HyperNode member: a node or a child HyperNode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HyperNodeMember {
    #[serde(rename = "type")]
    pub type_: String,
    pub selector: MemberSelector,
}

/// How a HyperNode member is selected.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MemberSelector {
    pub exact_match: Option<ExactMatch>,
    pub regex_match: Option<RegexMatch>,
    pub label_match: Option<LabelSelector>,
}

/// `exactMatch`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExactMatch {
    pub name: String,
}

/// `regexMatch`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RegexMatch {
    pub pattern: String,
}

/// `v1 Namespace`, stripped to its name and labels, which an inter-pod affinity term's
/// `namespaceSelector` matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Namespace {
    pub metadata: ObjectMeta,
}

/// `policy/v1 PodDisruptionBudget`, stripped to what victim filtering reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodDisruptionBudget {
    pub metadata: ObjectMeta,
    pub spec: PodDisruptionBudgetSpec,
    pub status: PodDisruptionBudgetStatus,
}

/// PodDisruptionBudget spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodDisruptionBudgetSpec {
    pub selector: Option<LabelSelector>,
}

/// PodDisruptionBudget status (maintained by the disruption controller).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodDisruptionBudgetStatus {
    pub disruptions_allowed: i32,
    /// Pods already being disrupted (name → time); they do not use up the budget again.
    pub disrupted_pods: BTreeMap<String, String>,
}

/// `v1 ResourceQuota`, stripped to what the `resourcequota` plugin reads: Volcano's cache keeps
/// only each quota's status (Volcano: pkg/scheduler/api/namespace_info.go, NamespaceCollection).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResourceQuota {
    pub metadata: ObjectMeta,
    pub status: ResourceQuotaStatus,
}

/// ResourceQuota status (maintained by the quota controller).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResourceQuotaStatus {
    pub hard: ResourceList,
    pub used: ResourceList,
}

/// `metrics.k8s.io/v1beta1 NodeMetrics`: a node's measured usage. Offline, `usage` stands in
/// for Volcano's metrics source; the live scheduler's source (tephra-kube's `metrics_source`)
/// fills `averages` with what Volcano's sources report instead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeMetrics {
    pub metadata: ObjectMeta,
    pub usage: ResourceList,
    /// When present, the node's utilisation is read from here, not from `usage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub averages: Option<UsageAverages>,
}

/// A node's utilisation as Volcano's metrics sources report it (Volcano:
/// pkg/scheduler/api/node_info.go, NodeUsage): cpu and memory in percent of the node, averaged
/// over `period`, the key Volcano files them under (its sources always use `10m`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UsageAverages {
    pub period: String,
    pub cpu_percent: f64,
    pub memory_percent: f64,
    /// When the source measured them (RFC 3339); absent when it did not say, which Volcano
    /// keeps as the zero time (older than any staleness limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics_time: Option<String>,
}

/// Any object tephra watches, as one event payload.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterObject {
    Pod(Box<Pod>),
    Node(Box<Node>),
    PodGroup(Box<PodGroup>),
    Queue(Box<Queue>),
    PriorityClass(Box<PriorityClass>),
    HyperNode(Box<HyperNode>),
    PodDisruptionBudget(Box<PodDisruptionBudget>),
    ResourceQuota(Box<ResourceQuota>),
    NodeMetrics(Box<NodeMetrics>),
    Numatopology(Box<Numatopology>),
    Namespace(Box<Namespace>),
    PersistentVolumeClaim(Box<PersistentVolumeClaim>),
    PersistentVolume(Box<PersistentVolume>),
    StorageClass(Box<StorageClass>),
    CsiNode(Box<CsiNode>),
    CsiDriver(Box<CsiDriver>),
    CsiStorageCapacity(Box<CsiStorageCapacity>),
    VolumeAttachment(Box<VolumeAttachment>),
    Service(Box<super::Service>),
    ReplicationController(Box<super::ReplicationController>),
    ReplicaSet(Box<super::ReplicaSet>),
    StatefulSet(Box<super::StatefulSet>),
    NodeShard(Box<super::NodeShard>),
}

#[cfg(test)]
mod tests {
    /// The cache holds every pod once, shared (400k in a large cluster). mimalloc, the binaries'
    /// allocator, serves this size from classes of 640, 768, 896 and 1,024 bytes, so a pod one
    /// byte over 768 costs 128 more each.
    #[test]
    fn a_shared_pod_fits_the_768_byte_allocation_class() {
        // An `Arc` puts its two counts before the pod.
        let shared = std::mem::size_of::<super::Pod>() + 2 * std::mem::size_of::<usize>();
        assert!(shared <= 768, "a shared pod takes {shared} bytes");
    }
}
