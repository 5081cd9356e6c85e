//! Test helpers for the kube plugins: sessions opened from small YAML object lists through the
//! plugin `Harness`.

use crate::framework::Session;
use crate::harness::Harness;
use crate::model::{NodeId, TaskId};

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

/// Opens a session of the built-in plugins on `objects` (a YAML list) with configuration `conf`.
pub fn session(conf: &str, objects: &str) -> Session {
    Harness::new(conf).objects(objects).open().expect("session")
}

/// A one-tier configuration with a single plugin and its arguments (a YAML flow-map body).
pub fn conf(plugin: &str, arguments: &str) -> String {
    format!(
        "actions: allocate\ntiers:\n- plugins:\n  - name: {plugin}\n    arguments: {{{arguments}}}\n"
    )
}

/// The task of pod `ns/name`.
pub fn task(ssn: &Session, key: &str) -> TaskId {
    ssn.state
        .snap
        .task_id(key)
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
