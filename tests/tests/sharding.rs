//! A shard that changes between cycles (docs/sharding.md, "At a shard's edge"): cycles run
//! through the scheduler's driver on one cache, the NodeShards rewritten in between as the
//! sharding controller would.

use std::sync::Arc;

use tephra_adapters::manifest::{decode_documents, parse_documents};
use tephra_adapters::offline::DEFAULT_QUEUE;
use tephra_cache::cycle::CycleDriver;
use tephra_cache::{ClusterEvent, ClusterState, Sharding};
use tephra_engine::api::{ClusterObject, Time};
use tephra_engine::config::SchedulerConfig;
use tephra_engine::plugins::builtin_registry;
use tephra_engine::snapshot::ShardingMode;

const CONF: &str = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n  - name: nodeorder\n";

/// Four one-CPU pods of a gang that is ready at two, nodes n1 and n2 with two CPUs each.
const CLUSTER: &str = "
{apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: default}, spec: {weight: 1}}
---
{apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '2', memory: 8Gi, pods: '110'}}}
---
{apiVersion: v1, kind: Node, metadata: {name: n2}, status: {allocatable: {cpu: '2', memory: 8Gi, pods: '110'}}}
---
{apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: g, namespace: ns}, spec: {queue: default, minMember: 2}, status: {phase: Inqueue}}
";

/// The objects of YAML documents (flow mappings, each after a `---`).
fn objects(text: &str) -> Vec<ClusterObject> {
    let docs = parse_documents(&format!("---\n{text}"), "test").unwrap();
    decode_documents(docs, "test").unwrap().objects
}

fn pods() -> String {
    (0..4)
        .map(|i| {
            format!(
                "---\n{{apiVersion: v1, kind: Pod, metadata: {{name: p{i}, namespace: ns, uid: ns-p{i}, \
                 annotations: {{scheduling.k8s.io/group-name: g}}}}, spec: {{schedulerName: volcano, \
                 containers: [{{name: c, resources: {{requests: {{cpu: '1', memory: 1Gi}}}}}}]}}, status: {{phase: Pending}}}}\n"
            )
        })
        .collect()
}

fn shard(nodes: &str) -> ClusterObject {
    let text = format!(
        "{{apiVersion: shard.volcano.sh/v1alpha1, kind: NodeShard, metadata: {{name: mine}}, spec: {{nodesDesired: [{nodes}]}}}}"
    );
    objects(&text).remove(0)
}

/// The cluster and its gang under hard sharding, the scheduler's shard naming `nodes`, and a
/// driver in checking mode.
fn hard_sharded(nodes: &str) -> (ClusterState, CycleDriver) {
    let mut all = objects(CLUSTER);
    all.extend(objects(&pods()));
    all.push(shard(nodes));
    let mut state = ClusterState::from_objects(all);
    state.set_sharding(Sharding {
        mode: ShardingMode::Hard,
        name: "mine".into(),
    });
    let conf = SchedulerConfig::parse(CONF).unwrap();
    let driver = CycleDriver::new(Arc::new(conf), DEFAULT_QUEUE).checking(true);
    (state, driver)
}

/// Runs one cycle and returns its binds as `pod -> node`, sorted.
fn cycle(driver: &CycleDriver, state: &mut ClusterState, n: i64) -> Vec<(String, String)> {
    let now = Time(1_750_000_000 + n);
    let decisions = driver
        .run(
            state,
            &builtin_registry(),
            now,
            format!("s{n}").into(),
            &mut (),
        )
        .expect("the cycle runs");
    let mut binds: Vec<(String, String)> = decisions
        .binds
        .iter()
        .map(|b| (b.name.to_string(), b.node.clone()))
        .collect();
    binds.sort();
    binds
}

#[test]
fn a_gang_half_placed_when_its_nodes_leave_the_shard_finishes_on_the_nodes_that_joined() {
    let (mut state, driver) = hard_sharded("n1");

    let first = cycle(&driver, &mut state, 1);
    assert_eq!(
        first,
        [("p0".into(), "n1".into()), ("p1".into(), "n1".into())],
        "the shard's one node takes the gang's minimum"
    );

    // The controller moves the shard from n1 to n2 while p2 and p3 are pending.
    state.apply_event(ClusterEvent::Upsert(shard("n2")));
    let second = cycle(&driver, &mut state, 2);
    assert_eq!(
        second,
        [("p2".into(), "n2".into()), ("p3".into(), "n2".into())],
        "the rest of the gang goes to the node that joined; nothing is bound again"
    );
    let third = cycle(&driver, &mut state, 3);
    assert!(third.is_empty(), "nothing left to bind: {third:?}");
}

#[test]
fn a_shard_that_names_only_missing_nodes_places_nothing_until_one_joins() {
    let (mut state, driver) = hard_sharded("n3, n4");
    assert!(cycle(&driver, &mut state, 1).is_empty());
    let n3 = "{apiVersion: v1, kind: Node, metadata: {name: n3}, status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}";
    state.apply_event(ClusterEvent::Upsert(objects(n3).remove(0)));
    let binds = cycle(&driver, &mut state, 2);
    assert_eq!(binds.len(), 4, "{binds:?}");
    assert!(binds.iter().all(|(_, n)| n == "n3"), "{binds:?}");
}
