//! A pod's volume work before its bind, as Volcano's binder runs VolumeBinding's PreBind
//! (Volcano: pkg/scheduler/plugins/predicates/predicates.go, PreBind; kube's
//! `volumeBinder.bindAPIUpdate`): each chosen volume is updated with its claim reference, each
//! claim to provision with the node it is to be provisioned on, both as PUTs of the objects as
//! the watches last delivered them (`update` on persistentvolumes and persistentvolumeclaims,
//! which Volcano's ClusterRole grants). The PV controller then completes the binding.
//!
//! The bind then waits for the PV controller to finish (`volume_wait`) before binding the pod.

use kube::api::PostParams;
use serde_json::{Value, json};
use tephra_cache::ObjectKind;
use tephra_engine::api::{
    BOUND_BY_CONTROLLER_ANNOTATION, ClaimReference, SELECTED_NODE_ANNOTATION,
};
use tephra_engine::framework::VolumeBinds;

use super::Writer;
use crate::raw::RawStore;
use crate::watch::api_resource;

/// The updated objects one bind writes first: volumes by name, claims by namespace and name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VolumeWrites {
    volumes: Vec<(String, Value)>,
    claims: Vec<(String, String, Value)>,
}

/// Sets `metadata.annotations[key]` to `value` (keeping it when `keep` and already set).
fn annotate(object: &mut Value, key: &str, value: &str, keep: bool) {
    let metadata = &mut object["metadata"];
    if !metadata["annotations"].is_object() {
        metadata["annotations"] = json!({});
    }
    let annotations = &mut metadata["annotations"];
    if !(keep && annotations.get(key).is_some()) {
        annotations[key] = json!(value);
    }
}

/// `GetBindVolumeToClaim`: the volume with its claim reference set to the claim (with the
/// claim's resource version when the watch has the claim), marked bound by a controller
/// unless it was bound to the claim already.
fn bound_volume(raw: &RawStore, volume: &Value, claim: &ClaimReference) -> Value {
    let mut pv = volume.clone();
    let held = &pv["spec"]["claimRef"];
    let already = held["name"] == claim.name.as_str()
        && held["namespace"] == claim.namespace.as_str()
        && (held["uid"].as_str().unwrap_or("").is_empty() || held["uid"] == claim.uid.as_str());
    let mut reference = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": claim.namespace,
        "name": claim.name,
        "uid": claim.uid,
    });
    if let Some(version) = raw
        .get(
            ObjectKind::PersistentVolumeClaim,
            &claim.namespace,
            &claim.name,
        )
        .and_then(|c| {
            c["metadata"]["resourceVersion"]
                .as_str()
                .map(str::to_string)
        })
    {
        reference["resourceVersion"] = json!(version);
    }
    pv["spec"]["claimRef"] = reference;
    if !already {
        annotate(&mut pv, BOUND_BY_CONTROLLER_ANNOTATION, "yes", true);
    }
    pv
}

/// The writes `work` needs before binding to `node`; the name of an object the watches do not
/// hold, when one is missing (the bind then cannot go ahead).
pub fn volume_writes(
    raw: &RawStore,
    work: &VolumeBinds,
    node: &str,
) -> Result<VolumeWrites, String> {
    let mut writes = VolumeWrites::default();
    for (name, claim) in &work.volumes {
        let volume = raw
            .get(ObjectKind::PersistentVolume, "", name)
            .ok_or_else(|| format!("persistentvolume {name:?} not in the cache"))?;
        writes
            .volumes
            .push((name.clone(), bound_volume(raw, &volume, claim)));
    }
    for (namespace, name) in &work.provisions {
        let mut claim = raw
            .get(ObjectKind::PersistentVolumeClaim, namespace, name)
            .ok_or_else(|| format!("persistentvolumeclaim {namespace}/{name} not in the cache"))?;
        annotate(&mut claim, SELECTED_NODE_ANNOTATION, node, false);
        writes.claims.push((namespace.clone(), name.clone(), claim));
    }
    Ok(writes)
}

/// The resourceVersions the API answered a bind's volume writes with: the watches must have
/// delivered at least these before the bind's progress can be judged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrittenVersions {
    /// Volumes by name.
    pub volumes: Vec<(String, u64)>,
    /// Claims by namespace and name.
    pub claims: Vec<(String, String, u64)>,
}

/// The resourceVersion of an API answer (0 when it has none that parses).
fn version_of(o: &kube::api::DynamicObject) -> u64 {
    o.metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Writes the volumes, then the claims; the first failure stops.
pub async fn bind_volumes(
    w: &Writer,
    writes: &VolumeWrites,
) -> Result<WrittenVersions, kube::Error> {
    let pp = PostParams::default();
    let mut written = WrittenVersions::default();
    for (name, pv) in &writes.volumes {
        w.before("update persistentvolumes").await;
        let api = w.api(&api_resource(ObjectKind::PersistentVolume), "");
        let answer = api
            .replace(
                name,
                &pp,
                &serde_json::from_value(pv.clone()).map_err(kube::Error::SerdeError)?,
            )
            .await?;
        written.volumes.push((name.clone(), version_of(&answer)));
    }
    for (namespace, name, claim) in &writes.claims {
        w.before("update persistentvolumeclaims").await;
        let api = w.api(&api_resource(ObjectKind::PersistentVolumeClaim), namespace);
        let answer = api
            .replace(
                name,
                &pp,
                &serde_json::from_value(claim.clone()).map_err(kube::Error::SerdeError)?,
            )
            .await?;
        written
            .claims
            .push((namespace.clone(), name.clone(), version_of(&answer)));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::Raw;

    fn claim_ref() -> ClaimReference {
        ClaimReference {
            namespace: "ns".into(),
            name: "data".into(),
            uid: "u1".into(),
        }
    }

    fn store(pv: Value) -> RawStore {
        let mut raw = RawStore::default();
        raw.upsert(ObjectKind::PersistentVolume, "", "pv1", Raw::of_value(&pv));
        raw.upsert(
            ObjectKind::PersistentVolumeClaim,
            "ns",
            "data",
            Raw::of_value(
                &json!({"metadata": {"name": "data", "namespace": "ns", "resourceVersion": "7"}}),
            ),
        );
        raw
    }

    #[test]
    fn a_chosen_volume_names_its_claim_and_is_marked_bound_by_a_controller() {
        let raw = store(json!({"metadata": {"name": "pv1", "resourceVersion": "3"}, "spec": {}}));
        let work = VolumeBinds {
            volumes: vec![("pv1".into(), claim_ref())],
            provisions: vec![],
            ..Default::default()
        };
        let writes = volume_writes(&raw, &work, "n1").unwrap();
        let pv = &writes.volumes[0].1;
        assert_eq!(pv["spec"]["claimRef"]["uid"], "u1");
        assert_eq!(pv["spec"]["claimRef"]["resourceVersion"], "7");
        assert_eq!(
            pv["metadata"]["resourceVersion"], "3",
            "the update is conditional"
        );
        assert_eq!(
            pv["metadata"]["annotations"][BOUND_BY_CONTROLLER_ANNOTATION],
            "yes"
        );
    }

    #[test]
    fn a_volume_already_bound_to_the_claim_gets_no_controller_mark() {
        let raw = store(json!({"metadata": {"name": "pv1"},
            "spec": {"claimRef": {"namespace": "ns", "name": "data"}}}));
        let work = VolumeBinds {
            volumes: vec![("pv1".into(), claim_ref())],
            provisions: vec![],
            ..Default::default()
        };
        let pv = &volume_writes(&raw, &work, "n1").unwrap().volumes[0].1;
        assert!(pv["metadata"].get("annotations").is_none());
    }

    #[test]
    fn a_claim_to_provision_carries_the_selected_node() {
        let raw = store(json!({}));
        let work = VolumeBinds {
            volumes: vec![],
            provisions: vec![("ns".into(), "data".into())],
            ..Default::default()
        };
        let writes = volume_writes(&raw, &work, "n2").unwrap();
        assert_eq!(
            writes.claims[0].2["metadata"]["annotations"][SELECTED_NODE_ANNOTATION],
            "n2"
        );
    }

    #[test]
    fn a_volume_the_watches_do_not_hold_stops_the_bind() {
        let work = VolumeBinds {
            volumes: vec![("gone".into(), claim_ref())],
            provisions: vec![],
            ..Default::default()
        };
        let e = volume_writes(&RawStore::default(), &work, "n1").unwrap_err();
        assert!(e.contains("gone"), "{e}");
    }
}
