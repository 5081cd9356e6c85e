//! VolumeZone (kube-scheduler 1.36): a pod whose bound volumes carry zone or region labels
//! goes only to nodes in those zones and regions. Claims still waiting for their first
//! consumer are left to VolumeBinding.

use crate::api::{Pod, StringMap};
use crate::framework::{Status, StatusCode};
use crate::snapshot::StorageObjects;

/// kube's reason for a node outside a volume's zones.
pub const REASON: &str = "node(s) had no available volume zone";

const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
const ZONE: &str = "topology.kubernetes.io/zone";
const REGION: &str = "topology.kubernetes.io/region";

/// The topology labels, in the order kube reads them off a volume.
const TOPOLOGY_LABELS: [&str; 4] = [BETA_ZONE, BETA_REGION, ZONE, REGION];

/// One topology label of a pod's volume: the node's value for `key` must be one of `values`.
#[derive(Debug, Clone, PartialEq)]
pub struct VolumeTopology {
    key: &'static str,
    values: Vec<String>,
}

fn unresolvable(reason: String) -> Status {
    Status {
        code: StatusCode::UnschedulableAndUnresolvable,
        reason: reason.into(),
    }
}

/// `LabelZonesToSet`: a multi-zone value is `__`-separated; an empty zone makes the label
/// unreadable (kube then ignores it).
fn zones(value: &str) -> Option<Vec<String>> {
    value
        .split("__")
        .map(|z| {
            let z = z.trim();
            (!z.is_empty()).then(|| z.to_string())
        })
        .collect()
}

/// PreFilter (`getPVbyPod`): the topology labels of the volumes the pod's persistent claims are
/// bound to; `None` (Skip) when there are none. A claim without a name, a missing claim, class
/// or volume, an unbound claim of a class that binds immediately (or of no class) are
/// unresolvable.
pub fn pre_filter(
    storage: &StorageObjects,
    pod: &Pod,
) -> Result<Option<Vec<VolumeTopology>>, Status> {
    let mut topologies = Vec::new();
    let claims = pod
        .spec
        .volumes
        .iter()
        .filter_map(|v| v.persistent_volume_claim.as_ref());
    for source in claims {
        let name = &source.claim_name;
        if name.is_empty() {
            return Err(unresolvable("PersistentVolumeClaim had no name".into()));
        }
        let Some(claim) = storage.claim(&pod.metadata.namespace, name) else {
            return Err(unresolvable(format!(
                "persistentvolumeclaim {name:?} not found"
            )));
        };
        let volume_name = &claim.spec.volume_name;
        if volume_name.is_empty() {
            let class_name = claim.class();
            if class_name.is_empty() {
                return Err(unresolvable(
                    "PersistentVolumeClaim had no pv name and storageClass name".into(),
                ));
            }
            let Some(class) = storage.classes.get(class_name) else {
                return Err(unresolvable(format!(
                    "storageclass.storage.k8s.io {class_name:?} not found"
                )));
            };
            match class.volume_binding_mode.as_deref() {
                None => {
                    return Err(unresolvable(format!(
                        "VolumeBindingMode not set for StorageClass {class_name:?}"
                    )));
                }
                Some("WaitForFirstConsumer") => continue,
                Some(_) => return Err(unresolvable("PersistentVolume had no name".into())),
            }
        }
        let Some(pv) = storage.volumes.get(volume_name) else {
            return Err(unresolvable(format!(
                "persistentvolume {volume_name:?} not found"
            )));
        };
        for key in TOPOLOGY_LABELS {
            if let Some(values) = pv.metadata.labels.get(key).and_then(|v| zones(v)) {
                topologies.push(VolumeTopology { key, values });
            }
        }
    }
    Ok((!topologies.is_empty()).then_some(topologies))
}

/// The GA label a beta topology label stands for.
fn ga_label(key: &str) -> &str {
    match key {
        BETA_ZONE => ZONE,
        BETA_REGION => REGION,
        other => other,
    }
}

/// Filter: a node without any topology label takes the pod; else each volume topology needs
/// the node's value (under the label or its GA name) among the volume's.
pub fn filter(topologies: &[VolumeTopology], labels: &StringMap) -> Result<(), Status> {
    if !TOPOLOGY_LABELS.iter().any(|k| labels.contains_key(k)) {
        return Ok(());
    }
    for t in topologies {
        let value = labels.get(t.key).or_else(|| labels.get(ga_label(t.key)));
        if !value.is_some_and(|v| t.values.contains(v)) {
            return Err(Status {
                code: StatusCode::UnschedulableAndUnresolvable,
                reason: REASON.into(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> StringMap {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_multi_zone_label_splits_on_double_underscores_and_an_empty_zone_voids_it() {
        assert_eq!(zones("a__ b "), Some(vec!["a".into(), "b".into()]));
        assert_eq!(zones("a____b"), None);
    }

    #[test]
    fn a_beta_volume_label_matches_the_node_under_its_ga_name() {
        let t = [VolumeTopology {
            key: BETA_ZONE,
            values: vec!["b".into()],
        }];
        assert!(filter(&t, &labels(&[(ZONE, "b")])).is_ok());
        assert_eq!(
            filter(&t, &labels(&[(ZONE, "a")])).unwrap_err().reason,
            REASON
        );
        assert!(
            filter(&t, &labels(&[("other", "x")])).is_ok(),
            "a node without topology labels takes any pod"
        );
    }
}
