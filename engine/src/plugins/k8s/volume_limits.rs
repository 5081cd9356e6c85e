//! NodeVolumeLimits (kube-scheduler 1.36's CSI limits): a node attaches at most its CSINode's
//! `allocatable.count` volumes of each CSI driver. The volumes counted are those of the pods on
//! the node and of its VolumeAttachments; a volume already attached is not counted twice.
//!
//! Not modelled: inline in-tree volumes and in-tree plugins migrated to CSI (kube counts them
//! only once translated to CSI, on nodes whose CSINode says they migrated); tephra's pods carry
//! no inline volume sources.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::{CsiNode, PersistentVolumeClaim, Pod};
use crate::framework::{Status, StatusCode};
use crate::snapshot::StorageObjects;

use super::volume_binding::not_for_pod;

/// kube's reason when the node's limit for a driver would be exceeded.
pub const REASON: &str = "node(s) exceed max volume count";

/// PreFilter: Skip (`false`) unless the pod has a persistent or ephemeral claim.
pub fn applies(pod: &Pod) -> bool {
    pod.claims().next().is_some()
}

fn status(code: StatusCode, reason: String) -> Status {
    Status {
        code,
        reason: reason.into(),
    }
}

/// Volumes by unique name (`driver/handle`) → driver.
type Volumes = BTreeMap<String, String>;

/// `getCSIDriverInfo`: the claim's CSI driver and volume handle, from its bound volume, else
/// (unbound, or bound to a missing volume) from its class's provisioner, with a handle naming
/// the claim (no other volume can have it).
fn driver_and_handle(
    storage: &StorageObjects,
    claim: &PersistentVolumeClaim,
) -> Option<(String, String)> {
    let name = &claim.spec.volume_name;
    if !name.is_empty()
        && let Some(pv) = storage.volumes.get(name)
    {
        let csi = pv.spec.csi.as_ref()?;
        return Some((csi.driver.clone(), csi.volume_handle.clone()));
    }
    let class = claim.class();
    if class.is_empty() {
        return None;
    }
    let sc = storage.classes.get(class)?;
    Some((
        sc.provisioner.clone(),
        format!("\0{}", claim.metadata.meta.key()),
    ))
}

/// `filterAttachableVolumes`: the CSI volumes of `pod`'s claims. For the pod being placed a
/// missing claim is an error (unresolvable); for pods already on the node it is passed over.
fn attachable(
    storage: &StorageObjects,
    pod: &Pod,
    placing: bool,
    into: &mut Volumes,
) -> Result<(), Status> {
    for (name, ephemeral) in pod.claims() {
        if name.is_empty() {
            return Err(status(
                StatusCode::Error,
                "PersistentVolumeClaim had no name".into(),
            ));
        }
        let ns = &pod.metadata.namespace;
        let Some(claim) = storage.claim(ns, &name) else {
            if placing {
                return Err(status(
                    StatusCode::UnschedulableAndUnresolvable,
                    format!("looking up PVC {ns}/{name}: persistentvolumeclaim {name:?} not found"),
                ));
            }
            continue;
        };
        if ephemeral && !claim.controlled_by(&pod.metadata.uid) {
            return Err(status(StatusCode::Error, not_for_pod(pod, &name)));
        }
        if let Some((driver, handle)) = driver_and_handle(storage, claim)
            && !driver.is_empty()
            && !handle.is_empty()
        {
            into.insert(format!("{driver}/{handle}"), driver);
        }
    }
    Ok(())
}

/// The node's per-driver limits (drivers without a count set none).
fn limits(csi_node: Option<&CsiNode>) -> BTreeMap<&str, i64> {
    csi_node
        .into_iter()
        .flat_map(|n| &n.spec.drivers)
        .filter_map(|d| Some((d.name.as_str(), i64::from(d.allocatable.as_ref()?.count?))))
        .collect()
}

/// `getNodeVolumeAttachmentInfo`: the CSI volumes VolumeAttachments attach to the node.
fn attached_by_attachments(storage: &StorageObjects, node: &str) -> Volumes {
    storage
        .attachments
        .values()
        .filter(|va| va.spec.node_name == node && !va.spec.attacher.is_empty())
        .filter_map(|va| {
            let pv = storage
                .volumes
                .get(va.spec.source.persistent_volume_name.as_ref()?)?;
            let csi = pv.spec.csi.as_ref()?;
            let attacher = va.spec.attacher.clone();
            Some((format!("{attacher}/{}", csi.volume_handle), attacher))
        })
        .collect()
}

/// Filter: the pod's new CSI volumes, added to those attached to `node` (its pods' and its
/// attachments'), stay within each driver's limit.
pub fn filter<'p>(
    storage: &StorageObjects,
    pod: &Pod,
    node: &str,
    pods_on_node: impl Iterator<Item = &'p Pod>,
) -> Result<(), Status> {
    let mut new = Volumes::new();
    attachable(storage, pod, true, &mut new)?;
    if new.is_empty() {
        return Ok(());
    }
    let limits = limits(storage.csi_nodes.get(node).map(|n| &**n));
    if limits.is_empty() {
        return Ok(());
    }
    let mut attached = Volumes::new();
    for existing in pods_on_node {
        attachable(storage, existing, false, &mut attached)?;
    }
    let mut attached_count: BTreeMap<&str, i64> = BTreeMap::new();
    for (volume, driver) in &attached {
        new.remove(volume);
        *attached_count.entry(driver).or_default() += 1;
    }
    let by_attachments = attached_by_attachments(storage, node);
    for (volume, driver) in &by_attachments {
        if !attached.contains_key(volume) {
            *attached_count.entry(driver).or_default() += 1;
        }
    }
    let drivers: BTreeSet<&str> = new.values().map(String::as_str).collect();
    for driver in drivers {
        let Some(&limit) = limits.get(driver) else {
            continue;
        };
        let adding = new.values().filter(|d| *d == driver).count() as i64;
        if attached_count.get(driver).copied().unwrap_or(0) + adding > limit {
            return Err(status(StatusCode::Unschedulable, REASON.into()));
        }
    }
    Ok(())
}
