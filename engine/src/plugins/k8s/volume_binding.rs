//! VolumeBinding (kube-scheduler 1.36): a pod's bound claims need their volume's node affinity
//! to match the node; its unbound `WaitForFirstConsumer` claims need a matching available volume
//! on the node or a class that can provision there; an unbound claim of any other class makes
//! the pod unschedulable. What a placement takes (a volume bound to a claim, a claim to
//! provision on the node) is assumed for the rest of the session, as kube's assume caches do,
//! so two pods never take one volume.
//!
//! Not modelled: in-tree volume plugins migrated to CSI (kube translates their volumes before
//! checking node affinity; tephra reads the volume as written), and the capacity score (it is
//! off unless the `StorageCapacityScoring` gate is on, which Volcano leaves at its default).

use std::collections::HashMap;
use std::sync::Arc;

use super::node_selector::ParsedTerm;
use crate::api::{
    ClaimReference, NO_PROVISIONER, PersistentVolume, PersistentVolumeClaim, Pod,
    SELECTED_NODE_ANNOTATION, StorageClass, StringMap, TopologySelectorTerm,
};
use crate::framework::{Status, StatusCode};
use crate::selector::Selector;
use crate::snapshot::StorageObjects;

type Labels = StringMap;

/// PreFilter's reason for a pod with an unbound claim that does not wait for its consumer.
pub const UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";
/// A bound claim's volume does not accept the node.
pub const NODE_CONFLICT: &str = "node(s) didn't match PersistentVolume's node affinity";
/// No volume on the node matches an unbound claim, and it cannot be provisioned there.
pub const BIND_CONFLICT: &str = "node(s) didn't find available persistent volumes to bind";
/// No published storage capacity reachable from the node fits a claim to provision.
pub const NOT_ENOUGH_SPACE: &str = "node(s) did not have enough free storage";
/// A bound claim names a volume that does not exist.
pub const PV_NOT_EXIST: &str =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

/// `VolumeBindingWaitForFirstConsumer`.
const WAIT_FOR_FIRST_CONSUMER: &str = "WaitForFirstConsumer";

/// What the session assumed of volumes and claims (kube's PV and PVC assume caches): volumes
/// bound to claims, claims selected for provisioning on a node. Reverted when the placement
/// that assumed them is undone.
#[derive(Debug, Default, Clone)]
pub struct AssumedVolumes {
    /// Volume name → the claim it is assumed bound to.
    claim_of: HashMap<String, ClaimReference>,
    /// Claim `namespace/name` → the node it is assumed provisioned on.
    selected_node: HashMap<String, String>,
}

impl AssumedVolumes {
    /// The volume's claim reference, as assumed or as the volume holds it.
    fn claim_ref<'a>(&'a self, pv: &'a PersistentVolume) -> Option<&'a ClaimReference> {
        self.claim_of
            .get(&pv.metadata.name)
            .or(pv.spec.claim_ref.as_ref())
    }

    /// `IsVolumeBoundToClaim` against the assumed claim reference.
    fn bound_to(&self, pv: &PersistentVolume, claim: &PersistentVolumeClaim) -> bool {
        let Some(r) = self.claim_ref(pv) else {
            return false;
        };
        let m = &claim.metadata.meta;
        r.name == m.name && r.namespace == m.namespace && (r.uid.is_empty() || r.uid == m.uid)
    }

    /// The node the claim is to be provisioned on, as assumed or as annotated.
    fn selected_node<'a>(&'a self, claim: &'a PersistentVolumeClaim) -> Option<&'a str> {
        self.selected_node
            .get(&claim.metadata.meta.key())
            .or(claim
                .metadata
                .meta
                .annotations
                .get(SELECTED_NODE_ANNOTATION))
            .map(String::as_str)
    }

    /// `AssumePodVolumes`: binds each chosen volume to its claim and selects `node` for each
    /// claim to provision; returns what was assumed, for `revert`.
    pub fn assume(&mut self, volumes: &PodVolumes, node: &str) -> Assumed {
        let mut assumed = Assumed::default();
        for (pv, claim) in &volumes.bindings {
            let m = &claim.metadata.meta;
            let reference = ClaimReference {
                namespace: m.namespace.clone(),
                name: m.name.clone(),
                uid: m.uid.clone(),
            };
            let before = self.claim_of.insert(pv.metadata.name.clone(), reference);
            assumed.volumes.push((pv.metadata.name.clone(), before));
        }
        for claim in &volumes.provisions {
            let key = claim.metadata.meta.key();
            let before = self.selected_node.insert(key.clone(), node.to_string());
            assumed.claims.push((key, before));
        }
        assumed
    }

    /// Undoes one `assume` (the latest first, when several are undone).
    pub fn revert(&mut self, assumed: Assumed) {
        for (name, before) in assumed.volumes.into_iter().rev() {
            match before {
                Some(r) => self.claim_of.insert(name, r),
                None => self.claim_of.remove(&name),
            };
        }
        for (key, before) in assumed.claims.into_iter().rev() {
            match before {
                Some(n) => self.selected_node.insert(key, n),
                None => self.selected_node.remove(&key),
            };
        }
    }
}

/// What one `AssumedVolumes::assume` changed, with the values it replaced.
#[derive(Debug, Default, Clone)]
pub struct Assumed {
    volumes: Vec<(String, Option<ClaimReference>)>,
    claims: Vec<(String, Option<String>)>,
}

/// The PreFilter's sorting of a pod's claims (`PodVolumeClaims`).
#[derive(Debug, Clone, PartialEq)]
pub struct PodClaims {
    /// Claims bound to a volume, binding complete.
    bound: Vec<Arc<PersistentVolumeClaim>>,
    /// Unbound claims of a `WaitForFirstConsumer` class.
    delayed: Vec<Arc<PersistentVolumeClaim>>,
}

/// What a pod needs done on one node: volumes to bind to its claims, claims to provision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodVolumes {
    pub bindings: Vec<(Arc<PersistentVolume>, Arc<PersistentVolumeClaim>)>,
    pub provisions: Vec<Arc<PersistentVolumeClaim>>,
}

impl PodVolumes {
    /// True when nothing is to be done.
    pub fn is_empty(&self) -> bool {
        self.bindings.is_empty() && self.provisions.is_empty()
    }
}

fn unresolvable(reason: String) -> Status {
    Status {
        code: StatusCode::UnschedulableAndUnresolvable,
        reason: reason.into(),
    }
}

fn error(reason: String) -> Status {
    Status {
        code: StatusCode::Error,
        reason: reason.into(),
    }
}

/// `ephemeral.VolumeIsForPod`'s error when the claim is not the pod's own.
pub fn not_for_pod(pod: &Pod, claim: &str) -> String {
    let m = &pod.metadata;
    format!(
        "PVC {}/{claim} was not created for pod {}/{} (pod is not owner)",
        m.namespace, m.namespace, m.name
    )
}

/// `IsDelayBindingMode`: the claim's class waits for its first consumer. A claim without a
/// class, or of a class that does not exist, binds immediately.
fn waits_for_consumer(
    storage: &StorageObjects,
    claim: &PersistentVolumeClaim,
) -> Result<bool, Status> {
    let class = claim.class();
    if class.is_empty() {
        return Ok(false);
    }
    let Some(sc) = storage.classes.get(class) else {
        return Ok(false);
    };
    match sc.volume_binding_mode.as_deref() {
        None => Err(error(format!(
            "VolumeBindingMode not set for StorageClass {class:?}"
        ))),
        Some(mode) => Ok(mode == WAIT_FOR_FIRST_CONSUMER),
    }
}

/// PreFilter: `None` (Skip) for a pod without claims, else its claims sorted into bound and
/// delayed ones; a missing, lost or deleted claim, a claim of another pod's ephemeral volume and
/// an unbound immediate claim are unresolvable.
pub fn pre_filter(storage: &StorageObjects, pod: &Pod) -> Result<Option<PodClaims>, Status> {
    let ns = &pod.metadata.namespace;
    let mut claims = Vec::new();
    for (name, ephemeral) in pod.claims() {
        let Some(claim) = storage.claim(ns, &name) else {
            return Err(unresolvable(if ephemeral {
                format!(
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim {name:?}"
                )
            } else {
                format!("persistentvolumeclaim {name:?} not found")
            }));
        };
        if claim.status.phase == "Lost" {
            return Err(unresolvable(format!(
                "persistentvolumeclaim {name:?} bound to non-existent persistentvolume {:?}",
                claim.spec.volume_name
            )));
        }
        if claim.metadata.meta.deletion_timestamp.is_some() {
            return Err(unresolvable(format!(
                "persistentvolumeclaim {name:?} is being deleted"
            )));
        }
        if ephemeral && !claim.controlled_by(&pod.metadata.uid) {
            return Err(unresolvable(not_for_pod(pod, &name)));
        }
        claims.push(claim.clone());
    }
    if claims.is_empty() {
        return Ok(None);
    }
    let mut sorted = PodClaims {
        bound: Vec::new(),
        delayed: Vec::new(),
    };
    let mut immediate = false;
    for claim in claims {
        if claim.fully_bound() {
            sorted.bound.push(claim);
        } else if waits_for_consumer(storage, &claim)? && claim.spec.volume_name.is_empty() {
            sorted.delayed.push(claim);
        } else {
            immediate = true;
        }
    }
    if immediate {
        return Err(unresolvable(UNBOUND_IMMEDIATE.into()));
    }
    Ok(Some(sorted))
}

/// `CheckNodeAffinity`: the volume's required node terms match the node's labels (kube checks
/// a node holding only its labels, so a `metadata.name` field term matches no node). Also read
/// by the Kubernetes binder while it waits for a bind's volumes.
pub fn volume_fits(pv: &PersistentVolume, labels: &Labels) -> bool {
    let Some(required) = pv
        .spec
        .node_affinity
        .as_ref()
        .and_then(|a| a.required.as_ref())
    else {
        return true;
    };
    required
        .node_selector_terms
        .iter()
        .any(|t| ParsedTerm::parse(t).matches("", labels))
}

/// `MatchTopologySelectorTerms`: no term allows every node; else some term's requirements all
/// hold.
fn topology_allows(terms: &[TopologySelectorTerm], labels: &Labels) -> bool {
    terms.is_empty()
        || terms.iter().any(|t| {
            t.match_label_expressions
                .iter()
                .all(|r| labels.get(&r.key).is_some_and(|v| r.values.contains(v)))
        })
}

/// The volume mode, `Filesystem` unless set.
fn mode(m: &Option<String>) -> &str {
    m.as_deref().unwrap_or("Filesystem")
}

/// `FindMatchingVolume` for a delayed claim on a node: the volume already bound to the claim
/// (when it fits the node), else the smallest available volume of the claim's class, size,
/// mode, attributes class, selector and access modes that fits the node and was not chosen
/// for another claim of the pod. Volumes are tried in name order (kube's lister order is a
/// map's).
fn matching_volume<'s>(
    storage: &'s StorageObjects,
    assumed: &AssumedVolumes,
    claim: &PersistentVolumeClaim,
    labels: &Labels,
    chosen: &[&str],
) -> Result<Option<&'s Arc<PersistentVolume>>, Status> {
    let requested = claim.requested_bytes();
    let class = claim.class();
    let selector = match &claim.spec.selector {
        Some(s) => Some(Selector::from_label_selector(Some(s)).map_err(|e| {
            error(format!(
                "error creating internal label selector for claim: {}: {e}",
                claim.metadata.meta.key()
            ))
        })?),
        None => None,
    };
    let claim_vac = claim
        .spec
        .volume_attributes_class_name
        .as_deref()
        .unwrap_or("");
    let mut smallest: Option<(&Arc<PersistentVolume>, i64)> = None;
    for pv in storage.volumes.values() {
        if chosen.contains(&pv.metadata.name.as_str()) {
            continue;
        }
        let bound_to_claim = assumed.bound_to(pv, claim);
        if assumed.claim_ref(pv).is_some() && !bound_to_claim {
            continue;
        }
        let capacity = pv.capacity_bytes();
        if capacity < requested
            || mode(&claim.spec.volume_mode) != mode(&pv.spec.volume_mode)
            || claim_vac
                != pv
                    .spec
                    .volume_attributes_class_name
                    .as_deref()
                    .unwrap_or("")
            || pv.metadata.deletion_timestamp.is_some()
        {
            continue;
        }
        let fits = volume_fits(pv, labels);
        if bound_to_claim {
            return Ok(fits.then_some(pv));
        }
        if pv.status.phase != "Available"
            || selector
                .as_ref()
                .is_some_and(|s| !s.matches(&pv.metadata.labels))
            || pv.class() != class
            || !fits
            || !claim
                .spec
                .access_modes
                .iter()
                .all(|m| pv.spec.access_modes.contains(m))
        {
            continue;
        }
        if smallest.is_none_or(|(_, size)| size > capacity) {
            smallest = Some((pv, capacity));
        }
    }
    Ok(smallest.map(|(pv, _)| pv))
}

/// Why provisioning fails on a node: no provisioner or topology (a bind conflict), or no
/// capacity (not enough space).
enum ProvisionRefusal {
    Unprovisionable,
    NoSpace,
}

/// `checkVolumeProvisions` for one claim: the class can provision, allows the node's
/// topology, and (when its CSI driver publishes capacities) some capacity reachable from the
/// node holds the claim.
fn provisionable(
    storage: &StorageObjects,
    claim: &PersistentVolumeClaim,
    labels: &Labels,
) -> Result<Result<(), ProvisionRefusal>, Status> {
    let class_name = claim.class();
    if class_name.is_empty() {
        return Err(error(format!(
            "no class for claim {:?}",
            claim.metadata.meta.key()
        )));
    }
    let Some(class) = storage.classes.get(class_name) else {
        return Err(error(format!(
            "failed to find storage class {class_name:?}"
        )));
    };
    if class.provisioner.is_empty() || class.provisioner == NO_PROVISIONER {
        return Ok(Err(ProvisionRefusal::Unprovisionable));
    }
    if !topology_allows(&class.allowed_topologies, labels) {
        return Ok(Err(ProvisionRefusal::Unprovisionable));
    }
    if !enough_capacity(storage, class, claim, labels) {
        return Ok(Err(ProvisionRefusal::NoSpace));
    }
    Ok(Ok(()))
}

/// `hasEnoughCapacity`: true unless the claim requests storage from a CSI driver that
/// publishes capacities and none of the class's, reachable from the node, is large enough.
fn enough_capacity(
    storage: &StorageObjects,
    class: &StorageClass,
    claim: &PersistentVolumeClaim,
    labels: &Labels,
) -> bool {
    if claim.spec.resources.requests.get("storage").is_none() {
        return true;
    }
    let publishes = storage
        .csi_drivers
        .get(&class.provisioner)
        .is_some_and(|d| d.spec.storage_capacity == Some(true));
    if !publishes {
        return true;
    }
    let size = claim.requested_bytes();
    storage.capacities.values().any(|c| {
        let limit = c.maximum_volume_size.as_ref().or(c.capacity.as_ref());
        c.storage_class_name == class.metadata.name
            && limit.is_some_and(|l| l.value() >= size)
            && c.node_topology.as_ref().is_some_and(|t| {
                Selector::from_label_selector(Some(t)).is_ok_and(|s| s.matches(labels))
            })
    })
}

/// Filter (`FindPodVolumes`): what the pod needs done on the node, or why it cannot go there
/// (kube's reasons, joined as Volcano reports them).
pub fn find(
    storage: &StorageObjects,
    assumed: &AssumedVolumes,
    claims: &PodClaims,
    node: &str,
    labels: &Labels,
) -> Result<PodVolumes, Status> {
    let mut volumes = PodVolumes::default();
    let mut node_conflict = false;
    let mut bind_conflict = false;
    let mut no_space = false;
    let mut missing_volume = false;
    'bound: for claim in &claims.bound {
        match storage.volumes.get(&claim.spec.volume_name) {
            None => {
                missing_volume = true;
                break 'bound;
            }
            Some(pv) if !volume_fits(pv, labels) => {
                node_conflict = true;
                break 'bound;
            }
            Some(_) => {}
        }
    }
    let mut to_match = Vec::new();
    let mut to_provision = Vec::new();
    for claim in &claims.delayed {
        match assumed.selected_node(claim) {
            Some(selected) if selected != node => {
                bind_conflict = true;
                to_match.clear();
                to_provision.clear();
                break;
            }
            Some(_) => to_provision.push(claim.clone()),
            None => to_match.push(claim.clone()),
        }
    }
    to_match.sort_by_key(|c| c.requested_bytes());
    let mut chosen: Vec<&str> = Vec::new();
    for claim in &to_match {
        match matching_volume(storage, assumed, claim, labels, &chosen)? {
            Some(pv) => {
                chosen.push(&pv.metadata.name);
                volumes.bindings.push((pv.clone(), claim.clone()));
            }
            None => {
                bind_conflict = true;
                to_provision.push(claim.clone());
            }
        }
    }
    if !to_provision.is_empty() {
        bind_conflict = false;
        for claim in &to_provision {
            match provisionable(storage, claim, labels)? {
                Ok(()) => volumes.provisions.push(claim.clone()),
                Err(ProvisionRefusal::Unprovisionable) => {
                    bind_conflict = true;
                    volumes.provisions.clear();
                    break;
                }
                Err(ProvisionRefusal::NoSpace) => {
                    no_space = true;
                    volumes.provisions.clear();
                    break;
                }
            }
        }
    }
    let reasons: Vec<&str> = [
        (node_conflict, NODE_CONFLICT),
        (bind_conflict, BIND_CONFLICT),
        (no_space, NOT_ENOUGH_SPACE),
        (missing_volume, PV_NOT_EXIST),
    ]
    .into_iter()
    .filter_map(|(failed, reason)| failed.then_some(reason))
    .collect();
    if reasons.is_empty() {
        Ok(volumes)
    } else {
        Err(unresolvable(reasons.join(", ")))
    }
}

/// `arePodVolumesBound`: every claim of the pod is fully bound (nothing to assume or bind).
pub fn all_bound(storage: &StorageObjects, pod: &Pod) -> bool {
    pod.claims().all(|(name, _)| {
        storage
            .claim(&pod.metadata.namespace, &name)
            .is_some_and(|c| c.fully_bound())
    })
}
