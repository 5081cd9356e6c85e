//! Over several cycles, the CPUs `numa-aware` chose for bound pods stay taken until the node's
//! Numatopology reports those pods, as Volcano's cache keeps its unassigned NUMA pods
//! (Volcano: pkg/scheduler/api/node_info.go, RefreshNumaSchedulerInfoByCrd).

use tephra_adapters::manifest::parse_manifest;
use tephra_adapters::simulate::run_cycles;
use tephra_cache::{ClusterEvent, ClusterState};
use tephra_engine::config::SchedulerConfig;
use tephra_engine::plugins::builtin_registry;

const CONF: &str = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: numa-aware\n";

/// n1: 16 CPUs by its allocatable, and by its Numatopology two NUMA nodes of four CPUs
/// (0-3, 4-7) under single-numa-node, reporting the pods in `reported`.
fn numatopology(reported: &str) -> String {
    let cpus: Vec<String> = (0..8)
        .map(|c| format!("'{c}': {{numa: {}, socket: {}, core: {c}}}", c / 4, c / 4))
        .collect();
    format!(
        "kind: Numatopology\nmetadata: {{name: n1}}\nspec: {{policies: {{CPUManagerPolicy: static, TopologyManagerPolicy: single-numa-node}}, numares: {{cpu: {{allocatable: '0-7'}}}}, cpuDetail: {{{}}}, podAllocations: [{reported}]}}\n",
        cpus.join(", ")
    )
}

/// A job of one Guaranteed pod asking single-numa-node and 4 CPUs.
fn job(name: &str) -> String {
    format!(
        "---\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{queue: default, minMember: 1}}\nstatus: {{phase: Inqueue}}\n---\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, uid: u-{name}, annotations: {{scheduling.k8s.io/group-name: {name}, volcano.sh/numa-topology-policy: single-numa-node}}}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: '4', memory: 1Gi}}, limits: {{cpu: '4', memory: 1Gi}}}}}}]}}\nstatus: {{phase: Pending}}\n"
    )
}

fn binds(state: &mut ClusterState) -> Vec<String> {
    let conf = SchedulerConfig::parse(CONF).unwrap();
    let reports = run_cycles(state, &conf, &builtin_registry(), 1).unwrap();
    reports[0]
        .binds
        .iter()
        .map(|(pod, _)| pod.clone())
        .collect()
}

#[test]
fn booked_cpus_stay_taken_until_the_numatopology_reports_their_pods() {
    let text = format!(
        "kind: Queue\nmetadata: {{name: default}}\n---\nkind: Node\nmetadata: {{name: n1}}\nstatus: {{allocatable: {{cpu: '16', memory: 32Gi, pods: '110'}}}}\n---\n{}{}",
        numatopology(""),
        job("a") + &job("b"),
    );
    let mut state = ClusterState::from_objects(parse_manifest(&text, "test").unwrap().objects);
    assert_eq!(binds(&mut state), ["ns/a", "ns/b"], "one NUMA node each");
    let late = parse_manifest(&job("c"), "test").unwrap().objects;
    for o in late {
        state.apply_event(ClusterEvent::Upsert(o));
    }
    assert!(
        binds(&mut state).is_empty(),
        "a and b still hold both NUMA nodes"
    );
    let reported = parse_manifest(&numatopology("{uid: u-a}, {name: b, namespace: ns}"), "t")
        .unwrap()
        .objects;
    state.apply_event(ClusterEvent::Upsert(reported.into_iter().next().unwrap()));
    assert_eq!(
        binds(&mut state),
        ["ns/c"],
        "once both are reported, the node's own allocatable list is read"
    );
}
