//! The test-cluster builder: a session from a few objects in the scenario format and a
//! configuration, then the session's dispatch functions called directly. Every unit test of the
//! engine that needs a cluster builds it here (the scenario files of `tests/scenarios` are the same
//! objects, run through whole cycles); plugin authors use it too. `objects` writes the common
//! objects as scenario YAML, `find` looks rows up by name.
//!
//! ```
//! use tephra_engine::harness::Harness;
//! let ssn = Harness::new("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n")
//!     .queue("q1", 1)
//!     .node("n1", "4", "8Gi", &[])
//!     .pod_group("ns", "pg", "q1", 1)
//!     .pod("ns", "p1", "pg", "1", "1Gi")
//!     .open()
//!     .unwrap();
//! let t = ssn.state.snap.task_id("ns/p1").unwrap();
//! assert!(ssn.predicate(t, ssn.state.snap.nodes.id("n1").unwrap()).is_ok());
//! ```

use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::api::{ClusterObject, ContainerImage, Node, Pod, PodGroup, Queue, ResourceList};
use crate::config::{ArgumentError, Arguments, ConfigError, SchedulerConfig};
use crate::framework::{Plugin, PluginRegistry, Session, SessionOptions};
use crate::model::Quantity;
use crate::snapshot::{GROUP_NAME_ANNOTATION, Snapshot, SnapshotBuilder};

pub mod find;
pub mod objects;

/// A configuration with no plugin, for tests that only need session state.
pub const ALLOCATE_ONLY: &str = "actions: allocate\ntiers: []\n";

/// A one-tier configuration with a single plugin and its arguments (a YAML flow-map body).
pub fn conf(plugin: &str, arguments: &str) -> String {
    format!(
        "actions: allocate\ntiers:\n- plugins:\n  - name: {plugin}\n    arguments: {{{arguments}}}\n"
    )
}

/// Opens a session of the built-in plugins with configuration `conf` on `objects` (scenario
/// YAML, as `Harness::manifests` reads it), PodGroups without a queue going to `default`.
pub fn session(conf: &str, objects: &str) -> Session {
    Harness::new(conf)
        .manifests(objects)
        .open()
        .expect("session opens")
}

/// Collects objects and a configuration, then opens a session.
#[derive(Debug)]
pub struct Harness {
    builder: SnapshotBuilder<'static>,
    conf: String,
    registry: PluginRegistry,
}

fn from_value<T: DeserializeOwned>(doc: serde_json::Value) -> T {
    serde_json::from_value(doc).expect("manifest matches its kind")
}

fn resources(cpu: &str, memory: &str) -> ResourceList {
    let mut l = ResourceList::new();
    l.insert(
        "cpu".into(),
        Quantity::parse(cpu).expect("test cpu quantity"),
    );
    l.insert(
        "memory".into(),
        Quantity::parse(memory).expect("test memory quantity"),
    );
    l
}

impl Harness {
    /// A harness over the built-in plugins with the given configuration YAML.
    pub fn new(conf: &str) -> Self {
        Harness {
            builder: SnapshotBuilder::new("default"),
            conf: conf.to_string(),
            registry: crate::plugins::builtin_registry(),
        }
    }

    /// Registers an extra plugin (the one under test).
    pub fn with_plugin(
        mut self,
        name: &str,
        builder: impl Fn(&Arguments) -> Result<Box<dyn Plugin>, ArgumentError> + Send + Sync + 'static,
    ) -> Self {
        self.registry.register(name, builder);
        self
    }

    /// Any object from YAML (`Pod`, `Node`, `PodGroup`, `Queue`, ...), for fields the
    /// shortcuts do not cover.
    pub fn parse<T: DeserializeOwned>(yaml: &str) -> T {
        serde_saphyr::from_str(yaml).expect("test object YAML")
    }

    /// A node with cpu / memory allocatable, 110 pods, and labels.
    pub fn node(mut self, name: &str, cpu: &str, memory: &str, labels: &[(&str, &str)]) -> Self {
        let mut n = Node::default();
        n.metadata.name = name.into();
        n.metadata.labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut alloc = resources(cpu, memory);
        alloc.insert("pods".into(), Quantity::from_units(110));
        n.status.capacity = alloc.clone();
        n.status.allocatable = alloc;
        n.status.images = Vec::<ContainerImage>::new();
        self.builder.node(Arc::new(n));
        self
    }

    /// An open queue.
    pub fn queue(mut self, name: &str, weight: i32) -> Self {
        let mut q = Queue::default();
        q.metadata.name = name.into();
        q.spec.weight = weight;
        q.status.state = "Open".into();
        self.builder.queue(Arc::new(q));
        self
    }

    /// An Inqueue PodGroup.
    pub fn pod_group(mut self, ns: &str, name: &str, queue: &str, min_member: i32) -> Self {
        let mut pg = PodGroup::default();
        pg.metadata.name = name.into();
        pg.metadata.namespace = ns.into();
        pg.spec.queue = queue.into();
        pg.spec.min_member = min_member;
        pg.status.phase = "Inqueue".into();
        self.builder.pod_group(Arc::new(pg));
        self
    }

    /// A pending pod of PodGroup `group` requesting cpu / memory.
    pub fn pod(mut self, ns: &str, name: &str, group: &str, cpu: &str, memory: &str) -> Self {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = ns.into();
        p.metadata.uid = format!("{ns}-{name}");
        p.metadata
            .annotations
            .insert(GROUP_NAME_ANNOTATION.into(), group.into());
        p.spec.scheduler_name = "volcano".into();
        p.spec.containers.push(crate::api::Container {
            name: "c0".into(),
            resources: crate::api::ResourceRequirements {
                requests: resources(cpu, memory),
                ..Default::default()
            },
            ..Default::default()
        });
        p.status.phase = "Pending".into();
        self.builder.pod(Arc::new(p));
        self
    }

    /// Adds objects written in the scenario format: YAML documents separated by `---`, each one
    /// object with a `kind` or a list of them (`- {kind: Node, ...}`). The kinds: Node, Pod,
    /// PodGroup, Queue, PriorityClass, HyperNode, PodDisruptionBudget, ResourceQuota,
    /// Numatopology, NodeMetrics, the storage kinds (PersistentVolumeClaim, PersistentVolume,
    /// StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment) and the workload
    /// kinds (Service, ReplicationController, ReplicaSet, StatefulSet). `objects` writes the
    /// common ones.
    pub fn manifests(self, yaml: &str) -> Self {
        let docs: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(yaml).expect("test manifests parse");
        let objects = docs.into_iter().flat_map(|doc| match doc {
            serde_json::Value::Array(list) => list,
            object => vec![object],
        });
        self.add_all(objects.collect())
    }

    fn add_all(mut self, docs: Vec<serde_json::Value>) -> Self {
        for doc in docs {
            let kind = doc["kind"].as_str().expect("object has a kind").to_string();
            let b = &mut self.builder;
            match kind.as_str() {
                "Queue" => b.queue(Arc::new(from_value(doc))),
                "Node" => b.node(Arc::new(from_value(doc))),
                "PodGroup" => b.pod_group(Arc::new(from_value(doc))),
                "Pod" => b.pod(Arc::new(from_value(doc))),
                "PriorityClass" => b.priority_class(Arc::new(from_value(doc))),
                "HyperNode" => b.hyper_node(Arc::new(from_value(doc))),
                "PodDisruptionBudget" => b.pdb(Arc::new(from_value(doc))),
                "ResourceQuota" => b.resource_quota(Arc::new(from_value(doc))),
                "Numatopology" => b.numatopology(Arc::new(from_value(doc))),
                "NodeMetrics" => b.node_metrics(Arc::new(from_value(doc))),
                storage => {
                    let object = match storage {
                        "PersistentVolumeClaim" => {
                            ClusterObject::PersistentVolumeClaim(Box::new(from_value(doc)))
                        }
                        "PersistentVolume" => {
                            ClusterObject::PersistentVolume(Box::new(from_value(doc)))
                        }
                        "StorageClass" => ClusterObject::StorageClass(Box::new(from_value(doc))),
                        "CSINode" => ClusterObject::CsiNode(Box::new(from_value(doc))),
                        "CSIDriver" => ClusterObject::CsiDriver(Box::new(from_value(doc))),
                        "CSIStorageCapacity" => {
                            ClusterObject::CsiStorageCapacity(Box::new(from_value(doc)))
                        }
                        "VolumeAttachment" => {
                            ClusterObject::VolumeAttachment(Box::new(from_value(doc)))
                        }
                        "Service" => ClusterObject::Service(Box::new(from_value(doc))),
                        "ReplicationController" => {
                            ClusterObject::ReplicationController(Box::new(from_value(doc)))
                        }
                        "ReplicaSet" => ClusterObject::ReplicaSet(Box::new(from_value(doc))),
                        "StatefulSet" => ClusterObject::StatefulSet(Box::new(from_value(doc))),
                        other => panic!("unsupported kind {other}"),
                    };
                    if !b.storage_object(object.clone()) {
                        b.workload_object(object);
                    }
                    b
                }
            };
        }
        self
    }

    /// Adds a fully specified pod.
    pub fn pod_object(mut self, p: Pod) -> Self {
        self.builder.pod(Arc::new(p));
        self
    }

    /// Adds a fully specified node.
    pub fn node_object(mut self, n: Node) -> Self {
        self.builder.node(Arc::new(n));
        self
    }

    /// Adds a fully specified PodGroup.
    pub fn pod_group_object(mut self, pg: PodGroup) -> Self {
        self.builder.pod_group(Arc::new(pg));
        self
    }

    /// Adds a fully specified queue.
    pub fn queue_object(mut self, q: Queue) -> Self {
        self.builder.queue(Arc::new(q));
        self
    }

    /// Says the snapshot follows snapshot `since` with only the nodes `names` changed, as a
    /// cache would (`Snapshot::changed_since`).
    pub fn nodes_changed_since(mut self, since: u64, names: &[&str]) -> Self {
        let names = names.iter().map(|n| n.to_string());
        self.builder.nodes_changed_since(since, names);
        self
    }

    /// The snapshot of the objects added so far, for callers that open many sessions over one
    /// cluster (a fuzz target) and should not rebuild it each time.
    pub fn snapshot(&self) -> Snapshot {
        self.builder.build()
    }

    /// Parses the configuration and opens the session.
    pub fn open(self) -> Result<Session, ConfigError> {
        self.open_with(SessionOptions::default())
    }

    /// Opens the session with `options` (the plain path, node sampling, a fixed clock).
    pub fn open_with(self, options: SessionOptions) -> Result<Session, ConfigError> {
        let conf = SchedulerConfig::parse(&self.conf)?;
        Session::open(
            Arc::new(self.builder.build()),
            Arc::new(conf),
            &self.registry,
            options,
        )
    }
}
