//! The `gang-mixed` workload family, exactly as `docs/workloads.md` specifies it,
//! written as plain Kubernetes objects so any scheduler can load the same cluster.
//!
//! Where the specification leaves a detail open, the choice is fixed here:
//! - every namespaced object lives in `default` (it exists in every cluster);
//! - running pods are numbered in node order and pod `r` belongs to group `r / 8`, whose
//!   `minMember` is its pod count (8, or fewer for the last group) so every group is ready;
//! - pending job `j` is PodGroup `job-<j>` with pods `job-<j>-<k>`, created `j` seconds after
//!   `PENDING_EPOCH`; the last job may take the count past `pending` (jobs are never cut);
//! - pods carry `spec.priority` equal to their class's value, as the API server's priority
//!   admission would store it, and GPU requests have equal limits, as the API requires;
//! - nothing in the family is random: the seed drives only the churn between cycles.

use serde_json::{Map, Value, json};
use tephra_engine::api::Time;
use tephra_engine::config::SchedulerConfig;

/// The family's scheduler configuration: Volcano's Helm chart default.
pub const SCHEDULER_CONF: &str = r#"actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"#;

/// `SCHEDULER_CONF`, parsed.
pub fn scheduler_conf() -> SchedulerConfig {
    SchedulerConfig::parse(SCHEDULER_CONF).expect("the chart default configuration parses")
}

/// The namespace of every pod and PodGroup.
pub const NAMESPACE: &str = "default";
/// The name prefix of pending jobs (PodGroup `job-000042`).
pub const JOB_PREFIX: &str = "job-";

const SCHEDULER_NAME: &str = "volcano";
const GROUP_NAME_ANNOTATION: &str = "scheduling.k8s.io/group-name";
const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
const NODE_GROUP_LABEL: &str = "volcano.sh/node-group";
const GPU: &str = "nvidia.com/gpu";
const IMAGE: &str = "registry.k8s.io/pause:3.10";
const VOLCANO_API: &str = "scheduling.volcano.sh/v1beta1";

/// When the running load was created: 2024-12-01T00:00:00Z.
const RUNNING_CREATED: Time = Time(1_733_011_200);
/// Pending job `j` is created at this time plus `j` seconds: 2024-12-02T00:00:00Z, so millions
/// of jobs still predate the first session (2025-01-01).
const PENDING_EPOCH: Time = Time(1_733_097_600);

/// Running pods per CPU node and per GPU node, and the size of a running PodGroup.
const RUNNING_PER_CPU_NODE: u64 = 8;
const RUNNING_PER_GPU_NODE: u64 = 4;
const RUNNING_GROUP_SIZE: u64 = 8;

/// The parameters of one cluster of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GangMixed {
    /// `N`: nodes.
    pub nodes: u64,
    /// `P`: pending pods to generate (at least).
    pub pending: u64,
    /// Drives the churn between cycles (which running pods finish).
    pub seed: u64,
}

/// How many objects of each kind a cluster has, known before generating it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub nodes: u64,
    pub running_pods: u64,
    pub running_groups: u64,
    pub pending_pods: u64,
    /// Pending jobs `0..pending_jobs`; churn continues from this index.
    pub pending_jobs: u64,
}

impl Counts {
    /// Every object: priority classes, queues, nodes, PodGroups and pods.
    pub fn objects(&self) -> u64 {
        PRIORITY_CLASSES.len() as u64
            + 1
            + QUEUES
            + self.nodes
            + self.running_groups
            + self.running_pods
            + self.pending_jobs
            + self.pending_pods
    }
}

const PRIORITY_CLASSES: [(&str, i32); 3] = [("high", 1000), ("normal", 100), ("low", 10)];
/// Queues `q-0` … `q-9` (besides `default`).
const QUEUES: u64 = 10;

fn is_gpu_node(i: u64) -> bool {
    i % 8 == 7
}

fn node_name(i: u64) -> String {
    format!("node-{i:05}")
}

fn queue_name(k: u64) -> String {
    format!("q-{}", k % QUEUES)
}

/// What a pending job of index `j` looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobShape {
    /// 60%: 8 pods of 2 cpu / 8Gi.
    Batch,
    /// 25%: 1 pod of 500m / 1Gi.
    Single,
    /// 10%: 32 pods of 4 cpu / 16Gi pinned to zone `j % 8`.
    Zonal,
    /// 5%: 8 pods of 8 cpu / 64Gi / 1 GPU on GPU nodes.
    Gpu,
}

impl JobShape {
    /// The shape of job `j`.
    pub fn of(j: u64) -> JobShape {
        match j % 20 {
            0..12 => JobShape::Batch,
            12..17 => JobShape::Single,
            17..19 => JobShape::Zonal,
            _ => JobShape::Gpu,
        }
    }

    /// Pods in the job (its `minMember` too).
    pub fn size(self) -> u64 {
        match self {
            JobShape::Batch | JobShape::Gpu => 8,
            JobShape::Single => 1,
            JobShape::Zonal => 32,
        }
    }
}

impl GangMixed {
    /// How many objects the cluster has.
    pub fn counts(&self) -> Counts {
        let gpu_nodes = (0..self.nodes).filter(|&i| is_gpu_node(i)).count() as u64;
        let running_pods =
            (self.nodes - gpu_nodes) * RUNNING_PER_CPU_NODE + gpu_nodes * RUNNING_PER_GPU_NODE;
        let (mut pending_jobs, mut pending_pods) = (0, 0);
        while pending_pods < self.pending {
            pending_pods += JobShape::of(pending_jobs).size();
            pending_jobs += 1;
        }
        Counts {
            nodes: self.nodes,
            running_pods,
            running_groups: running_pods.div_ceil(RUNNING_GROUP_SIZE),
            pending_pods,
            pending_jobs,
        }
    }

    /// Emits every object of the cluster, in the order an API client would create them:
    /// priority classes, queues, nodes, running PodGroups and pods, then each pending job's
    /// PodGroup followed by its pods.
    pub fn generate(&self, emit: &mut dyn FnMut(Value)) {
        let counts = self.counts();
        for (name, value) in PRIORITY_CLASSES {
            emit(json!({
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            }));
        }
        emit(queue("default", 1, None));
        for k in 0..QUEUES {
            let capability = (k == QUEUES - 1).then(|| self.tenth_of_cluster_cpu());
            emit(queue(&queue_name(k), k as i32 + 1, capability));
        }
        for i in 0..self.nodes {
            emit(node(i));
        }
        for g in 0..counts.running_groups {
            let size = RUNNING_GROUP_SIZE.min(counts.running_pods - g * RUNNING_GROUP_SIZE);
            emit(running_group(g, size));
        }
        let mut r = 0;
        for i in 0..self.nodes {
            let per_node = if is_gpu_node(i) {
                RUNNING_PER_GPU_NODE
            } else {
                RUNNING_PER_CPU_NODE
            };
            for _ in 0..per_node {
                emit(running_pod(r, i));
                r += 1;
            }
        }
        for j in 0..counts.pending_jobs {
            pending_job(j, emit);
        }
    }

    /// 10% of the cluster's allocatable CPU, as a quantity (`q-9`'s capability).
    fn tenth_of_cluster_cpu(&self) -> String {
        let cores: u64 = (0..self.nodes)
            .map(|i| if is_gpu_node(i) { 96 } else { 64 })
            .sum();
        if cores.is_multiple_of(10) {
            (cores / 10).to_string()
        } else {
            format!("{}m", cores * 100)
        }
    }
}

fn queue(name: &str, weight: i32, cpu_capability: Option<String>) -> Value {
    let mut spec = json!({"weight": weight});
    if let Some(cpu) = cpu_capability {
        spec["capability"] = json!({"cpu": cpu});
    }
    json!({
        "apiVersion": VOLCANO_API,
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
        "status": {"state": "Open"},
    })
}

fn node(i: u64) -> Value {
    let name = node_name(i);
    let gpu = is_gpu_node(i);
    let resources = if gpu {
        json!({"cpu": "96", "memory": "1024Gi", "pods": "110", GPU: "8"})
    } else {
        json!({"cpu": "64", "memory": "256Gi", "pods": "110", "ephemeral-storage": "500Gi"})
    };
    let group = if gpu { "gpu-a100" } else { "cpu-general" };
    let mut spec = Map::new();
    if i.is_multiple_of(97) {
        spec.insert("unschedulable".into(), json!(true));
    }
    if gpu {
        spec.insert(
            "taints".into(),
            json!([{"key": GPU, "value": "present", "effect": "NoSchedule"}]),
        );
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                HOSTNAME_LABEL: name,
                ZONE_LABEL: format!("zone-{}", i % 8),
                NODE_GROUP_LABEL: group,
            },
        },
        "spec": spec,
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    })
}

fn gpu_toleration() -> Value {
    json!([{"key": GPU, "operator": "Equal", "value": "present", "effect": "NoSchedule"}])
}

fn pod_group(
    name: &str,
    size: u64,
    queue: String,
    priority_class: Option<&str>,
    phase: &str,
    created: Time,
) -> Value {
    let mut spec = json!({"minMember": size, "queue": queue});
    if let Some(pc) = priority_class {
        spec["priorityClassName"] = json!(pc);
    }
    let mut status = json!({"phase": phase});
    if phase == "Running" {
        status["running"] = json!(size);
    }
    json!({
        "apiVersion": VOLCANO_API,
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "creationTimestamp": created.to_string(),
        },
        "spec": spec,
        "status": status,
    })
}

fn running_group_name(g: u64) -> String {
    format!("run-{g:06}")
}

fn running_group(g: u64, size: u64) -> Value {
    pod_group(
        &running_group_name(g),
        size,
        queue_name(g),
        None,
        "Running",
        RUNNING_CREATED,
    )
}

/// A pod's scheduling-relevant fields, before it is written as a manifest.
struct PodSpec<'a> {
    name: String,
    group: &'a str,
    created: Time,
    requests: Value,
    priority_class: Option<(&'a str, i32)>,
    node_selector: Option<Value>,
    gpu: bool,
    node: Option<String>,
}

impl PodSpec<'_> {
    fn manifest(self) -> Value {
        let mut resources = json!({"requests": self.requests});
        if self.gpu {
            resources["limits"] = json!({GPU: "1"});
        }
        let mut spec = json!({
            "schedulerName": SCHEDULER_NAME,
            "containers": [{"name": "main", "image": IMAGE, "resources": resources}],
        });
        if let Some((class, value)) = self.priority_class {
            spec["priorityClassName"] = json!(class);
            spec["priority"] = json!(value);
        }
        if let Some(selector) = self.node_selector {
            spec["nodeSelector"] = selector;
        }
        if self.gpu {
            spec["tolerations"] = gpu_toleration();
        }
        let phase = match &self.node {
            Some(node) => {
                spec["nodeName"] = json!(node);
                "Running"
            }
            None => "Pending",
        };
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": self.name,
                "namespace": NAMESPACE,
                "creationTimestamp": self.created.to_string(),
                "annotations": {GROUP_NAME_ANNOTATION: self.group},
            },
            "spec": spec,
            "status": {"phase": phase},
        })
    }
}

/// Running pod `r`, bound to node `i`.
fn running_pod(r: u64, i: u64) -> Value {
    let g = r / RUNNING_GROUP_SIZE;
    let group = running_group_name(g);
    let gpu = is_gpu_node(i);
    let requests = if gpu {
        json!({"cpu": "8", "memory": "64Gi", GPU: "1"})
    } else {
        json!({"cpu": "4", "memory": "16Gi"})
    };
    PodSpec {
        name: format!("{group}-{}", r % RUNNING_GROUP_SIZE),
        group: &group,
        created: RUNNING_CREATED,
        requests,
        priority_class: None,
        node_selector: None,
        gpu,
        node: Some(node_name(i)),
    }
    .manifest()
}

/// Emits pending job `j`: its PodGroup, then its pods.
pub fn pending_job(j: u64, emit: &mut dyn FnMut(Value)) {
    let shape = JobShape::of(j);
    let name = format!("{JOB_PREFIX}{j:06}");
    let created = Time(PENDING_EPOCH.0 + j as i64);
    let (class, value) = PRIORITY_CLASSES[(j % 3) as usize];
    emit(pod_group(
        &name,
        shape.size(),
        queue_name(j),
        Some(class),
        "Pending",
        created,
    ));
    let (requests, node_selector) = match shape {
        JobShape::Batch => (json!({"cpu": "2", "memory": "8Gi"}), None),
        JobShape::Single => (json!({"cpu": "500m", "memory": "1Gi"}), None),
        JobShape::Zonal => (
            json!({"cpu": "4", "memory": "16Gi"}),
            Some(json!({ZONE_LABEL: format!("zone-{}", j % 8)})),
        ),
        JobShape::Gpu => (
            json!({"cpu": "8", "memory": "64Gi", GPU: "1"}),
            Some(json!({NODE_GROUP_LABEL: "gpu-a100"})),
        ),
    };
    for k in 0..shape.size() {
        emit(
            PodSpec {
                name: format!("{name}-{k}"),
                group: &name,
                created,
                requests: requests.clone(),
                priority_class: Some((class, value)),
                node_selector: node_selector.clone(),
                gpu: shape == JobShape::Gpu,
                node: None,
            }
            .manifest(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn objects(g: GangMixed) -> Vec<Value> {
        let mut v = Vec::new();
        g.generate(&mut |o| v.push(o));
        v
    }

    fn of_kind<'a>(v: &'a [Value], kind: &str) -> Vec<&'a Value> {
        v.iter().filter(|o| o["kind"] == kind).collect()
    }

    const SMALL: GangMixed = GangMixed {
        nodes: 1000,
        pending: 1000,
        seed: 1,
    };

    #[test]
    fn small_has_the_sizes_of_the_table() {
        let c = SMALL.counts();
        assert_eq!((c.nodes, c.running_pods), (1000, 7500));
        assert!((1000..1032).contains(&c.pending_pods), "{c:?}");
        let v = objects(SMALL);
        assert_eq!(v.len() as u64, c.objects());
        assert_eq!(of_kind(&v, "Node").len(), 1000);
        let pods = of_kind(&v, "Pod");
        let running = pods
            .iter()
            .filter(|p| p["status"]["phase"] == "Running")
            .count();
        assert_eq!(running, 7500);
        assert_eq!(pods.len() as u64 - 7500, c.pending_pods);
    }

    #[test]
    fn nodes_follow_the_index_rules() {
        let v = objects(GangMixed {
            nodes: 98,
            pending: 0,
            seed: 1,
        });
        let nodes = of_kind(&v, "Node");
        let (n0, n7, n97) = (nodes[0], nodes[7], nodes[97]);
        assert_eq!(n0["metadata"]["name"], "node-00000");
        assert_eq!(n0["spec"]["unschedulable"], true, "0 % 97 == 0");
        assert_eq!(n97["spec"]["unschedulable"], true);
        assert!(nodes[1]["spec"].get("unschedulable").is_none());
        assert_eq!(n0["status"]["allocatable"]["ephemeral-storage"], "500Gi");
        assert_eq!(n0["metadata"]["labels"][NODE_GROUP_LABEL], "cpu-general");
        assert_eq!(n7["metadata"]["labels"][NODE_GROUP_LABEL], "gpu-a100");
        assert_eq!(n7["metadata"]["labels"][ZONE_LABEL], "zone-7");
        assert_eq!(n7["status"]["capacity"][GPU], "8");
        assert_eq!(n7["spec"]["taints"][0]["effect"], "NoSchedule");
        assert_eq!(n7["metadata"]["labels"][HOSTNAME_LABEL], "node-00007");
    }

    #[test]
    fn q9_capability_is_a_tenth_of_the_cluster_cpu() {
        let g = |nodes| GangMixed {
            nodes,
            pending: 0,
            seed: 1,
        };
        assert_eq!(g(1000).tenth_of_cluster_cpu(), "6800", "875×64 + 125×96");
        assert_eq!(g(1).tenth_of_cluster_cpu(), "6400m");
        let v = objects(g(8));
        let queues = of_kind(&v, "Queue");
        assert_eq!(queues.len(), 11);
        assert_eq!(queues[10]["metadata"]["name"], "q-9");
        assert_eq!(queues[10]["spec"]["weight"], 10);
        assert_eq!(queues[10]["spec"]["capability"]["cpu"], "54400m");
        assert!(queues[9]["spec"].get("capability").is_none());
    }

    #[test]
    fn scheduler_conf_is_the_chart_default() {
        let conf = scheduler_conf();
        assert_eq!(conf.actions, ["enqueue", "allocate", "backfill"]);
        let names: Vec<Vec<&str>> = conf
            .tiers
            .iter()
            .map(|t| t.plugins.iter().map(|p| p.name.as_str()).collect())
            .collect();
        assert_eq!(
            names,
            [
                vec!["priority", "gang", "conformance"],
                vec![
                    "overcommit",
                    "drf",
                    "predicates",
                    "proportion",
                    "nodeorder",
                    "binpack"
                ]
            ]
        );
    }

    #[test]
    fn job_shapes_cycle_every_twenty_jobs() {
        let sizes: Vec<u64> = (0..20).map(|j| JobShape::of(j).size()).collect();
        assert_eq!(&sizes[..12], &[8; 12]);
        assert_eq!(&sizes[12..17], &[1; 5]);
        assert_eq!(&sizes[17..19], &[32; 2]);
        assert_eq!(sizes[19], 8);
    }

    #[test]
    fn pending_jobs_carry_queue_priority_selector_and_toleration() {
        let mut v = Vec::new();
        pending_job(19, &mut |o| v.push(o));
        assert_eq!(v.len(), 9);
        let pg = &v[0];
        assert_eq!(pg["metadata"]["name"], "job-000019");
        assert_eq!(pg["spec"]["queue"], "q-9");
        assert_eq!(pg["spec"]["minMember"], 8);
        assert_eq!(pg["spec"]["priorityClassName"], "normal", "19 % 3 == 1");
        assert_eq!(pg["status"]["phase"], "Pending");
        let pod = &v[1];
        assert_eq!(
            pod["metadata"]["annotations"][GROUP_NAME_ANNOTATION],
            "job-000019"
        );
        assert_eq!(pod["spec"]["schedulerName"], "volcano");
        assert_eq!(pod["spec"]["priority"], 100);
        assert_eq!(pod["spec"]["nodeSelector"][NODE_GROUP_LABEL], "gpu-a100");
        assert_eq!(pod["spec"]["tolerations"][0]["key"], GPU);
        let res = &pod["spec"]["containers"][0]["resources"];
        assert_eq!(
            (res["requests"][GPU].as_str(), res["limits"][GPU].as_str()),
            (Some("1"), Some("1"))
        );
        let mut zonal = Vec::new();
        pending_job(17, &mut |o| zonal.push(o));
        assert_eq!(zonal.len(), 33);
        assert_eq!(zonal[1]["spec"]["nodeSelector"][ZONE_LABEL], "zone-1");
    }

    #[test]
    fn creation_times_increase_with_the_job_index() {
        let created = |j| {
            let mut v = Vec::new();
            pending_job(j, &mut |o| v.push(o));
            Time::parse(v[0]["metadata"]["creationTimestamp"].as_str().unwrap()).unwrap()
        };
        assert!(created(0) < created(1) && created(1) < created(1000));
        assert!(created(2_000_000) < crate::offline::START_TIME);
    }

    #[test]
    fn running_pods_are_bound_in_groups_of_eight() {
        let v = objects(GangMixed {
            nodes: 8,
            pending: 0,
            seed: 1,
        });
        let groups = of_kind(&v, "PodGroup");
        assert_eq!(
            groups.len(),
            8,
            "7×8 + 4 = 60 pods → 7 full groups and one of 4"
        );
        assert_eq!(groups[7]["spec"]["minMember"], 4);
        assert_eq!(groups[7]["status"]["phase"], "Running");
        assert_eq!(groups[1]["spec"]["queue"], "q-1");
        let pods = of_kind(&v, "Pod");
        assert_eq!(pods[0]["spec"]["nodeName"], "node-00000");
        assert_eq!(pods[0]["metadata"]["name"], "run-000000-0");
        let gpu_pod = pods[56];
        assert_eq!(gpu_pod["spec"]["nodeName"], "node-00007");
        assert_eq!(
            gpu_pod["metadata"]["annotations"][GROUP_NAME_ANNOTATION],
            "run-000007"
        );
        assert_eq!(
            gpu_pod["spec"]["containers"][0]["resources"]["requests"][GPU],
            "1"
        );
    }
}
