//! Test support: manifests as short strings for the queue plugins' tests, opened through the
//! plugin `Harness`, so the tests read like the scenarios they check.

use crate::framework::Session;
use crate::harness::Harness;
use crate::model::{JobId, QueueId, TaskId};

/// A configuration with no plugin, for tests that only need session state.
pub(crate) const ALLOCATE_ONLY: &str = "actions: allocate\ntiers: []\n";

/// Opens a session with the built-in plugins on `manifests` (YAML documents separated by
/// `---`, each with a `kind`), PodGroups without a queue going to `default`.
pub(crate) fn open(conf: &str, manifests: &str) -> Session {
    Harness::new(conf)
        .manifests(manifests)
        .open()
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
    ssn.state
        .snap
        .job_id(uid)
        .unwrap_or_else(|| panic!("no job {uid}"))
}

/// The task of pod `namespace/name`.
pub(crate) fn task(ssn: &Session, key: &str) -> TaskId {
    ssn.state
        .snap
        .task_id(key)
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
