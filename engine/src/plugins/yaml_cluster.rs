//! Test support: a session opened on a cluster written as YAML manifests, so plugin tests read
//! like the scenarios they check.

use std::sync::Arc;

use serde_json::Value;

use crate::api::{Node, Pod, PodGroup, PriorityClass, Queue};
use crate::config::SchedulerConfig;
use crate::framework::{Session, SessionOptions};
use crate::model::{JobId, QueueId, TaskId};
use crate::snapshot::SnapshotBuilder;

/// A configuration with no plugin, for tests that only need session state.
pub(crate) const ALLOCATE_ONLY: &str = "actions: allocate\ntiers: []\n";

fn object<T: serde::de::DeserializeOwned>(doc: Value) -> Arc<T> {
    Arc::new(serde_json::from_value(doc).expect("manifest matches its kind"))
}

/// Opens a session with the built-in plugins on `manifests` (YAML documents separated by
/// `---`, each with a `kind`), PodGroups without a queue going to `default`.
pub(crate) fn open(conf: &str, manifests: &str) -> Session {
    let mut b = SnapshotBuilder::new("default");
    let docs: Vec<Value> = serde_saphyr::from_multiple(manifests).expect("manifests parse");
    for doc in docs {
        match doc["kind"].as_str().expect("manifest has a kind") {
            "Queue" => b.queue(object::<Queue>(doc)),
            "Node" => b.node(object::<Node>(doc)),
            "PodGroup" => b.pod_group(object::<PodGroup>(doc)),
            "Pod" => b.pod(object::<Pod>(doc)),
            "PriorityClass" => b.priority_class(object::<PriorityClass>(doc)),
            other => panic!("unsupported kind {other}"),
        };
    }
    let config = SchedulerConfig::parse(conf).expect("configuration parses");
    Session::open(
        Arc::new(b.build()),
        Arc::new(config),
        &crate::plugins::builtin_registry(),
        SessionOptions::default(),
    )
    .expect("session opens")
}

/// The queue named `name`.
pub(crate) fn queue(ssn: &Session, name: &str) -> QueueId {
    ssn.state
        .snap
        .queues
        .id(name)
        .unwrap_or_else(|| panic!("no queue {name}"))
}

/// The job `namespace/name`.
pub(crate) fn job(ssn: &Session, uid: &str) -> JobId {
    let jobs = &ssn.state.snap.jobs;
    jobs.ids()
        .find(|&j| jobs.uid[j.idx()] == uid)
        .unwrap_or_else(|| panic!("no job {uid}"))
}

/// The task of pod `namespace/name`.
pub(crate) fn task(ssn: &Session, key: &str) -> TaskId {
    let tasks = &ssn.state.snap.tasks;
    (0..tasks.len() as u32)
        .map(TaskId)
        .find(|&t| tasks.key(t) == key)
        .unwrap_or_else(|| panic!("no pod {key}"))
}

/// A Node manifest; `allocatable` is a flow mapping such as `{cpu: 4, memory: 4Gi, pods: 10}`.
pub(crate) fn node(name: &str, allocatable: &str) -> String {
    format!(
        "---\nkind: Node\nmetadata: {{name: '{name}'}}\nstatus: {{allocatable: {allocatable}}}\n"
    )
}

/// A PodGroup manifest for `namespace/name`; `min_resources` is a flow mapping, or empty for
/// none.
pub(crate) fn pod_group(
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

/// A Pod manifest for `namespace/name` in PodGroup `group`; `node` empty for an unplaced pod,
/// `requests` a flow mapping.
pub(crate) fn pod(key: &str, group: &str, node: &str, requests: &str, phase: &str) -> String {
    let (ns, name) = key.split_once('/').expect("namespace/name");
    format!(
        "---\nkind: Pod\nmetadata: {{name: '{name}', namespace: '{ns}', uid: '{ns}-{name}', annotations: {{scheduling.k8s.io/group-name: '{group}'}}}}\nspec: {{nodeName: '{node}', containers: [{{name: c, resources: {{requests: {requests}}}}}]}}\nstatus: {{phase: {phase}}}\n"
    )
}
