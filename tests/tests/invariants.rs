//! Invariants over random clusters: for every scheduler configuration of the conformance
//! folders, random clusters (nodes with taints, labels, readiness and cordons; weighted queues
//! with capabilities; gangs with minMember and minResources; pods with selectors, tolerations and
//! priorities; PodDisruptionBudgets) run five cycles with churn between them, and after every
//! cycle nothing the scheduler may never do has happened:
//!
//! - no node holds more than its allocatable, in cpu, memory or pods;
//! - where the `predicates` plugin filters, no pod is bound to a cordoned node, a node whose
//!   NoSchedule taints it does not tolerate (the `not-ready` taint of a node that stopped
//!   reporting among them: Volcano reads no node condition), or a node its nodeSelector does not
//!   match;
//! - where `gang` decides readiness, no gang that got pods bound is left below its minMember;
//! - where `proportion` or `capacity` guards queues, no queue that got pods bound ends over its
//!   capability;
//! - where `pdb` filters victims in the first tier, no pod a budget with no disruption left
//!   protects is evicted;
//! - no pod is bound twice;
//! - the decisions are the same at 1 and 4 threads;
//! - at 1 thread every cycle passes the checking mode: the same cycle from scratch, with job
//!   and task ids assigned in another order, decides the same.
//!
//! The suite runs about `TEPHRA_INVARIANT_CLUSTERS` clusters in all (default 210, spread evenly
//! over the configurations); the long form runs 10,000: `TEPHRA_INVARIANT_CLUSTERS=10000 cargo test
//! --release -p tephra-tests --test invariants`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tephra_adapters::manifest::{decode_documents, parse_documents};
use tephra_adapters::offline::{DEFAULT_QUEUE, START_TIME};
use tephra_cache::cycle::CycleDriver;
use tephra_cache::{ClusterEvent, ClusterState, ObjectKind};
use tephra_engine::api::Time;
use tephra_engine::config::{Point, SchedulerConfig};
use tephra_engine::framework::Decisions;
use tephra_engine::plugins::builtin_registry;

const CYCLES: usize = 5;

/// xorshift64*: small, seeded, the same on every machine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// What the checks need to know of a pod, kept by the generator (not read back through the
/// engine's own parsing, so the checks do not share its mistakes).
#[derive(Clone, Debug)]
struct PodFacts {
    group: String,
    queue: String,
    cpu_milli: u64,
    memory_mib: u64,
    node_selector: BTreeMap<String, String>,
    tolerates_dedicated: bool,
    labels: BTreeMap<String, String>,
}

#[derive(Clone, Debug)]
struct NodeFacts {
    cpu_milli: u64,
    memory_mib: u64,
    pods: u64,
    labels: BTreeMap<String, String>,
    dedicated_taint: bool,
    ready: bool,
    unschedulable: bool,
}

/// A random cluster as objects, and the facts the checks read.
struct Cluster {
    objects: Vec<Value>,
    pods: HashMap<String, PodFacts>,
    nodes: BTreeMap<String, NodeFacts>,
    min_member: HashMap<String, u64>,
    capability_cpu: HashMap<String, u64>,
    /// Label `app` values of the jobs a budget with no disruption left protects.
    protected_apps: BTreeSet<String>,
    next_job: usize,
}

const CPUS: [u64; 3] = [500, 1000, 2000];
const MEMORIES: [u64; 3] = [512, 1024, 2048];
const ZONES: [&str; 3] = ["a", "b", "c"];
const QUEUES: [&str; 4] = ["default", "q1", "q2", "q3"];

impl Cluster {
    fn generate(rng: &mut Rng) -> Cluster {
        let mut c = Cluster {
            objects: Vec::new(),
            pods: HashMap::new(),
            nodes: BTreeMap::new(),
            min_member: HashMap::new(),
            capability_cpu: HashMap::new(),
            protected_apps: BTreeSet::new(),
            next_job: 0,
        };
        for (name, value) in [("high", 1000), ("low", 10)] {
            c.objects.push(
                json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": name}, "value": value}),
            );
        }
        for (i, q) in QUEUES.iter().enumerate() {
            let mut spec = json!({"weight": 1 + rng.below(4)});
            if i > 0 && rng.chance(40) {
                let cpu = 2000 + 1000 * rng.below(6);
                spec["capability"] = json!({"cpu": format!("{cpu}m")});
                c.capability_cpu.insert(q.to_string(), cpu);
            }
            c.objects.push(
                json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                "metadata": {"name": q}, "spec": spec, "status": {"state": "Open"}}),
            );
        }
        for i in 0..4 + rng.below(10) {
            let facts = NodeFacts {
                cpu_milli: *rng.pick(&[4000, 8000, 16000]),
                memory_mib: *rng.pick(&[8192, 16384, 32768]),
                pods: *rng.pick(&[6, 110]),
                labels: [("zone".to_string(), rng.pick(&ZONES).to_string())].into(),
                dedicated_taint: rng.chance(20),
                ready: !rng.chance(10),
                unschedulable: rng.chance(10),
            };
            c.add_node(&format!("n{i}"), facts);
        }
        let running = c.nodes.keys().cloned().collect::<Vec<_>>();
        // Half the gangs already run where they fit, so pending ones often find the cluster full
        // and preempt and reclaim have victims to choose.
        for _ in 0..4 + rng.below(12) {
            let node = rng.chance(50).then(|| rng.pick(&running).clone());
            c.add_job(rng, node.as_deref());
        }
        c
    }

    fn add_node(&mut self, name: &str, f: NodeFacts) {
        let mut spec = json!({});
        let mut taints = Vec::new();
        if f.dedicated_taint {
            taints.push(json!({"key": "dedicated", "value": "x", "effect": "NoSchedule"}));
        }
        if !f.ready {
            taints.push(json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}));
        }
        if !taints.is_empty() {
            spec["taints"] = json!(taints);
        }
        if f.unschedulable {
            spec["unschedulable"] = json!(true);
        }
        let allocatable = json!({"cpu": format!("{}m", f.cpu_milli),
            "memory": format!("{}Mi", f.memory_mib), "pods": f.pods.to_string()});
        self.objects.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": f.labels},
            "spec": spec,
            "status": {"allocatable": allocatable, "capacity": allocatable,
                "conditions": [{"type": "Ready", "status": if f.ready {"True"} else {"False"}}]}}));
        self.nodes.insert(name.to_string(), f);
    }

    /// A gang; running on `node` (all its pods, when they fit) or pending.
    fn add_job(&mut self, rng: &mut Rng, node: Option<&str>) {
        let j = self.next_job;
        self.next_job += 1;
        let name = format!("job{j}");
        let queue = rng.pick(&QUEUES).to_string();
        let min_member = 1 + rng.below(4);
        let size = min_member + rng.below(3);
        let priority = *rng.pick(&["high", "low"]);
        let (cpu, memory) = (*rng.pick(&CPUS), *rng.pick(&MEMORIES));
        let node_selector: BTreeMap<String, String> = if rng.chance(20) {
            [("zone".to_string(), rng.pick(&ZONES).to_string())].into()
        } else {
            BTreeMap::new()
        };
        let tolerates_dedicated = rng.chance(30);
        let running_on = node.filter(|n| self.fits(n, size, cpu, memory));
        let mut spec =
            json!({"queue": queue, "minMember": min_member, "priorityClassName": priority});
        if rng.chance(30) {
            spec["minResources"] = json!({"cpu": format!("{}m", cpu * min_member)});
        }
        let phase = if running_on.is_some() {
            "Running"
        } else {
            *rng.pick(&["Pending", "Inqueue"])
        };
        self.objects.push(
            json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ns"}, "spec": spec,
            "status": {"phase": phase}}),
        );
        self.min_member.insert(format!("ns/{name}"), min_member);
        if rng.chance(25) {
            let allowed = rng.below(2);
            self.objects.push(
                json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": format!("pdb-{name}"), "namespace": "ns"},
                "spec": {"selector": {"matchLabels": {"app": name}}},
                "status": {"disruptionsAllowed": allowed}}),
            );
            if allowed == 0 {
                self.protected_apps.insert(name.clone());
            }
        }
        for t in 0..size {
            let pod = format!("{name}-{t}");
            let labels: BTreeMap<String, String> = [("app".to_string(), name.clone())].into();
            let mut pod_spec = json!({"schedulerName": "volcano", "priorityClassName": priority,
                "containers": [{"name": "c", "resources": {"requests":
                    {"cpu": format!("{cpu}m"), "memory": format!("{memory}Mi")}}}]});
            if !node_selector.is_empty() {
                pod_spec["nodeSelector"] = json!(node_selector);
            }
            if tolerates_dedicated {
                pod_spec["tolerations"] =
                    json!([{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]);
            }
            let status = if let Some(n) = running_on {
                pod_spec["nodeName"] = json!(n);
                json!({"phase": "Running"})
            } else {
                json!({"phase": "Pending"})
            };
            self.objects.push(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": pod, "namespace": "ns", "uid": format!("uid-{pod}"),
                    "labels": labels,
                    "annotations": {"scheduling.k8s.io/group-name": name},
                    "creationTimestamp": format!("2025-01-01T00:00:{:02}Z", j % 60)},
                "spec": pod_spec, "status": status}));
            self.pods.insert(
                format!("ns/{pod}"),
                PodFacts {
                    group: format!("ns/{name}"),
                    queue: queue.clone(),
                    cpu_milli: cpu,
                    memory_mib: memory,
                    node_selector: node_selector.clone(),
                    tolerates_dedicated,
                    labels,
                },
            );
        }
    }

    /// Whether `count` more pods of this size fit on `node` beside the pods generated on it.
    fn fits(&self, node: &str, count: u64, cpu: u64, memory: u64) -> bool {
        let f = &self.nodes[node];
        let on_node = self
            .objects
            .iter()
            .filter(|o| o["kind"] == "Pod" && o["spec"]["nodeName"] == node);
        let (mut c, mut m, mut p) = (0, 0, 0);
        for o in on_node {
            let facts = &self.pods[&format!("ns/{}", o["metadata"]["name"].as_str().unwrap())];
            c += facts.cpu_milli;
            m += facts.memory_mib;
            p += 1;
        }
        c + count * cpu <= f.cpu_milli && m + count * memory <= f.memory_mib && p + count <= f.pods
    }
}

/// What the configuration makes the scheduler guarantee.
struct Guarantees {
    filters: bool,
    gang_ready: bool,
    queue_capability: bool,
    pdb_first: bool,
}

impl Guarantees {
    fn of(conf: &SchedulerConfig) -> Guarantees {
        let enabled = |name: &str, point: Point| {
            conf.tiers
                .iter()
                .flat_map(|t| &t.plugins)
                .any(|p| p.name == name && p.enabled(point))
        };
        Guarantees {
            filters: enabled("predicates", Point::Predicate),
            gang_ready: enabled("gang", Point::JobReady),
            queue_capability: enabled("proportion", Point::Allocatable)
                || enabled("capacity", Point::Allocatable),
            pdb_first: conf.tiers.first().is_some_and(|t| {
                t.plugins.iter().any(|p| {
                    p.name == "pdb"
                        && p.enabled(Point::Preemptable)
                        && p.enabled(Point::Reclaimable)
                })
            }),
        }
    }
}

/// Each distinct scheduler configuration of the conformance folders whose plugins are all
/// built in, by the first case that uses it.
fn configurations() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let registry = builtin_registry();
    let mut seen = BTreeMap::new();
    for folder in ["conformance", "conformance-plugins", "scenarios/pdb"] {
        let mut files = Vec::new();
        for dir in std::fs::read_dir(root.join(folder)).expect("the folder exists") {
            let dir = dir.unwrap().path();
            if dir.is_dir() {
                files.extend(std::fs::read_dir(&dir).unwrap().map(|f| f.unwrap().path()));
            } else if dir.extension().is_some_and(|e| e == "yaml") {
                files.push(dir);
            }
        }
        files.sort();
        for file in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "yaml"))
        {
            let text = std::fs::read_to_string(file).unwrap();
            let docs = parse_documents(&text, &file.display().to_string()).unwrap();
            let Some(conf) = docs[0]["schedulerConf"].as_str() else {
                continue;
            };
            // Cases that test a plugin alone may configure no action: nothing to run.
            let Ok(parsed) = SchedulerConfig::parse(conf) else {
                continue;
            };
            let all_built_in = parsed
                .tiers
                .iter()
                .flat_map(|t| &t.plugins)
                .all(|p| registry.get(&p.name).is_some());
            if all_built_in {
                seen.entry(conf.to_string())
                    .or_insert_with(|| file.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    seen.into_iter().map(|(conf, case)| (case, conf)).collect()
}

fn pod_key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// The decisions that must not depend on the thread count, as text.
fn summary(d: &Decisions) -> String {
    let mut out = String::new();
    for b in &d.binds {
        out += &format!("bind {}/{} {}\n", b.namespace, b.name, b.node);
    }
    for e in &d.evictions {
        out += &format!("evict {}/{}\n", e.namespace, e.name);
    }
    for p in &d.pipelined {
        out += &format!("pipeline {}/{} {}\n", p.namespace, p.name, p.node);
    }
    out
}

/// Runs the cluster of `seed` for `CYCLES` cycles at `threads`, checking the invariants after
/// each; the decisions of every cycle, as text.
fn run(case: &str, conf: &SchedulerConfig, seed: u64, threads: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let mut cluster = Cluster::generate(&mut rng);
    let objects = decode_documents(cluster.objects.clone(), "random cluster")
        .unwrap_or_else(|e| panic!("seed {seed}: the random cluster loads: {e}"))
        .objects;
    let mut state = ClusterState::from_objects(objects);
    let driver = CycleDriver::new(Arc::new(conf.clone()), DEFAULT_QUEUE).checking(threads == 1);
    let registry = builtin_registry();
    let guarantees = Guarantees::of(conf);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut summaries = Vec::new();
    for cycle in 0..CYCLES {
        let context = format!("{case}, seed {seed}, cycle {cycle}, {threads} threads");
        let before: HashMap<String, String> = state
            .pods()
            .map(|p| {
                (
                    pod_key(&p.metadata.namespace, &p.metadata.name),
                    p.spec.node_name.clone(),
                )
            })
            .collect();
        let now = Time(START_TIME.0 + 10 * cycle as i64);
        let decisions = pool
            .install(|| {
                driver.run(
                    &mut state,
                    &registry,
                    now,
                    format!("s{cycle}").into(),
                    &mut (),
                )
            })
            .unwrap_or_else(|e| panic!("{context}: the cycle runs: {e:?}"));
        check(&context, &cluster, &guarantees, &state, &before, &decisions);
        summaries.push(summary(&decisions));
        churn(&mut rng, &mut cluster, &mut state);
    }
    summaries
}

fn check(
    context: &str,
    cluster: &Cluster,
    g: &Guarantees,
    state: &ClusterState,
    before: &HashMap<String, String>,
    d: &Decisions,
) {
    let mut bound_now = BTreeSet::new();
    for b in &d.binds {
        let key = pod_key(&b.namespace, &b.name);
        assert!(
            bound_now.insert(key.clone()),
            "{context}: {key} bound twice in one cycle"
        );
        let earlier = before.get(&key).map_or("", String::as_str);
        assert!(
            earlier.is_empty(),
            "{context}: {key} bound to {} while on {earlier}",
            b.node
        );
        let node = &cluster.nodes[&b.node];
        let pod = &cluster.pods[&key];
        if g.filters {
            assert!(
                node.ready,
                "{context}: {key} bound to {}, tainted not-ready",
                b.node
            );
            assert!(
                !node.unschedulable,
                "{context}: {key} bound to cordoned {}",
                b.node
            );
            assert!(
                !node.dedicated_taint || pod.tolerates_dedicated,
                "{context}: {key} bound to {}, whose taint it does not tolerate",
                b.node
            );
            for (k, v) in &pod.node_selector {
                assert_eq!(
                    node.labels.get(k),
                    Some(v),
                    "{context}: {key} on {} against its nodeSelector",
                    b.node
                );
            }
        }
    }
    // Per node, per queue and per gang, what the pods placed now hold.
    let mut on_node: HashMap<&str, (u64, u64, u64)> = HashMap::new();
    let mut queue_cpu: HashMap<&str, u64> = HashMap::new();
    let mut gang_placed: HashMap<&str, u64> = HashMap::new();
    for p in state.pods() {
        let node = p.spec.node_name.as_str();
        if node.is_empty() || matches!(p.status.phase.as_str(), "Succeeded" | "Failed") {
            continue;
        }
        let facts = &cluster.pods[&pod_key(&p.metadata.namespace, &p.metadata.name)];
        let n = on_node.entry(node).or_default();
        n.0 += facts.cpu_milli;
        n.1 += facts.memory_mib;
        n.2 += 1;
        if p.metadata.deletion_timestamp.is_none() {
            *queue_cpu.entry(&facts.queue).or_default() += facts.cpu_milli;
            *gang_placed.entry(&facts.group).or_default() += 1;
        }
    }
    for (node, (cpu, memory, pods)) in &on_node {
        let f = &cluster.nodes[*node];
        assert!(
            *cpu <= f.cpu_milli && *memory <= f.memory_mib && *pods <= f.pods,
            "{context}: {node} holds cpu {cpu}m of {}m, memory {memory}Mi of {}Mi, {pods} pods of {}",
            f.cpu_milli,
            f.memory_mib,
            f.pods
        );
    }
    let bound_groups: BTreeSet<&str> = bound_now
        .iter()
        .map(|k| cluster.pods[k].group.as_str())
        .collect();
    if g.gang_ready {
        for group in &bound_groups {
            let placed = gang_placed.get(group).copied().unwrap_or(0);
            let min = cluster.min_member[*group];
            assert!(
                placed >= min,
                "{context}: {group} has {placed} pods placed, below minMember {min}"
            );
        }
    }
    if g.queue_capability {
        let bound_queues: BTreeSet<&str> = bound_now
            .iter()
            .map(|k| cluster.pods[k].queue.as_str())
            .collect();
        for queue in bound_queues {
            if let Some(cap) = cluster.capability_cpu.get(queue) {
                let used = queue_cpu.get(queue).copied().unwrap_or(0);
                assert!(
                    used <= *cap,
                    "{context}: queue {queue} holds {used}m, over its capability {cap}m"
                );
            }
        }
    }
    let mut evicted = BTreeSet::new();
    for e in &d.evictions {
        let key = pod_key(&e.namespace, &e.name);
        assert!(
            evicted.insert(key.clone()),
            "{context}: {key} evicted twice in one cycle"
        );
        if g.pdb_first {
            let app = &cluster.pods[&key].labels["app"];
            assert!(
                !cluster.protected_apps.contains(app),
                "{context}: {key} evicted though its budget allows no disruption"
            );
        }
    }
}

/// Between cycles: evicted pods go, a running pod finishes now and then, a node is cordoned or
/// uncordoned, and new gangs arrive.
fn churn(rng: &mut Rng, cluster: &mut Cluster, state: &mut ClusterState) {
    let mut gone: Vec<(String, String)> = state
        .pods()
        .filter(|p| p.metadata.deletion_timestamp.is_some())
        .map(|p| (p.metadata.namespace.clone(), p.metadata.name.clone()))
        .collect();
    let running: Vec<(String, String)> = state
        .pods()
        .filter(|p| !p.spec.node_name.is_empty() && p.metadata.deletion_timestamp.is_none())
        .map(|p| (p.metadata.namespace.clone(), p.metadata.name.clone()))
        .collect();
    if !running.is_empty() && rng.chance(50) {
        gone.push(rng.pick(&running).clone());
    }
    for (namespace, name) in gone {
        state.apply_event(ClusterEvent::Delete {
            kind: ObjectKind::Pod,
            namespace,
            name,
        });
    }
    let first_new = cluster.objects.len();
    if rng.chance(40) {
        let names: Vec<String> = cluster.nodes.keys().cloned().collect();
        let name = rng.pick(&names).clone();
        let mut facts = cluster.nodes[&name].clone();
        facts.unschedulable = !facts.unschedulable;
        cluster.add_node(&name, facts);
    }
    for _ in 0..rng.below(3) {
        cluster.add_job(rng, None);
    }
    let new = cluster.objects[first_new..].to_vec();
    for object in decode_documents(new, "churn")
        .expect("the churn loads")
        .objects
    {
        state.apply_event(ClusterEvent::Upsert(object));
    }
}

#[test]
fn random_clusters_keep_the_invariants_and_decide_alike_at_any_thread_count() {
    let total: u64 = std::env::var("TEPHRA_INVARIANT_CLUSTERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(210);
    let configurations = configurations();
    assert!(
        configurations.len() > 10,
        "the conformance folders give configurations"
    );
    let per_conf = total.div_ceil(configurations.len() as u64);
    let mut clusters = 0;
    let mut binds = 0;
    let mut evictions = 0;
    for (i, (case, conf)) in configurations.iter().enumerate() {
        let conf = SchedulerConfig::parse(conf).unwrap();
        for k in 0..per_conf {
            let seed = (i as u64) << 32 | k;
            let one = run(case, &conf, seed, 1);
            let four = run(case, &conf, seed, 4);
            assert_eq!(
                one, four,
                "{case}, seed {seed}: decisions differ between 1 and 4 threads"
            );
            binds += one
                .iter()
                .map(|s| s.matches("bind ").count())
                .sum::<usize>();
            evictions += one
                .iter()
                .map(|s| s.matches("evict ").count())
                .sum::<usize>();
            clusters += 1;
        }
    }
    eprintln!(
        "{clusters} random clusters over {} configurations, {CYCLES} cycles each: {binds} binds, {evictions} evictions, every invariant held",
        configurations.len()
    );
    assert!(
        binds > clusters as usize,
        "the random clusters get pods placed"
    );
}
