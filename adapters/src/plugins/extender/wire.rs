//! The JSON an extender exchanges with the scheduler, in Volcano's shapes: requests carry
//! Volcano's `TaskInfo`, `NodeInfo`, `JobInfo` and `QueueInfo` with their Go field names (Go
//! encodes untagged fields by name), responses are the extender package's tagged structs.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tephra_engine::api::{Node, NodeSpec, NodeStatus, ObjectMeta, Pod, PodGroup, Queue};
use tephra_engine::framework::{SessionState, to_resource_list};
use tephra_engine::model::{Dim, JobId, NodeId, QueueId, Resource, TaskId};

/// Volcano's `Resource`: `pods` is `MaxTaskNum`, not a scalar.
#[derive(Serialize)]
pub struct WireResource {
    #[serde(rename = "MilliCPU")]
    milli_cpu: f64,
    #[serde(rename = "Memory")]
    memory: f64,
    #[serde(rename = "ScalarResources")]
    scalar_resources: Option<BTreeMap<&'static str, f64>>,
    #[serde(rename = "MaxTaskNum")]
    max_task_num: i64,
}

fn resource(r: &Resource) -> WireResource {
    let scalars: BTreeMap<&'static str, f64> = r
        .scalars()
        .filter(|(d, _)| *d != Dim::PODS)
        .map(|(d, v)| (d.name(), v))
        .collect();
    WireResource {
        milli_cpu: r.milli_cpu,
        memory: r.memory,
        scalar_resources: r.has_scalar_map().then_some(scalars),
        max_task_num: r.scalar(Dim::PODS).unwrap_or(0.0) as i64,
    }
}

/// Volcano's `TaskInfo`.
#[derive(Serialize)]
pub struct TaskInfo<'a> {
    #[serde(rename = "UID")]
    uid: &'a str,
    #[serde(rename = "Job")]
    job: &'a str,
    #[serde(rename = "Name")]
    name: &'a str,
    #[serde(rename = "Namespace")]
    namespace: &'a str,
    #[serde(rename = "TaskRole")]
    task_role: &'a str,
    #[serde(rename = "Resreq")]
    resreq: WireResource,
    #[serde(rename = "InitResreq")]
    init_resreq: WireResource,
    #[serde(rename = "NodeName")]
    node_name: &'a str,
    #[serde(rename = "EvictionOccurred")]
    eviction_occurred: bool,
    #[serde(rename = "Status")]
    status: u16,
    #[serde(rename = "Priority")]
    priority: i32,
    #[serde(rename = "VolumeReady")]
    volume_ready: bool,
    #[serde(rename = "Preemptable")]
    preemptable: bool,
    #[serde(rename = "BestEffort")]
    best_effort: bool,
    #[serde(rename = "SchGated")]
    sch_gated: bool,
    #[serde(rename = "RevocableZone")]
    revocable_zone: &'a str,
    #[serde(rename = "Pod")]
    pod: &'a Pod,
}

/// The task's `TaskInfo` now.
pub fn task(ssn: &SessionState, t: TaskId) -> TaskInfo<'_> {
    let (s, i) = (&ssn.snap, t.idx());
    TaskInfo {
        uid: &s.tasks.uid[i],
        job: s.tasks.job[i].map_or("", |j| &*s.jobs.uid[j.idx()]),
        name: &s.tasks.name[i],
        namespace: &s.tasks.namespace[i],
        task_role: &s.tasks.role[i],
        resreq: resource(&s.tasks.resreq[i]),
        init_resreq: resource(&s.tasks.resreq[i]),
        node_name: ssn.tasks.node[t].map_or("", |n| s.nodes.name[n.idx()].as_str()),
        eviction_occurred: ssn.tasks.eviction_occurred[t],
        status: ssn.tasks.status[t] as u16,
        priority: s.tasks.priority[i],
        volume_ready: false,
        preemptable: s.tasks.preemptable[i],
        best_effort: s.tasks.best_effort[i],
        sch_gated: s.tasks.sch_gated[i],
        revocable_zone: "",
        pod: &s.tasks.pod[i],
    }
}

/// Volcano's `NodeState`.
#[derive(Serialize)]
pub struct NodeState {
    #[serde(rename = "Phase")]
    phase: &'static str,
    #[serde(rename = "Reason")]
    reason: &'static str,
}

/// Volcano's `NodeInfo`.
#[derive(Serialize)]
pub struct NodeInfo<'a> {
    #[serde(rename = "Name")]
    name: &'a str,
    #[serde(rename = "Node")]
    node: Node,
    #[serde(rename = "State")]
    state: NodeState,
    #[serde(rename = "Releasing")]
    releasing: WireResource,
    #[serde(rename = "Pipelined")]
    pipelined: WireResource,
    #[serde(rename = "Idle")]
    idle: WireResource,
    #[serde(rename = "Used")]
    used: WireResource,
    #[serde(rename = "Allocatable")]
    allocatable: WireResource,
    #[serde(rename = "Capacity")]
    capacity: WireResource,
    #[serde(rename = "Tasks")]
    tasks: BTreeMap<&'a str, TaskInfo<'a>>,
    #[serde(rename = "RevocableZone")]
    revocable_zone: &'static str,
}

/// The node's `NodeInfo` now, with the v1 Node rebuilt from the snapshot's columns.
pub fn node(ssn: &SessionState, n: NodeId) -> NodeInfo<'_> {
    let (s, i) = (&ssn.snap, n.idx());
    let object = Node {
        metadata: ObjectMeta {
            name: s.nodes.name[i].clone(),
            labels: s.nodes.labels[i].clone(),
            ..Default::default()
        },
        spec: NodeSpec {
            unschedulable: s.nodes.unschedulable[i],
            taints: s.nodes.taints[i].clone(),
        },
        status: NodeStatus {
            allocatable: to_resource_list(&s.nodes.allocatable[i]),
            capacity: to_resource_list(&s.nodes.capacity[i]),
            ..Default::default()
        },
        ..Default::default()
    };
    NodeInfo {
        name: &s.nodes.name[i],
        node: object,
        state: NodeState {
            phase: "Ready",
            reason: "",
        },
        releasing: resource(&ssn.nodes.releasing[n]),
        pipelined: resource(&ssn.nodes.pipelined[n]),
        idle: resource(&ssn.nodes.idle[n]),
        used: resource(&ssn.nodes.used[n]),
        allocatable: resource(&s.nodes.allocatable[i]),
        capacity: resource(&s.nodes.capacity[i]),
        tasks: ssn.nodes.tasks[n]
            .iter()
            .map(|&t| (&*s.tasks.uid[t.idx()], task(ssn, t)))
            .collect(),
        revocable_zone: "",
    }
}

/// Volcano's `JobInfo`.
#[derive(Serialize)]
pub struct JobInfo<'a> {
    #[serde(rename = "UID")]
    uid: &'a str,
    #[serde(rename = "Name")]
    name: &'a str,
    #[serde(rename = "Namespace")]
    namespace: &'a str,
    #[serde(rename = "Queue")]
    queue: &'a str,
    #[serde(rename = "Priority")]
    priority: i32,
    #[serde(rename = "MinAvailable")]
    min_available: i32,
    #[serde(rename = "TaskMinAvailable")]
    task_min_available: &'a BTreeMap<String, i32>,
    #[serde(rename = "TaskMinAvailableTotal")]
    task_min_available_total: i32,
    #[serde(rename = "Tasks")]
    tasks: BTreeMap<&'a str, TaskInfo<'a>>,
    #[serde(rename = "Allocated")]
    allocated: WireResource,
    #[serde(rename = "TotalRequest")]
    total_request: WireResource,
    #[serde(rename = "Preemptable")]
    preemptable: bool,
    #[serde(rename = "PodGroup")]
    pod_group: &'a PodGroup,
}

/// The job's `JobInfo` now.
pub fn job(ssn: &SessionState, j: JobId) -> JobInfo<'_> {
    let (s, i) = (&ssn.snap, j.idx());
    JobInfo {
        uid: &s.jobs.uid[i],
        name: &s.jobs.name[i],
        namespace: &s.jobs.namespace[i],
        queue: &s.queues.name[s.jobs.queue[i].idx()],
        priority: s.jobs.priority[i],
        min_available: s.jobs.min_available[i],
        task_min_available: &s.jobs.task_min_available[i],
        task_min_available_total: s.jobs.task_min_available_total[i],
        tasks: s.jobs.tasks[i]
            .iter()
            .map(|&t| (&*s.tasks.uid[t.idx()], task(ssn, t)))
            .collect(),
        allocated: resource(&ssn.jobs.allocated[j]),
        total_request: resource(&ssn.jobs.total_request[j]),
        preemptable: s.jobs.preemptable[i],
        pod_group: &s.jobs.podgroup[i],
    }
}

/// Volcano's `QueueInfo`.
#[derive(Serialize)]
pub struct QueueInfo<'a> {
    #[serde(rename = "UID")]
    uid: &'a str,
    #[serde(rename = "Name")]
    name: &'a str,
    #[serde(rename = "Weight")]
    weight: i32,
    #[serde(rename = "Queue")]
    queue: &'a Queue,
}

/// The queue's `QueueInfo`.
pub fn queue(ssn: &SessionState, q: QueueId) -> QueueInfo<'_> {
    let (s, i) = (&ssn.snap, q.idx());
    QueueInfo {
        uid: &s.queues.name[i],
        name: &s.queues.name[i],
        weight: s.queues.weight[i],
        queue: &s.queues.object[i],
    }
}

/// `OnSessionOpenRequest`: the whole session (tephra has no namespace quotas or revocable
/// nodes, so those maps are empty; Volcano leaves `NodeList` unset).
#[derive(Serialize)]
pub struct SessionOpen<'a> {
    #[serde(rename = "Jobs")]
    jobs: BTreeMap<&'a str, JobInfo<'a>>,
    #[serde(rename = "Nodes")]
    nodes: BTreeMap<&'a str, NodeInfo<'a>>,
    #[serde(rename = "Queues")]
    queues: BTreeMap<&'a str, QueueInfo<'a>>,
    #[serde(rename = "NamespaceInfo")]
    namespace_info: BTreeMap<String, Value>,
    #[serde(rename = "RevocableNodes")]
    revocable_nodes: BTreeMap<String, Value>,
    #[serde(rename = "NodeList")]
    node_list: Option<Vec<String>>,
}

/// The `OnSessionOpenRequest` of the session.
pub fn session_open(ssn: &SessionState) -> SessionOpen<'_> {
    let s = &ssn.snap;
    SessionOpen {
        jobs: s
            .jobs
            .ids()
            .map(|j| (&*s.jobs.uid[j.idx()], job(ssn, j)))
            .collect(),
        nodes: s
            .nodes
            .ids()
            .map(|n| (s.nodes.name[n.idx()].as_str(), node(ssn, n)))
            .collect(),
        queues: s
            .queues
            .ids()
            .map(|q| (s.queues.name[q.idx()].as_str(), queue(ssn, q)))
            .collect(),
        namespace_info: BTreeMap::new(),
        revocable_nodes: BTreeMap::new(),
        node_list: None,
    }
}

/// `PredicateRequest`.
#[derive(Serialize)]
pub struct PredicateRequest<'a> {
    pub task: TaskInfo<'a>,
    pub node: NodeInfo<'a>,
}

/// `PrioritizeRequest`.
#[derive(Serialize)]
pub struct PrioritizeRequest<'a> {
    pub task: TaskInfo<'a>,
    pub nodes: Vec<NodeInfo<'a>>,
}

/// `PreemptableRequest` and `ReclaimableRequest`.
#[derive(Serialize)]
pub struct EvictRequest<'a> {
    pub evictor: TaskInfo<'a>,
    pub evictees: Vec<TaskInfo<'a>>,
}

/// `JobEnqueueableRequest`, `JobEnqueuedRequest` and `JobReadyRequest`.
#[derive(Serialize)]
pub struct JobRequest<'a> {
    pub job: JobInfo<'a>,
}

/// `QueueOverusedRequest`.
#[derive(Serialize)]
pub struct QueueRequest<'a> {
    pub queue: QueueInfo<'a>,
}

/// `EventHandlerRequest`.
#[derive(Serialize)]
pub struct TaskRequest<'a> {
    pub task: TaskInfo<'a>,
}

/// `OnSessionCloseRequest`.
#[derive(Serialize)]
pub struct Empty {}

/// An answer's body as the response type `R`; the error names the verb.
pub fn decode<R: DeserializeOwned>(verb: &str, body: &[u8]) -> Result<R, String> {
    serde_json::from_slice(body).map_err(|e| format!("{verb}: decoding the answer: {e}"))
}

/// `PredicateResponse`: a non-empty `status` is the failure message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PredicateResponse {
    pub status: String,
    pub code: i32,
}

/// `PrioritizeResponse`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PrioritizeResponse {
    pub node_score: Option<BTreeMap<String, f64>>,
    pub error_message: String,
}

/// A task in a response: only its UID is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TaskRef {
    #[serde(rename = "UID")]
    pub uid: String,
}

/// `PreemptableResponse` and `ReclaimableResponse`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VictimsResponse {
    pub status: i32,
    pub victims: Option<Vec<TaskRef>>,
}

/// `JobEnqueueableResponse`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VoteResponse {
    pub status: i32,
}

/// `QueueOverusedResponse`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct OverusedResponse {
    pub overused: bool,
}

/// `JobReadyResponse`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ReadyResponse {
    pub status: bool,
}

/// `EventHandlerResponse`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EventResponse {
    pub error_message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::harness::Harness;

    #[test]
    fn infos_use_volcano_field_names() {
        let ssn = Harness::new("actions: allocate\ntiers: []\n")
            .queue("q", 2)
            .node("n1", "4", "8Gi", &[("zone", "a")])
            .pod_group("ns", "pg", "q", 1)
            .pod("ns", "p", "pg", "500m", "1Gi")
            .open()
            .unwrap();
        let st = &ssn.state;
        let t = serde_json::to_value(task(st, TaskId(0))).unwrap();
        assert_eq!(t["UID"], "ns-p");
        assert_eq!(t["Job"], "ns/pg");
        assert_eq!(t["Status"], 1);
        assert_eq!(t["Resreq"]["MilliCPU"], 500.0);
        assert_eq!(t["Resreq"]["MaxTaskNum"], 1);
        assert_eq!(t["Pod"]["metadata"]["name"], "p");
        let n = serde_json::to_value(node(st, NodeId(0))).unwrap();
        assert_eq!(n["Name"], "n1");
        assert_eq!(n["Node"]["metadata"]["labels"]["zone"], "a");
        assert_eq!(n["Allocatable"]["MilliCPU"], 4000.0);
        assert_eq!(n["Tasks"], serde_json::json!({}));
        let j = serde_json::to_value(job(st, JobId(0))).unwrap();
        assert_eq!(
            (j["UID"].as_str(), j["Queue"].as_str()),
            (Some("ns/pg"), Some("q"))
        );
        assert!(j["Tasks"]["ns-p"].is_object());
        let open = serde_json::to_value(session_open(st)).unwrap();
        assert!(open["Nodes"]["n1"].is_object() && open["Queues"]["q"]["Weight"] == 2);
    }
}
