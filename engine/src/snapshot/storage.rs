//! The storage objects of a snapshot (claims, volumes, classes, CSI objects), by the keys kube's
//! listers look them up with. A cluster without them shares one empty set between snapshots.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::api::{
    ClusterObject, CsiDriver, CsiNode, CsiStorageCapacity, PersistentVolume, PersistentVolumeClaim,
    StorageClass, VolumeAttachment,
};

/// Claims, capacities and attachments by `namespace/name` (the last two cluster-scoped: by
/// name); volumes, classes, CSI nodes and drivers by name. The cache keeps one shared copy and
/// changes it (copy on write) as storage events arrive, so a snapshot takes it as it is.
#[derive(Debug, Default, Clone)]
pub struct StorageObjects {
    pub claims: BTreeMap<String, Arc<PersistentVolumeClaim>>,
    pub volumes: BTreeMap<String, Arc<PersistentVolume>>,
    pub classes: BTreeMap<String, Arc<StorageClass>>,
    pub csi_nodes: BTreeMap<String, Arc<CsiNode>>,
    pub csi_drivers: BTreeMap<String, Arc<CsiDriver>>,
    pub capacities: BTreeMap<String, Arc<CsiStorageCapacity>>,
    pub attachments: BTreeMap<String, Arc<VolumeAttachment>>,
}

impl StorageObjects {
    /// Stores one object under its key; a non-storage object is handed back.
    pub fn upsert(&mut self, object: ClusterObject) -> Result<(), ClusterObject> {
        match object {
            ClusterObject::PersistentVolumeClaim(o) => {
                self.claims.insert(o.metadata.meta.key(), Arc::from(o));
            }
            ClusterObject::PersistentVolume(o) => {
                self.volumes.insert(o.metadata.name.clone(), Arc::from(o));
            }
            ClusterObject::StorageClass(o) => {
                self.classes.insert(o.metadata.name.clone(), Arc::from(o));
            }
            ClusterObject::CsiNode(o) => {
                self.csi_nodes.insert(o.metadata.name.clone(), Arc::from(o));
            }
            ClusterObject::CsiDriver(o) => {
                self.csi_drivers
                    .insert(o.metadata.name.clone(), Arc::from(o));
            }
            ClusterObject::CsiStorageCapacity(o) => {
                self.capacities.insert(o.metadata.key(), Arc::from(o));
            }
            ClusterObject::VolumeAttachment(o) => {
                self.attachments
                    .insert(o.metadata.name.clone(), Arc::from(o));
            }
            other => return Err(other),
        }
        Ok(())
    }

    /// The claim `namespace/name`.
    pub fn claim(&self, namespace: &str, name: &str) -> Option<&Arc<PersistentVolumeClaim>> {
        self.claims.get(&format!("{namespace}/{name}"))
    }
}
