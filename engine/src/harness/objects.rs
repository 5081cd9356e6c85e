//! Common objects written as scenario YAML, to concatenate and hand to `Harness::manifests` or
//! `harness::session`. Two shapes: list items (`JOB`, `node`, `pod`, `running_pod`: the pods of
//! one job `ns/pg` in queue `q`) and whole documents (`sized_node`, `pod_group`, `group_pod`:
//! any job, any queue). Concatenate items with items and documents with documents.

/// The queue `q` and the PodGroup `ns/pg` that `pod` and `running_pod` join (list items).
pub const JOB: &str = "- {kind: Queue, metadata: {name: q}}\n- {kind: PodGroup, metadata: {name: pg, namespace: ns}, spec: {queue: q}}\n";

/// A node (list item); `labels` and `allocatable` are YAML flow-map bodies (`zone: a, disk: ssd`).
pub fn node(name: &str, labels: &str, allocatable: &str) -> String {
    format!(
        "- {{kind: Node, metadata: {{name: {name}, labels: {{{labels}}}}}, status: {{allocatable: {{{allocatable}}}}}}}\n"
    )
}

/// A pending pod `ns/<name>` of job `ns/pg` (list item); `labels` and `spec` are YAML flow-map
/// bodies.
pub fn pod(name: &str, labels: &str, spec: &str) -> String {
    format!(
        "- {{kind: Pod, metadata: {{name: {name}, namespace: ns, uid: {name}, labels: {{{labels}}}, annotations: {{scheduling.k8s.io/group-name: pg}}}}, spec: {{{spec}}}, status: {{phase: Pending}}}}\n"
    )
}

/// A running pod `ns/<name>` of job `ns/pg` on `node` (list item).
pub fn running_pod(name: &str, node: &str, labels: &str, spec: &str) -> String {
    let spec = if spec.is_empty() {
        format!("nodeName: {node}")
    } else {
        format!("nodeName: {node}, {spec}")
    };
    pod(name, labels, &spec).replace("phase: Pending", "phase: Running")
}

/// A node (document); `allocatable` is a flow mapping such as `{cpu: 4, memory: 4Gi, pods: 10}`.
pub fn sized_node(name: &str, allocatable: &str) -> String {
    format!(
        "---\nkind: Node\nmetadata: {{name: '{name}'}}\nstatus: {{allocatable: {allocatable}}}\n"
    )
}

/// A PodGroup `namespace/name` (document); `min_resources` is a flow mapping, or empty for
/// none.
pub fn pod_group(
    key: &str,
    queue: &str,
    min_member: i32,
    min_resources: &str,
    phase: &str,
) -> String {
    let (ns, name) = key.split_once('/').expect("namespace/name");
    let min = if min_resources.is_empty() {
        String::new()
    } else {
        format!(", minResources: {min_resources}")
    };
    format!(
        "---\nkind: PodGroup\nmetadata: {{name: '{name}', namespace: '{ns}'}}\nspec: {{queue: '{queue}', minMember: {min_member}{min}}}\nstatus: {{phase: {phase}}}\n"
    )
}

/// A pod `namespace/name` of PodGroup `group` (document); `node` empty for an unplaced pod,
/// `requests` a flow mapping.
pub fn group_pod(key: &str, group: &str, node: &str, requests: &str, phase: &str) -> String {
    let (ns, name) = key.split_once('/').expect("namespace/name");
    format!(
        "---\nkind: Pod\nmetadata: {{name: '{name}', namespace: '{ns}', uid: '{ns}-{name}', annotations: {{scheduling.k8s.io/group-name: '{group}'}}}}\nspec: {{nodeName: '{node}', containers: [{{name: c, resources: {{requests: {requests}}}}}]}}\nstatus: {{phase: {phase}}}\n"
    )
}
