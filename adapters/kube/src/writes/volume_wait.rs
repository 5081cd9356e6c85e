//! Waiting for the PV controller once a bind's volumes are written, before the pod is bound, as
//! kube's volume binder does in VolumeBinding's PreBind, which Volcano's binder runs before each
//! bind (kube-scheduler: pkg/scheduler/framework/plugins/volumebinding/binder.go,
//! `BindPodVolumes` polling `checkBindings` every second up to `bindTimeoutSeconds`; Volcano:
//! pkg/scheduler/cache/cache.go, `executePreBind`). The scheduler loop judges each waiting bind
//! once a round against the objects the watches last delivered, so a wait holds up neither the
//! cycle nor the other binds.

use std::time::Instant;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tephra_cache::ObjectKind;
use tephra_engine::api::{
    PersistentVolume, PersistentVolumeClaim, SELECTED_NODE_ANNOTATION, StringMap,
};
use tephra_engine::framework::Bind;
use tephra_engine::plugins::k8s::volume_binding::volume_fits;

use super::volumes::WrittenVersions;
use crate::raw::RawStore;

/// A bind whose volume writes went through, waiting for the PV controller.
#[derive(Debug, Clone)]
pub struct VolumeWait {
    pub bind: Bind,
    pub written: WrittenVersions,
    /// When the bind began (its pre-bind step is measured from here).
    pub started: Instant,
    /// When the wait gives up.
    pub deadline: Instant,
}

/// Where a waiting bind stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Every volume and claim is fully bound: the pod can be bound.
    Ready,
    /// Not yet.
    Waiting,
    /// The binding cannot complete (kube's reason).
    Failed(String),
}

/// The resourceVersion of an object as the watch delivered it.
fn version(o: &Value) -> u64 {
    o["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn typed<T: DeserializeOwned>(o: &Value, what: &str) -> Result<T, String> {
    serde_json::from_value(o.clone()).map_err(|e| format!("cannot read {what}: {e}"))
}

impl VolumeWait {
    /// `checkBindings` against the watched objects (`raw`) and the labels of the bind's node
    /// (`None` when the node is gone).
    pub fn check(&self, raw: &RawStore, node_labels: Option<&StringMap>) -> Progress {
        match self.judge(raw, node_labels) {
            Ok(true) => Progress::Ready,
            Ok(false) => Progress::Waiting,
            Err(why) => Progress::Failed(why),
        }
    }

    fn judge(&self, raw: &RawStore, node_labels: Option<&StringMap>) -> Result<bool, String> {
        let b = &self.bind;
        let Some(labels) = node_labels else {
            return Err(format!("failed to get node {:?}: not found", b.node));
        };
        if raw.held(ObjectKind::Pod, &b.namespace, &b.name).is_none() {
            return Err("pod does not exist any more".into());
        }
        let Some(work) = &b.volumes else {
            return Ok(true);
        };
        for ((name, claim), (_, written)) in work.volumes.iter().zip(&self.written.volumes) {
            let pv = raw
                .get(ObjectKind::PersistentVolume, "", name)
                .ok_or_else(|| {
                    format!("failed to check binding: persistentvolume {name:?} not found")
                })?;
            let pvc = raw
                .get(
                    ObjectKind::PersistentVolumeClaim,
                    &claim.namespace,
                    &claim.name,
                )
                .ok_or_else(|| {
                    format!(
                        "failed to check binding: persistentvolumeclaim {}/{} not found",
                        claim.namespace, claim.name
                    )
                })?;
            if version(&pv) < *written {
                return Ok(false);
            }
            let volume: PersistentVolume = typed(&pv, name)?;
            if !volume_fits(&volume, labels) {
                return Err(format!(
                    "pv {name:?} node affinity doesn't match node {:?}",
                    b.node
                ));
            }
            if volume
                .spec
                .claim_ref
                .as_ref()
                .is_none_or(|r| r.uid.is_empty())
            {
                return Err(format!("ClaimRef got reset for pv {name:?}"));
            }
            if !typed::<PersistentVolumeClaim>(&pvc, &claim.name)?.fully_bound() {
                return Ok(false);
            }
        }
        for ((namespace, name), (_, _, written)) in work.provisions.iter().zip(&self.written.claims)
        {
            let pvc = raw
                .get(ObjectKind::PersistentVolumeClaim, namespace, name)
                .ok_or_else(|| {
                    format!(
                        "failed to check provisioning pvc: persistentvolumeclaim {namespace}/{name} not found"
                    )
                })?;
            if version(&pvc) < *written {
                return Ok(false);
            }
            let claim: PersistentVolumeClaim = typed(&pvc, name)?;
            let selected = claim
                .metadata
                .meta
                .annotations
                .get(SELECTED_NODE_ANNOTATION);
            if selected.is_none_or(|n| *n != b.node) {
                // The provisioner drops the annotation when it cannot provision.
                return Err(format!("provisioning failed for PVC {name:?}"));
            }
            if !claim.spec.volume_name.is_empty() {
                let volume_name = &claim.spec.volume_name;
                let Some(pv) = raw.get(ObjectKind::PersistentVolume, "", volume_name) else {
                    return Ok(false);
                };
                let volume: PersistentVolume = typed(&pv, volume_name)?;
                if !volume_fits(&volume, labels) {
                    return Err(format!(
                        "pv {volume_name:?} node affinity doesn't match node {:?}",
                        b.node
                    ));
                }
            }
            if !claim.fully_bound() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use tephra_engine::api::ClaimReference;
    use tephra_engine::framework::VolumeBinds;

    use super::*;
    use crate::raw::Raw;

    fn wait(volumes: &[&str], provisions: &[&str], written: u64) -> VolumeWait {
        let claim = |name: &str| ClaimReference {
            namespace: "ns".into(),
            name: name.into(),
            uid: format!("uid-{name}"),
        };
        let work = VolumeBinds {
            volumes: volumes
                .iter()
                .map(|v| (v.to_string(), claim("data")))
                .collect(),
            provisions: provisions
                .iter()
                .map(|c| ("ns".to_string(), c.to_string()))
                .collect(),
            bind_timeout: Duration::from_secs(600),
        };
        let now = Instant::now();
        VolumeWait {
            bind: Bind {
                namespace: "ns".into(),
                name: "p".into(),
                uid: "u".into(),
                node: "n1".into(),
                volumes: Some(Box::new(work)),
                node_lock: None,
                annotations: Default::default(),
            },
            written: WrittenVersions {
                volumes: volumes.iter().map(|v| (v.to_string(), written)).collect(),
                claims: provisions
                    .iter()
                    .map(|c| ("ns".to_string(), c.to_string(), written))
                    .collect(),
            },
            started: now,
            deadline: now + Duration::from_secs(600),
        }
    }

    fn store(objects: &[(ObjectKind, &str, Value)]) -> RawStore {
        let mut raw = RawStore::default();
        raw.upsert(
            ObjectKind::Pod,
            "ns",
            "p",
            Raw::of_value(&json!({"metadata": {"name": "p"}})),
        );
        for (kind, ns, o) in objects {
            let name = o["metadata"]["name"].as_str().unwrap().to_string();
            raw.upsert(*kind, ns, &name, Raw::of_value(o));
        }
        raw
    }

    fn pv(version: &str, claim_uid: &str) -> Value {
        json!({"metadata": {"name": "pv1", "resourceVersion": version},
            "spec": {"claimRef": {"namespace": "ns", "name": "data", "uid": claim_uid}}})
    }

    fn pvc(name: &str, version: &str, volume: &str, annotations: Value) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": version,
            "annotations": annotations}, "spec": {"volumeName": volume}})
    }

    fn labels() -> StringMap {
        StringMap::new()
    }

    #[test]
    fn a_static_binding_is_ready_once_the_controller_completes_the_claim() {
        let w = wait(&["pv1"], &[], 5);
        let pending = store(&[
            (ObjectKind::PersistentVolume, "", pv("5", "uid-data")),
            (
                ObjectKind::PersistentVolumeClaim,
                "ns",
                pvc("data", "4", "", json!({})),
            ),
        ]);
        assert_eq!(w.check(&pending, Some(&labels())), Progress::Waiting);
        let done = store(&[
            (ObjectKind::PersistentVolume, "", pv("5", "uid-data")),
            (
                ObjectKind::PersistentVolumeClaim,
                "ns",
                pvc(
                    "data",
                    "6",
                    "pv1",
                    json!({"pv.kubernetes.io/bind-completed": "yes"}),
                ),
            ),
        ]);
        assert_eq!(w.check(&done, Some(&labels())), Progress::Ready);
    }

    #[test]
    fn an_older_volume_than_the_write_is_waited_for_and_a_reset_claim_ref_fails() {
        let w = wait(&["pv1"], &[], 5);
        let claim = (
            ObjectKind::PersistentVolumeClaim,
            "ns",
            pvc("data", "4", "", json!({})),
        );
        let stale = store(&[
            (ObjectKind::PersistentVolume, "", pv("3", "")),
            claim.clone(),
        ]);
        assert_eq!(w.check(&stale, Some(&labels())), Progress::Waiting);
        let reset = store(&[(ObjectKind::PersistentVolume, "", pv("7", "")), claim]);
        assert_eq!(
            w.check(&reset, Some(&labels())),
            Progress::Failed("ClaimRef got reset for pv \"pv1\"".into())
        );
    }

    #[test]
    fn a_provisioned_claim_needs_its_selected_node_and_a_bound_volume() {
        let w = wait(&[], &["scratch"], 5);
        let selected = json!({"volume.kubernetes.io/selected-node": "n1"});
        let provisioning = store(&[(
            ObjectKind::PersistentVolumeClaim,
            "ns",
            pvc("scratch", "5", "", selected.clone()),
        )]);
        assert_eq!(w.check(&provisioning, Some(&labels())), Progress::Waiting);
        let dropped = store(&[(
            ObjectKind::PersistentVolumeClaim,
            "ns",
            pvc("scratch", "6", "", json!({})),
        )]);
        assert_eq!(
            w.check(&dropped, Some(&labels())),
            Progress::Failed("provisioning failed for PVC \"scratch\"".into())
        );
        let mut annotations = selected;
        annotations["pv.kubernetes.io/bind-completed"] = json!("yes");
        let bound = store(&[
            (
                ObjectKind::PersistentVolumeClaim,
                "ns",
                pvc("scratch", "7", "pv-new", annotations),
            ),
            (
                ObjectKind::PersistentVolume,
                "",
                json!({"metadata": {"name": "pv-new", "resourceVersion": "7"}}),
            ),
        ]);
        assert_eq!(w.check(&bound, Some(&labels())), Progress::Ready);
    }

    #[test]
    fn a_deleted_pod_or_node_ends_the_wait() {
        let w = wait(&[], &[], 0);
        assert_eq!(
            w.check(&RawStore::default(), Some(&labels())),
            Progress::Failed("pod does not exist any more".into())
        );
        assert!(matches!(
            w.check(&store(&[]), None),
            Progress::Failed(why) if why.contains("failed to get node")
        ));
    }
}
