//! Test helpers: sessions opened from small YAML object lists.

use std::sync::Arc;

use serde_json::Value;

use crate::config::SchedulerConfig;
use crate::framework::{Session, SessionOptions};
use crate::model::{NodeId, TaskId};
use crate::snapshot::{Snapshot, SnapshotBuilder};

/// The queue `q` and the PodGroup `ns/pg` that `pod` and `running_pod` join.
pub const JOB: &str = "- {kind: Queue, metadata: {name: q}}\n- {kind: PodGroup, metadata: {name: pg, namespace: ns}, spec: {queue: q}}\n";

/// A node entry; `labels` and `allocatable` are YAML flow-map bodies (`zone: a, disk: ssd`).
pub fn node(name: &str, labels: &str, allocatable: &str) -> String {
    format!(
        "- {{kind: Node, metadata: {{name: {name}, labels: {{{labels}}}}}, status: {{allocatable: {{{allocatable}}}}}}}\n"
    )
}

/// A pending pod `ns/<name>` of job `ns/pg`; `labels` and `spec` are YAML flow-map bodies.
pub fn pod(name: &str, labels: &str, spec: &str) -> String {
    format!(
        "- {{kind: Pod, metadata: {{name: {name}, namespace: ns, uid: {name}, labels: {{{labels}}}, annotations: {{scheduling.k8s.io/group-name: pg}}}}, spec: {{{spec}}}, status: {{phase: Pending}}}}\n"
    )
}

/// A running pod `ns/<name>` of job `ns/pg` on `node`.
pub fn running_pod(name: &str, node: &str, labels: &str, spec: &str) -> String {
    let spec = if spec.is_empty() {
        format!("nodeName: {node}")
    } else {
        format!("nodeName: {node}, {spec}")
    };
    pod(name, labels, &spec).replace("phase: Pending", "phase: Running")
}

/// Builds a snapshot from a YAML list of Node, Pod, PodGroup and Queue objects.
pub fn snapshot(objects: &str) -> Snapshot {
    let list: Vec<Value> = serde_saphyr::from_str(objects).expect("objects YAML");
    let mut b = SnapshotBuilder::new("default");
    for o in list {
        let kind = o["kind"].as_str().unwrap_or_default().to_string();
        match kind.as_str() {
            "Node" => b.node(Arc::new(serde_json::from_value(o).expect("node"))),
            "Pod" => b.pod(Arc::new(serde_json::from_value(o).expect("pod"))),
            "PodGroup" => b.pod_group(Arc::new(serde_json::from_value(o).expect("podgroup"))),
            "Queue" => b.queue(Arc::new(serde_json::from_value(o).expect("queue"))),
            other => panic!("unsupported kind {other:?}"),
        };
    }
    b.build()
}

/// Opens a session of the built-in plugins on `objects` with configuration `conf`.
pub fn session(conf: &str, objects: &str) -> Session {
    let config = SchedulerConfig::parse(conf).expect("configuration");
    Session::open(
        Arc::new(snapshot(objects)),
        Arc::new(config),
        &super::builtin_registry(),
        SessionOptions::default(),
    )
    .expect("session")
}

/// A one-tier configuration with a single plugin and its arguments (a YAML flow-map body).
pub fn conf(plugin: &str, arguments: &str) -> String {
    format!(
        "actions: allocate\ntiers:\n- plugins:\n  - name: {plugin}\n    arguments: {{{arguments}}}\n"
    )
}

/// The task of pod `ns/name`.
pub fn task(ssn: &Session, key: &str) -> TaskId {
    let tasks = &ssn.state.snap.tasks;
    (0..tasks.len())
        .map(|t| TaskId(t as u32))
        .find(|&t| tasks.key(t) == key)
        .unwrap_or_else(|| panic!("no task {key}"))
}

/// The node called `name`.
pub fn node_id(ssn: &Session, name: &str) -> NodeId {
    ssn.state
        .snap
        .nodes
        .id(name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

/// Every node, in table order.
pub fn all_nodes(ssn: &Session) -> Vec<NodeId> {
    ssn.state.snap.nodes.ids().collect()
}
