//! `ClusterState`: the one owner of the cluster's mutable picture between cycles.
//!
//! Snapshots are incremental from the first cycle on: `warm_up`, called once the initial lists are
//! in, builds what a first snapshot would build from nothing. Each snapshot then derives only what
//! changed since the one before. The node tables are kept until a node comes or goes, the rows of
//! nodes updated in place refreshed. The pods stay grouped by PodGroup in task order as they change
//! (`PodStore`), which also records the nodes each pod change touches, so a snapshot names the
//! nodes changed since the last one (`Snapshot::changed_since`) while node ids and images held. The
//! last snapshot's job and task tables are kept: a pod that is the very version it was gets its row
//! from them, the others from their memos; when no store changed at all, those tables are the next
//! snapshot's as they are. What a snapshot lets go of is freed between cycles, in `assume`.

use std::collections::BTreeSet;
use std::sync::Arc;

use rayon::prelude::*;
use tephra_engine::api::{
    ClusterObject, HyperNode, Namespace, Node, NodeMetrics, Numatopology, Pod, PodDisruptionBudget,
    PodGroup, PriorityClass, Queue, ResourceQuota,
};
use tephra_engine::arrival::{prepare_node, prepare_pod, prepare_pod_group};
use tephra_engine::snapshot::{
    NodeTables, Released, Snapshot, SnapshotBuilder, StorageObjects, TaskTables, WorkloadSelectors,
};

use crate::node_shards::{NodeShards, Sharding};
use crate::numa_bookings::NumaBookings;
use crate::pod_store::PodStore;
use crate::store::Store;
use crate::{ClusterEvent, ObjectKind};

/// Every watched object, by kind, in the order first seen.
#[derive(Debug, Clone, Default)]
pub struct ClusterState {
    pub(crate) pods: PodStore,
    pub(crate) nodes: Store<Node>,
    pub(crate) pod_groups: Store<PodGroup>,
    pub(crate) queues: Store<Queue>,
    pub(crate) priority_classes: Store<PriorityClass>,
    pub(crate) hyper_nodes: Store<HyperNode>,
    pub(crate) pdbs: Store<PodDisruptionBudget>,
    pub(crate) resource_quotas: Store<ResourceQuota>,
    pub(crate) node_metrics: Store<NodeMetrics>,
    pub(crate) numatopologies: Store<Numatopology>,
    /// NUMA sets the scheduler chose for pods their nodes do not report yet.
    pub(crate) numa_bookings: NumaBookings,
    pub(crate) namespaces: Store<Namespace>,
    /// Claims, volumes, classes and CSI objects: one shared set a snapshot takes as it is.
    pub(crate) storage: Arc<StorageObjects>,
    /// Storage events applied so far (counted with the stores' changes).
    pub(crate) storage_changes: u64,
    /// Services, ReplicationControllers, ReplicaSets and StatefulSets: their selectors, one
    /// shared set a snapshot takes as it is.
    pub(crate) workloads: Arc<WorkloadSelectors>,
    /// Workload events applied so far (counted with the stores' changes).
    pub(crate) workload_changes: u64,
    /// The NodeShards, the sharding flags and the nodes they let this scheduler use.
    pub(crate) node_shards: NodeShards,
    /// The node side of the last snapshot, while no node came or went since.
    node_tables: Option<NodeTables>,
    /// Nodes updated in place (object or metrics) since the last snapshot, whose rows the next
    /// one refreshes in `node_tables` instead of building them all again.
    changed_nodes: BTreeSet<String>,
    /// The job and task side of the last snapshot, whose rows the next one reuses for jobs
    /// whose pods did not change.
    pub(crate) task_tables: Option<TaskTables>,
    /// What the last snapshot let go of from the one before, freed between cycles (`assume`).
    pub(crate) released: Leftovers,
    /// The last snapshot's serial, while the node tables kept their ids and images since: the
    /// next snapshot then says which nodes changed since it (`Snapshot::changed_since`).
    last_serial: Option<u64>,
    /// The store changes counted (`changes`) and the default queue at the last snapshot: while
    /// both hold, the next snapshot is built from the same objects.
    last_snapshot_of: Option<(u64, String)>,
    /// Job and task ids drawn from this seed instead of UID and task order (`shuffle_ids`).
    id_seed: Option<u64>,
}

/// Values a snapshot let go of, kept until the cycle is over. A copy of the cache owes nothing.
#[derive(Debug, Default)]
pub(crate) struct Leftovers(pub(crate) Vec<Released>);

impl Clone for Leftovers {
    fn clone(&self) -> Self {
        Leftovers::default()
    }
}

impl Leftovers {
    /// Frees the values on the thread pool, so neither the caller nor the next cycle waits.
    pub(crate) fn free(&mut self) {
        let values = std::mem::take(&mut self.0);
        if !values.is_empty() {
            rayon::spawn(move || drop(values));
        }
    }
}

/// A stored object whose derived values are prepared on arrival.
enum Arrived {
    Pod(Arc<Pod>),
    Node(Arc<Node>),
    PodGroup(Arc<PodGroup>),
}

/// Prepares `pods` (new versions the cache stored) in parallel; see `arrival::prepare_pod`.
pub(crate) fn prepare_pods(pods: &[impl AsRef<Pod> + Sync]) {
    pods.par_iter().for_each(|p| prepare_pod(p.as_ref()));
}

/// The store key of an object: `namespace/name` (`/name` when cluster-scoped).
pub(crate) fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

impl ClusterState {
    /// An empty cluster.
    pub fn new() -> Self {
        Self::default()
    }

    /// A cluster holding `objects`, applied in order as upserts (pods, nodes and PodGroups
    /// prepared in parallel).
    pub fn from_objects(objects: impl IntoIterator<Item = ClusterObject>) -> Self {
        let mut state = Self::new();
        for o in objects {
            state.upsert(o);
        }
        state.prepare_all();
        state
    }

    /// Has every later snapshot assign job and task ids in an order drawn from `seed`
    /// (`SnapshotBuilder::ids_shuffled`): the checking mode's copy, so that its session
    /// from scratch also tells a decision that depends on id assignment.
    pub fn shuffle_ids(&mut self, seed: u64) {
        self.id_seed = Some(seed);
    }

    /// The same objects with nothing derived or carried: every pod, node and PodGroup a fresh
    /// copy (empty memos), pods grouped afresh, no tables kept from earlier snapshots. What a
    /// scheduler restarted now would hold once its lists are in; the checking mode's reference
    /// (`cycle::CycleDriver::checking`).
    pub fn from_scratch(&self) -> ClusterState {
        let state = ClusterState {
            pods: self.pods.fresh_copies(),
            nodes: self.nodes.fresh_copies(),
            pod_groups: self.pod_groups.fresh_copies(),
            queues: self.queues.clone(),
            priority_classes: self.priority_classes.clone(),
            hyper_nodes: self.hyper_nodes.clone(),
            pdbs: self.pdbs.clone(),
            resource_quotas: self.resource_quotas.clone(),
            node_metrics: self.node_metrics.clone(),
            numatopologies: self.numatopologies.clone(),
            numa_bookings: self.numa_bookings.clone(),
            namespaces: self.namespaces.clone(),
            storage: self.storage.clone(),
            storage_changes: self.storage_changes,
            workloads: self.workloads.clone(),
            workload_changes: self.workload_changes,
            node_shards: self.node_shards.clone(),
            node_tables: None,
            changed_nodes: BTreeSet::new(),
            task_tables: None,
            released: Leftovers::default(),
            last_serial: None,
            last_snapshot_of: None,
            id_seed: None,
        };
        state.prepare_all();
        state
    }

    /// Prepares every pod, node and PodGroup in parallel, as each would be on arrival.
    fn prepare_all(&self) {
        let pods: Vec<&Arc<Pod>> = self.pods.iter().collect();
        prepare_pods(&pods);
        let nodes: Vec<&Arc<Node>> = self.nodes.iter().collect();
        nodes.par_iter().for_each(|n| prepare_node(n));
        let pod_groups: Vec<&Arc<PodGroup>> = self.pod_groups.iter().collect();
        pod_groups.par_iter().for_each(|pg| prepare_pod_group(pg));
    }

    /// Sets the scheduler's sharding flags: from the next snapshot on, a cycle under hard or
    /// soft sharding knows the nodes its NodeShard lets it use.
    pub fn set_sharding(&mut self, sharding: Sharding) {
        self.node_shards.set_sharding(sharding);
    }

    /// The scheduler's NodeShard with the status it should now report, when the NodeShards
    /// changed since the last call and the shard holds another status; `None` otherwise.
    pub fn node_shard_status_update(&mut self) -> Option<tephra_engine::api::NodeShard> {
        self.node_shards.status_update()
    }

    /// Applies one watch event.
    pub fn apply_event(&mut self, event: ClusterEvent) {
        if event.kind().invalidates_carryover() {
            // Built afresh, the node tables carry no "changed since" list, and with none the
            // next session re-derives every node.
            self.node_tables = None;
            self.changed_nodes.clear();
        } else if event.kind().shapes_node_tables() {
            match self.node_updated_in_place(&event) {
                Some(name) => {
                    self.changed_nodes.insert(name);
                }
                None => {
                    self.node_tables = None;
                    self.changed_nodes.clear();
                }
            }
        }
        match event {
            ClusterEvent::Upsert(object) => match self.upsert(object) {
                Some(Arrived::Pod(pod)) => prepare_pod(&pod),
                Some(Arrived::Node(node)) => prepare_node(&node),
                Some(Arrived::PodGroup(pg)) => prepare_pod_group(&pg),
                None => {}
            },
            ClusterEvent::Delete {
                kind,
                namespace,
                name,
            } => {
                let k = key(&namespace, &name);
                match kind {
                    ObjectKind::Pod => {
                        self.numa_bookings.forget_pod(&namespace, &name);
                        self.pods.remove(&k)
                    }
                    ObjectKind::Node => self.nodes.remove(&k),
                    ObjectKind::PodGroup => self.pod_groups.remove(&k),
                    ObjectKind::Queue => self.queues.remove(&k),
                    ObjectKind::PriorityClass => self.priority_classes.remove(&k),
                    ObjectKind::HyperNode => self.hyper_nodes.remove(&k),
                    ObjectKind::PodDisruptionBudget => self.pdbs.remove(&k),
                    ObjectKind::ResourceQuota => self.resource_quotas.remove(&k),
                    ObjectKind::NodeMetrics => self.node_metrics.remove(&k),
                    ObjectKind::Numatopology => self.numatopologies.remove(&k),
                    ObjectKind::Namespace => self.namespaces.remove(&k),
                    ObjectKind::Service
                    | ObjectKind::ReplicationController
                    | ObjectKind::ReplicaSet
                    | ObjectKind::StatefulSet => self.remove_workload(kind, &namespace, &name),
                    ObjectKind::NodeShard => self.node_shards.remove(&name),
                    storage => self.remove_storage(storage, &k, &name),
                };
            }
        }
    }

    /// The node an event updates without adding or removing one (an update of a known node, or
    /// metrics of a known node); `None` for any other event that shapes the node tables.
    fn node_updated_in_place(&self, event: &ClusterEvent) -> Option<String> {
        let name = match event {
            ClusterEvent::Upsert(ClusterObject::Node(n)) => &n.metadata.name,
            ClusterEvent::Upsert(ClusterObject::NodeMetrics(m)) => &m.metadata.name,
            _ => return None,
        };
        self.nodes.get(&key("", name)).map(|_| name.clone())
    }

    /// Stores a created or replaced object; returns it when it is a pod, a node or a PodGroup
    /// (objects whose derived values are prepared as they arrive).
    fn upsert(&mut self, object: ClusterObject) -> Option<Arrived> {
        let meta = crate::meta_of(&object);
        let k = key(&meta.namespace, &meta.name);
        match object {
            ClusterObject::Pod(o) => return Some(Arrived::Pod(self.pods.upsert(k, *o))),
            ClusterObject::Node(o) => return Some(Arrived::Node(self.nodes.upsert(k, *o).clone())),
            ClusterObject::PodGroup(o) => {
                return Some(Arrived::PodGroup(self.pod_groups.upsert(k, *o).clone()));
            }
            ClusterObject::Queue(o) => _ = self.queues.upsert(k, *o),
            ClusterObject::PriorityClass(o) => _ = self.priority_classes.upsert(k, *o),
            ClusterObject::HyperNode(o) => _ = self.hyper_nodes.upsert(k, *o),
            ClusterObject::PodDisruptionBudget(o) => _ = self.pdbs.upsert(k, *o),
            ClusterObject::ResourceQuota(o) => _ = self.resource_quotas.upsert(k, *o),
            ClusterObject::NodeMetrics(o) => _ = self.node_metrics.upsert(k, *o),
            ClusterObject::Numatopology(o) => _ = self.numatopologies.upsert(k, *o),
            ClusterObject::Namespace(o) => _ = self.namespaces.upsert(k, *o),
            ClusterObject::NodeShard(o) => self.node_shards.upsert(*o),
            workload @ (ClusterObject::Service(_)
            | ClusterObject::ReplicationController(_)
            | ClusterObject::ReplicaSet(_)
            | ClusterObject::StatefulSet(_)) => {
                self.workload_changes += 1;
                _ = Arc::make_mut(&mut self.workloads).upsert(workload);
            }
            storage => {
                self.storage_changes += 1;
                // Every other kind is matched above.
                _ = Arc::make_mut(&mut self.storage).upsert(storage);
            }
        }
        None
    }

    /// Removes a Service or workload; false when there was none.
    fn remove_workload(&mut self, kind: ObjectKind, namespace: &str, name: &str) -> bool {
        let w = Arc::make_mut(&mut self.workloads);
        let key = key(namespace, name);
        let removed = match kind {
            ObjectKind::Service => w.remove_service(namespace, name),
            ObjectKind::ReplicationController => w.replication_controllers.remove(&key).is_some(),
            ObjectKind::ReplicaSet => w.replica_sets.remove(&key).is_some(),
            ObjectKind::StatefulSet => w.stateful_sets.remove(&key).is_some(),
            _ => false,
        };
        self.workload_changes += u64::from(removed);
        removed
    }

    /// Removes a storage object (`key` is `namespace/name`); false when there was none.
    fn remove_storage(&mut self, kind: ObjectKind, key: &str, name: &str) -> bool {
        let s = Arc::make_mut(&mut self.storage);
        let removed = match kind {
            ObjectKind::PersistentVolumeClaim => s.claims.remove(key).is_some(),
            ObjectKind::CsiStorageCapacity => s.capacities.remove(key).is_some(),
            ObjectKind::PersistentVolume => s.volumes.remove(name).is_some(),
            ObjectKind::StorageClass => s.classes.remove(name).is_some(),
            ObjectKind::CsiNode => s.csi_nodes.remove(name).is_some(),
            ObjectKind::CsiDriver => s.csi_drivers.remove(name).is_some(),
            ObjectKind::VolumeAttachment => s.attachments.remove(name).is_some(),
            _ => false,
        };
        self.storage_changes += u64::from(removed);
        removed
    }

    /// Builds what a first snapshot would build from nothing (the node tables, every job's and
    /// task's rows), so that the first cycle after the initial lists, like every later one,
    /// derives only what changed since. Called once the initial lists are in, before the first
    /// cycle: Volcano's cache likewise builds its nodes and jobs as objects arrive, and its
    /// cycle only copies them. A second snapshot, built from the first as every cycle's is
    /// from the one before, goes to `use_snapshot` (the scheduler opens a session on it): the
    /// first cycle then builds its tables in the memory the first snapshot's took, as every
    /// later cycle does in the memory of the one before, not in fresh pages the kernel must
    /// zero first. What the snapshots let go of is freed before the first cycle.
    pub fn warm_up(&mut self, default_queue: &str, use_snapshot: impl FnOnce(Snapshot)) {
        drop(self.snapshot(default_queue));
        self.released.free();
        use_snapshot(self.snapshot(default_queue));
        self.released.free();
    }

    /// The cycle's snapshot; PodGroups without a queue go to `default_queue`. Only what changed
    /// since the last snapshot is derived again: the node side when a node came or went (the
    /// rows of nodes updated in place are refreshed), and the rows of changed pods (the others
    /// come from the pods' memos, or from the last snapshot when their whole job is unchanged).
    /// The pods are lent grouped by PodGroup in task order, as the pod store keeps them.
    pub fn snapshot(&mut self, default_queue: &str) -> Snapshot {
        let mut earlier = self.task_tables.take();
        let changed_nodes = std::mem::take(&mut self.changed_nodes);
        let kept = self.refresh_node_tables(&changed_nodes, earlier.as_mut());
        let mut touched = self.pods.take_touched_nodes();
        let mut b = SnapshotBuilder::new(default_queue);
        if let Some(tables) = &self.node_tables {
            b.node_tables(tables.clone());
        }
        if let Some(since) = self.last_serial.filter(|_| kept) {
            touched.extend(changed_nodes);
            b.nodes_changed_since(since, touched);
        }
        let changes = self.changes();
        let unchanged = self.last_snapshot_of.as_ref() == Some(&(changes, default_queue.into()));
        if let Some(tables) = earlier {
            if unchanged {
                b.unchanged_since(tables);
            } else {
                b.earlier_tasks(tables);
            }
        }
        for o in self.priority_classes.iter() {
            b.priority_class(o.clone());
        }
        for o in self.queues.iter() {
            b.queue(o.clone());
        }
        for o in self.nodes.iter() {
            b.node_ref(o);
        }
        for o in self.hyper_nodes.iter() {
            b.hyper_node(o.clone());
        }
        for o in self.pod_groups.iter() {
            b.pod_group_ref(o);
        }
        b.pods_by_group(self.pods.by_group());
        for o in self.pdbs.iter() {
            b.pdb(o.clone());
        }
        for o in self.resource_quotas.iter() {
            b.resource_quota(o.clone());
        }
        for o in self.node_metrics.iter() {
            b.node_metrics(o.clone());
        }
        for o in self.numatopologies.iter() {
            if let Some(held) = self.numa_bookings.held(o) {
                b.numa_held(&o.metadata.name, held);
            }
            b.numatopology(o.clone());
        }
        for o in self.namespaces.iter() {
            b.namespace(o);
        }
        b.storage(self.storage.clone());
        b.workload_selectors(self.workloads.clone());
        if let Some(seed) = self.id_seed {
            b.ids_shuffled(seed);
        }
        // Left over from a snapshot whose cycle was not assumed.
        self.released.free();
        let mut snap = b.build();
        snap.shard = self.node_shards.nodes_in_shard(&snap.nodes);
        self.released.0.push(b.take_released());
        self.node_tables = Some(snap.node_tables());
        self.task_tables = Some(snap.task_tables());
        self.last_serial = Some(snap.serial);
        self.last_snapshot_of = Some((changes, default_queue.into()));
        snap
    }

    /// Changes made to the stores so far; equal counts, the same objects.
    fn changes(&self) -> u64 {
        [
            self.pods.changes(),
            self.nodes.changes(),
            self.pod_groups.changes(),
            self.queues.changes(),
            self.priority_classes.changes(),
            self.hyper_nodes.changes(),
            self.pdbs.changes(),
            self.resource_quotas.changes(),
            self.node_metrics.changes(),
            self.numatopologies.changes(),
            self.namespaces.changes(),
            self.storage_changes,
            self.workload_changes,
        ]
        .iter()
        .sum()
    }

    /// Refreshes the rows of the nodes updated since the last snapshot (`changed`) in its node
    /// tables, or drops the tables (to be built afresh) when that cannot be done in place. The
    /// last task tables refer to the same node table; the refresh keeps every node id, so they
    /// let go of it for the refresh and take it back. True when the tables are kept with every
    /// node id and no node's images changed.
    fn refresh_node_tables(
        &mut self,
        changed: &BTreeSet<String>,
        earlier: Option<&mut TaskTables>,
    ) -> bool {
        let Some(tables) = self.node_tables.as_mut() else {
            return false;
        };
        if changed.is_empty() {
            return true;
        }
        let objects: Vec<(&Node, Option<&NodeMetrics>)> = changed
            .iter()
            .filter_map(|name| {
                let node = self.nodes.get(&key("", name))?;
                Some((&**node, self.node_metrics.get(&key("", name)).map(|m| &**m)))
            })
            .collect();
        let mut held = earlier.filter(|e| Arc::ptr_eq(&e.nodes, &tables.nodes));
        if let Some(e) = held.as_mut() {
            e.nodes = Arc::default();
        }
        let refreshed = (objects.len() == changed.len())
            .then(|| tables.refresh(&objects))
            .flatten();
        if let Some(e) = held {
            e.nodes = tables.nodes.clone();
        }
        if refreshed.is_none() {
            self.node_tables = None;
        }
        refreshed.is_some_and(|r| !r.images_changed)
    }

    /// Drops the last snapshot's task tables when `replaced` pods, more than half of their rows,
    /// are about to get new versions: the tables keep every pod version they list alive, so they
    /// would double those pods' memory until the next snapshot, which could reuse few rows anyway.
    pub(crate) fn forget_task_tables_if_mostly_replaced(&mut self, replaced: usize) {
        let mostly = |t: &TaskTables| replaced * 2 > t.tasks.len();
        if let Some(tables) = self.task_tables.take_if(|t| mostly(t)) {
            rayon::spawn(move || drop(tables));
        }
    }

    /// The pod `namespace/name`.
    pub fn pod(&self, namespace: &str, name: &str) -> Option<&Pod> {
        self.pods.get(&key(namespace, name)).map(|p| p.as_ref())
    }

    /// Every pod, in the order first seen.
    pub fn pods(&self) -> impl Iterator<Item = &Pod> {
        self.pods.iter().map(|p| p.as_ref())
    }

    /// The PodGroup `namespace/name`.
    pub fn pod_group(&self, namespace: &str, name: &str) -> Option<&PodGroup> {
        self.pod_groups
            .get(&key(namespace, name))
            .map(|p| p.as_ref())
    }

    /// The queue `name`.
    pub fn queue(&self, name: &str) -> Option<&Queue> {
        self.queues.get(&key("", name)).map(|q| q.as_ref())
    }

    /// Every PodGroup, in the order first seen.
    pub fn pod_groups(&self) -> impl Iterator<Item = &PodGroup> {
        self.pod_groups.iter().map(|p| p.as_ref())
    }

    /// Every queue, in the order first seen.
    pub fn queues(&self) -> impl Iterator<Item = &Queue> {
        self.queues.iter().map(|q| q.as_ref())
    }

    /// The node `name`.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.get(&key("", name)).map(|n| n.as_ref())
    }

    /// Every node, in the order first seen.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().map(|n| n.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::api::ObjectMeta;

    fn node(name: &str) -> ClusterObject {
        let metadata = ObjectMeta {
            name: name.into(),
            ..Default::default()
        };
        ClusterObject::Node(Box::new(Node {
            metadata,
            ..Default::default()
        }))
    }

    fn pod(ns: &str, name: &str, node: &str) -> ClusterObject {
        let mut p = Pod::default();
        p.metadata.namespace = ns.into();
        p.metadata.name = name.into();
        p.spec.node_name = node.into();
        ClusterObject::Pod(Box::new(p))
    }

    /// The queue of PodGroups that name none.
    fn default_queue() -> ClusterObject {
        let mut queue = tephra_engine::api::Queue::default();
        queue.metadata.name = "default".into();
        ClusterObject::Queue(Box::new(queue))
    }

    /// PodGroup `ns/name`.
    fn pod_group(name: &str) -> ClusterObject {
        let mut pg = tephra_engine::api::PodGroup::default();
        pg.metadata.namespace = "ns".into();
        pg.metadata.name = name.into();
        ClusterObject::PodGroup(Box::new(pg))
    }

    /// Pod `ns/name` with `uid`, naming PodGroup `group` (none when empty).
    fn grouped(name: &str, uid: &str, group: &str) -> ClusterObject {
        let ClusterObject::Pod(mut p) = pod("ns", name, "") else {
            unreachable!()
        };
        p.metadata.uid = uid.into();
        if !group.is_empty() {
            let key = tephra_engine::snapshot::GROUP_NAME_ANNOTATION.to_string();
            p.metadata.annotations.insert(key, group.into());
        }
        ClusterObject::Pod(p)
    }

    #[test]
    fn snapshot_keeps_node_first_seen_order_across_updates() {
        let mut s = ClusterState::from_objects([node("b"), node("a"), node("c")]);
        s.apply_event(ClusterEvent::Upsert(node("b")));
        let snap = s.snapshot("default");
        assert_eq!(snap.nodes.name, ["b", "a", "c"]);
    }

    #[test]
    fn a_namespace_change_leaves_the_next_snapshot_with_no_changed_since_list() {
        let mut s = ClusterState::from_objects([node("a")]);
        s.snapshot("default");
        assert!(s.snapshot("default").changed_since.is_some());
        let mut ns = tephra_engine::api::Namespace::default();
        ns.metadata.name = "team-a".into();
        ns.metadata.labels.insert("team".into(), "a".into());
        s.apply_event(ClusterEvent::Upsert(ClusterObject::Namespace(Box::new(ns))));
        let snap = s.snapshot("default");
        assert!(
            snap.changed_since.is_none(),
            "carried values must not outlive a namespace's labels"
        );
        assert_eq!(snap.namespaces.labels("team-a").get("team").unwrap(), "a");
        assert!(s.snapshot("default").changed_since.is_some());
    }

    #[test]
    fn services_and_workloads_reach_the_snapshot_and_leave_it_when_deleted() {
        let mut s = ClusterState::from_objects([node("a")]);
        let mut svc = tephra_engine::api::Service::default();
        svc.metadata.namespace = "ns".into();
        svc.metadata.name = "web".into();
        svc.spec.selector = Some([("app".to_string(), "web".to_string())].into());
        s.apply_event(ClusterEvent::Upsert(ClusterObject::Service(Box::new(svc))));
        let mut rs = tephra_engine::api::ReplicaSet::default();
        rs.metadata.namespace = "ns".into();
        rs.metadata.name = "web-1".into();
        s.apply_event(ClusterEvent::Upsert(ClusterObject::ReplicaSet(Box::new(
            rs,
        ))));
        let snap = s.snapshot("default");
        assert!(snap.workload_selectors.services["ns"].contains_key("web"));
        assert!(
            snap.workload_selectors
                .replica_sets
                .contains_key("ns/web-1")
        );
        for kind in [ObjectKind::Service, ObjectKind::ReplicaSet] {
            let (namespace, name) = match kind {
                ObjectKind::Service => ("ns", "web"),
                _ => ("ns", "web-1"),
            };
            s.apply_event(ClusterEvent::Delete {
                kind,
                namespace: namespace.into(),
                name: name.into(),
            });
        }
        assert!(s.snapshot("default").workload_selectors.is_empty());
    }

    #[test]
    fn a_changed_node_gets_a_new_row_and_the_others_keep_theirs() {
        let mut s = ClusterState::from_objects([node("a"), node("b")]);
        let first = s.snapshot("default");
        let mut bigger = Node::default();
        bigger.metadata.name = "b".into();
        bigger.status.allocatable.insert(
            "cpu".into(),
            tephra_engine::model::Quantity::parse("8").unwrap(),
        );
        s.apply_event(ClusterEvent::Upsert(ClusterObject::Node(Box::new(bigger))));
        let second = s.snapshot("default");
        assert_eq!(first.nodes.allocatable[1].milli_cpu, 0.0);
        assert_eq!(second.nodes.allocatable[1].milli_cpu, 8000.0);
        assert_eq!(second.nodes.allocatable[0], first.nodes.allocatable[0]);
    }

    #[test]
    fn a_snapshot_of_an_unchanged_cache_shares_the_last_ones_tables_and_any_change_rebuilds_them() {
        let mut s = ClusterState::from_objects([
            default_queue(),
            node("n1"),
            pod_group("g"),
            grouped("a", "u1", "g"),
        ]);
        let shared = |a: &Snapshot, b: &Snapshot| {
            Arc::ptr_eq(&a.tasks, &b.tasks)
                && Arc::ptr_eq(&a.jobs, &b.jobs)
                && Arc::ptr_eq(&a.sub_jobs, &b.sub_jobs)
        };
        let first = s.snapshot("default");
        let second = s.snapshot("default");
        assert!(shared(&first, &second));
        assert_ne!(first.serial, second.serial);
        assert_eq!(
            second.changed_since.as_ref().map(|c| c.nodes.len()),
            Some(0)
        );
        let other_default = s.snapshot("other");
        assert!(!shared(&second, &other_default));
        s.apply_event(ClusterEvent::Upsert(grouped("b", "u2", "g")));
        let changed = s.snapshot("other");
        assert!(!shared(&other_default, &changed));
        assert_eq!(changed.tasks.len(), 2);
        let mut copy = s.clone();
        s.apply_event(ClusterEvent::Delete {
            kind: ObjectKind::Pod,
            namespace: "ns".into(),
            name: "b".into(),
        });
        assert_eq!(s.snapshot("other").tasks.len(), 1);
        assert_eq!(copy.snapshot("other").tasks.len(), 2);
    }

    #[test]
    fn snapshot_task_order_is_the_one_loose_pods_get() {
        let objects = vec![
            default_queue(),
            pod_group("g2"),
            pod_group("g1"),
            grouped("a", "u9", "g1"),
            grouped("b", "u1", "no-such-group"),
            grouped("c", "u5", "g2"),
            grouped("d", "u2", "g1"),
            grouped("e", "", ""),
            grouped("f", "u3", "g2"),
        ];
        let mut cache = ClusterState::from_objects(objects.clone());
        // An update moves a pod to another group.
        cache.apply_event(ClusterEvent::Upsert(grouped("a", "u9", "g2")));
        let snap = cache.snapshot("default");
        let mut loose = SnapshotBuilder::new("default");
        for o in objects.into_iter().chain([grouped("a", "u9", "g2")]) {
            match o {
                ClusterObject::Pod(p) if p.metadata.name == "a" && group_of(&p) == "g1" => {}
                ClusterObject::Pod(p) => {
                    loose.pod(Arc::new(*p));
                }
                ClusterObject::PodGroup(pg) => {
                    loose.pod_group(Arc::new(*pg));
                }
                ClusterObject::Queue(q) => {
                    loose.queue(Arc::new(*q));
                }
                _ => {}
            }
        }
        let expected = loose.build();
        let names =
            |s: &Snapshot| -> Vec<String> { s.tasks.name.iter().map(|n| n.to_string()).collect() };
        assert_eq!(names(&snap), ["d", "f", "c", "a", "e", "b"]);
        assert_eq!(names(&snap), names(&expected));
        assert_eq!(snap.tasks.job, expected.tasks.job);
    }

    /// The task table of a snapshot as comparable rows.
    fn task_rows(s: &Snapshot) -> Vec<String> {
        let t = &s.tasks;
        (0..t.len())
            .map(|i| {
                let node = t.node[i].map(|n| s.nodes.name[n.idx()].clone());
                let job = t.job[i].map(|j| s.jobs.uid[j.idx()].clone());
                format!(
                    "{} {} {} {:?} {:?} {:?} {:?}",
                    t.uid[i], t.namespace[i], t.name[i], t.resreq[i], t.status[i], node, job
                )
            })
            .collect()
    }

    #[test]
    fn a_snapshot_reusing_the_last_ones_rows_equals_one_built_afresh() {
        use tephra_engine::model::Quantity;
        let member = |name: &str, group: &str, node: &str, cpu: &str| {
            let ClusterObject::Pod(mut p) = grouped(name, &format!("uid-{name}"), group) else {
                unreachable!()
            };
            p.spec.node_name = node.into();
            let mut c = tephra_engine::api::Container::default();
            let cpu = Quantity::parse(cpu).unwrap();
            c.resources.requests.insert("cpu".into(), cpu);
            p.spec.containers.push(c);
            ClusterObject::Pod(p)
        };
        let mut cache = ClusterState::from_objects([
            default_queue(),
            node("n1"),
            node("n2"),
            pod_group("a"),
            pod_group("b"),
            pod_group("c"),
            member("a1", "a", "n1", "1"),
            member("a2", "a", "n2", "1"),
            member("b1", "b", "n2", "2"),
            member("c1", "c", "", "3"),
        ]);
        let first = cache.snapshot("default");
        // Job b changes, job c is gone, job d arrives, job a's PodGroup is a new version with
        // the same pods (its UID is equal text, not the same string), and a node comes first in
        // the table order of a fresh cache (node ids move).
        cache.apply_event(ClusterEvent::Upsert(member("b1", "b", "n2", "5")));
        cache.apply_event(ClusterEvent::Upsert(pod_group("a")));
        cache.apply_event(ClusterEvent::Delete {
            kind: ObjectKind::Pod,
            namespace: "ns".into(),
            name: "c1".into(),
        });
        cache.apply_event(ClusterEvent::Upsert(pod_group("d")));
        cache.apply_event(ClusterEvent::Upsert(member("d1", "d", "n1", "4")));
        cache.apply_event(ClusterEvent::Delete {
            kind: ObjectKind::Node,
            namespace: String::new(),
            name: "n1".into(),
        });
        cache.apply_event(ClusterEvent::Upsert(node("n1")));
        let afresh = |cache: &ClusterState| {
            let mut copy = cache.clone();
            copy.task_tables = None;
            task_rows(&copy.snapshot("default"))
        };
        // The first snapshot is still held: its rows are copied, and their node ids mapped.
        let expected = afresh(&cache);
        let shared = cache.snapshot("default");
        assert_eq!(task_rows(&shared), expected);
        assert_eq!(shared.nodes.name, ["n2", "n1"]);
        assert_eq!(expected.len(), 4);
        assert!(
            expected
                .iter()
                .any(|r| r.contains("uid-b1") && r.contains("5000"))
        );
        // No snapshot is held any more: the rows of unchanged jobs are moved out.
        drop((first, shared));
        cache.apply_event(ClusterEvent::Upsert(member("a2", "a", "n2", "6")));
        let expected = afresh(&cache);
        assert_eq!(task_rows(&cache.snapshot("default")), expected);
        assert!(
            expected
                .iter()
                .any(|r| r.contains("uid-a2") && r.contains("6000"))
        );
    }

    #[test]
    fn a_warmed_up_cache_snapshots_what_a_cold_one_does() {
        let objects = vec![
            default_queue(),
            node("n1"),
            node("n2"),
            pod_group("g1"),
            pod_group("g2"),
            grouped("a", "u1", "g1"),
            grouped("b", "u2", "g1"),
            grouped("c", "u3", "g2"),
            grouped("d", "u4", "no-such-group"),
        ];
        let mut cold = ClusterState::from_objects(objects.clone());
        let mut warm = ClusterState::from_objects(objects);
        warm.warm_up("default", drop);
        assert!(warm.node_tables.is_some() && warm.task_tables.is_some());
        let (cold, warm) = (cold.snapshot("default"), warm.snapshot("default"));
        assert_eq!(task_rows(&warm), task_rows(&cold));
        assert_eq!(warm.jobs.uid, cold.jobs.uid);
        assert_eq!(warm.nodes.name, cold.nodes.name);
    }

    fn group_of(p: &Pod) -> &str {
        tephra_engine::snapshot::group_name(p)
    }

    #[test]
    fn task_tables_are_dropped_when_most_of_their_pods_are_about_to_change() {
        let mut s = ClusterState::from_objects([pod("ns", "a", ""), pod("ns", "b", "")]);
        s.apply_event(ClusterEvent::Upsert(pod("ns", "c", "")));
        let snap = s.snapshot("default");
        assert_eq!(snap.tasks.len(), 3);
        s.forget_task_tables_if_mostly_replaced(1);
        assert!(s.task_tables.is_some(), "one pod in three");
        s.forget_task_tables_if_mostly_replaced(2);
        assert!(s.task_tables.is_none(), "two pods in three");
    }

    /// A snapshot's node side as comparable text (the name index aside, whose order is a hash's).
    fn node_side(s: &Snapshot) -> String {
        let n = &s.nodes;
        let zone = |v: &str| {
            let set = s.labels.with_value("zone", v);
            let ids: Vec<bool> = n
                .ids()
                .map(|id| set.is_some_and(|z| z.contains(id)))
                .collect();
            format!("{ids:?}")
        };
        let repels: Vec<bool> = n.ids().map(|id| s.taints.repels(id)).collect();
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {} {:?}",
            n.name,
            n.labels,
            n.taints,
            n.unschedulable,
            n.allocatable,
            n.capacity,
            n.images,
            n.usage,
            s.total,
            zone("a"),
            zone("b"),
            repels
        )
    }

    #[test]
    fn nodes_updated_in_place_are_refreshed_to_what_a_fresh_build_gives() {
        use tephra_engine::api::{NodeMetrics, Taint};
        use tephra_engine::model::Quantity;
        let sized = |name: &str, zone: &str, cpu: &str, tainted: bool| {
            let ClusterObject::Node(mut n) = node(name) else {
                unreachable!()
            };
            n.metadata.labels.insert("zone".into(), zone.into());
            let cpu = Quantity::parse(cpu).unwrap();
            n.status.allocatable.insert("cpu".into(), cpu);
            if tainted {
                n.spec.taints.push(Taint {
                    key: "k".into(),
                    effect: "NoSchedule".into(),
                    ..Default::default()
                });
            }
            ClusterObject::Node(n)
        };
        let metrics = |name: &str, cpu: &str| {
            let mut m = NodeMetrics::default();
            m.metadata.name = name.into();
            m.usage.insert("cpu".into(), Quantity::parse(cpu).unwrap());
            ClusterObject::NodeMetrics(Box::new(m))
        };
        let mut cache = ClusterState::from_objects([
            sized("n1", "a", "4", false),
            sized("n2", "a", "8", false),
            metrics("n2", "2"),
        ]);
        let first = cache.snapshot("default");
        let table = Arc::as_ptr(&first.nodes);
        drop(first);
        let fresh = |cache: &ClusterState| {
            let mut copy = cache.clone();
            copy.node_tables = None;
            copy.changed_nodes.clear();
            node_side(&copy.snapshot("default"))
        };
        // Resources, labels, taints and metrics change; no node comes or goes.
        cache.apply_event(ClusterEvent::Upsert(sized("n2", "b", "16", true)));
        cache.apply_event(ClusterEvent::Upsert(metrics("n1", "1")));
        let expected = fresh(&cache);
        let refreshed = cache.snapshot("default");
        assert_eq!(node_side(&refreshed), expected);
        assert_eq!(Arc::as_ptr(&refreshed.nodes), table, "refreshed in place");
        // While a snapshot holds the table, it is built afresh instead.
        cache.apply_event(ClusterEvent::Upsert(sized("n1", "b", "2", false)));
        let expected = fresh(&cache);
        let rebuilt = cache.snapshot("default");
        assert_eq!(node_side(&rebuilt), expected);
        assert_ne!(Arc::as_ptr(&rebuilt.nodes), Arc::as_ptr(&refreshed.nodes));
    }

    #[test]
    fn a_snapshot_names_the_nodes_changed_since_the_last_one_while_node_ids_and_images_hold() {
        use tephra_engine::api::ContainerImage;
        let changed = |cache: &mut ClusterState, since: u64| {
            let snap = cache.snapshot("default");
            let names = snap.changed_since.as_ref().map(|c| {
                assert_eq!(c.since, since, "relative to the snapshot before");
                let names = c.nodes.iter().map(|n| snap.nodes.name[n.idx()].clone());
                names.collect::<Vec<_>>()
            });
            (snap.serial, names)
        };
        let mut cache = ClusterState::from_objects([
            node("n1"),
            node("n2"),
            node("n3"),
            pod("ns", "a", "n1"),
            pod("ns", "b", "n2"),
        ]);
        let (first, none) = changed(&mut cache, 0);
        assert_eq!(none, None, "nothing to compare the first snapshot with");
        // A pod moves from n1 to n3; a pending pod arrives; n2's object is updated in place.
        cache.apply_event(ClusterEvent::Upsert(pod("ns", "a", "n3")));
        cache.apply_event(ClusterEvent::Upsert(pod("ns", "c", "")));
        cache.apply_event(ClusterEvent::Upsert(node("n2")));
        let (second, names) = changed(&mut cache, first);
        assert_eq!(names.unwrap(), ["n1", "n2", "n3"]);
        let (third, names) = changed(&mut cache, second);
        assert_eq!(names.unwrap(), Vec::<String>::new(), "nothing changed");
        // A pod leaves n2.
        cache.apply_event(ClusterEvent::Delete {
            kind: ObjectKind::Pod,
            namespace: "ns".into(),
            name: "b".into(),
        });
        let (fourth, names) = changed(&mut cache, third);
        assert_eq!(names.unwrap(), ["n2"]);
        // An image on one node changes every node's image locality: no list.
        let ClusterObject::Node(mut imaged) = node("n1") else {
            unreachable!()
        };
        imaged.status.images.push(ContainerImage {
            names: vec!["img:1".into()],
            size_bytes: 1 << 30,
        });
        cache.apply_event(ClusterEvent::Upsert(ClusterObject::Node(imaged)));
        let (fifth, names) = changed(&mut cache, fourth);
        assert_eq!(names, None);
        // A node that comes renumbers the nodes: no list either.
        cache.apply_event(ClusterEvent::Upsert(node("n0")));
        assert_eq!(changed(&mut cache, fifth).1, None);
    }

    #[test]
    fn upsert_replaces_by_namespace_and_name() {
        let mut s = ClusterState::from_objects([pod("ns", "p", ""), pod("other", "p", "")]);
        s.apply_event(ClusterEvent::Upsert(pod("ns", "p", "n1")));
        assert_eq!(s.pods().count(), 2);
        assert_eq!(s.pod("ns", "p").unwrap().spec.node_name, "n1");
        assert_eq!(s.pod("other", "p").unwrap().spec.node_name, "");
    }

    #[test]
    fn delete_removes_only_the_named_object() {
        let mut s = ClusterState::from_objects([node("a"), node("b"), pod("ns", "a", "")]);
        s.apply_event(ClusterEvent::Delete {
            kind: ObjectKind::Node,
            namespace: String::new(),
            name: "a".into(),
        });
        assert_eq!(
            s.nodes()
                .map(|n| n.metadata.name.as_str())
                .collect::<Vec<_>>(),
            ["b"]
        );
        assert!(
            s.pod("ns", "a").is_some(),
            "a pod of the same name is another object"
        );
    }

    #[test]
    fn deleting_a_missing_object_is_harmless() {
        let mut s = ClusterState::new();
        s.apply_event(ClusterEvent::Delete {
            kind: ObjectKind::Queue,
            namespace: String::new(),
            name: "q".into(),
        });
        assert_eq!(s.snapshot("default").queues.len(), 0);
    }
}
