//! The plugin through the harness: predicate, score and the annotations a bind carries.

use super::*;
use crate::framework::Session;
use crate::harness::find::{node_id, task};
use crate::harness::{conf, session};

/// Queue `q` and an admitted PodGroup `ns/pg`.
const JOB: &str = "- {kind: Queue, metadata: {name: q}}\n- {kind: PodGroup, metadata: {name: pg, namespace: ns}, spec: {queue: q, minMember: 1}, status: {phase: Inqueue}}\n";

const SHARING: &str = "deviceshare.GPUSharingEnable: true";
const VGPU: &str = "deviceshare.VGPUEnable: true";

/// A node with `cards` shared GPUs of `memory` each (capacity as Volcano's device plugin
/// advertises it).
fn gpu_node(name: &str, cards: u64, memory: u64, annotations: &str) -> String {
    format!(
        "- {{kind: Node, metadata: {{name: {name}, annotations: {{{annotations}}}}}, status: {{capacity: {{volcano.sh/gpu-memory: '{}', volcano.sh/gpu-number: '{cards}'}}, allocatable: {{cpu: '8', memory: 8Gi, pods: '10', volcano.sh/gpu-memory: '{}', volcano.sh/gpu-number: '{cards}'}}}}}}\n",
        memory * cards,
        memory * cards
    )
}

/// A node registering vGPU cards `(uuid, memory)`, ten slots each.
fn vgpu_node(name: &str, cards: &[(&str, u64)]) -> String {
    let register: String = cards
        .iter()
        .map(|(uuid, mem)| format!("{uuid},10,{mem},NVIDIA-A100,true,hami-core:"))
        .collect();
    format!(
        "- {{kind: Node, metadata: {{name: {name}, annotations: {{volcano.sh/node-vgpu-register: '{register}'}}}}, status: {{allocatable: {{cpu: '8', memory: 8Gi, pods: '10', volcano.sh/vgpu-number: '20', volcano.sh/vgpu-memory: '80000', volcano.sh/vgpu-cores: '200'}}}}}}\n"
    )
}

/// A pod of job `ns/pg` limiting `resources`; running on `node` with `annotations` when given.
fn gpu_pod(name: &str, resources: &str, node: Option<&str>, annotations: &str) -> String {
    let (node, phase) = match node {
        Some(n) => (format!("nodeName: {n}, "), "Running"),
        None => (String::new(), "Pending"),
    };
    format!(
        "- {{kind: Pod, metadata: {{name: {name}, namespace: ns, uid: {name}, annotations: {{scheduling.k8s.io/group-name: pg, {annotations}}}}}, spec: {{{node}containers: [{{name: c, resources: {{requests: {{cpu: 100m}}, limits: {{{resources}}}}}}}]}}, status: {{phase: {phase}}}}}\n"
    )
}

/// A session of `deviceshare` with `args` beside `predicates`, whose allocate handler is where
/// Volcano takes the cards.
fn open(args: &str, objects: &[String]) -> Session {
    let conf = format!("{}  - name: predicates\n", conf("deviceshare", args));
    session(&conf, &[JOB.to_string(), objects.concat()].concat())
}

/// PrePredicate then Predicate of `ns/<pod>` on `node`: the failure reasons, joined.
fn fits(ssn: &Session, pod: &str, node: &str) -> Result<(), String> {
    let t = task(ssn, &format!("ns/{pod}"));
    ssn.pre_predicate(t).expect("pre-predicate");
    ssn.predicate(t, node_id(ssn, node))
        .map_err(|e| e.reasons().collect::<Vec<_>>().join(","))
}

/// Runs allocate and returns each bound pod's node and annotations.
fn binds(ssn: Session) -> BTreeMap<String, (String, BTreeMap<String, String>)> {
    bind_decisions(ssn)
        .into_iter()
        .map(|b| (b.name.to_string(), (b.node, b.annotations)))
        .collect()
}

fn bind_decisions(mut ssn: Session) -> Vec<crate::framework::Bind> {
    crate::actions::run(&mut ssn, crate::config::Action::Allocate);
    ssn.close().binds
}

#[test]
fn shared_gpu_memory_fits_a_card_with_enough_left() {
    let ssn = open(
        SHARING,
        &[
            gpu_node("n1", 2, 1000, ""),
            gpu_pod(
                "a",
                "volcano.sh/gpu-memory: '700'",
                Some("n1"),
                "volcano.sh/gpu-index: '0'",
            ),
            gpu_pod(
                "b",
                "volcano.sh/gpu-memory: '700'",
                Some("n1"),
                "volcano.sh/gpu-index: '1'",
            ),
            gpu_pod("small", "volcano.sh/gpu-memory: '300'", None, ""),
            gpu_pod("big", "volcano.sh/gpu-memory: '400'", None, ""),
        ],
    );
    assert_eq!(fits(&ssn, "small", "n1"), Ok(()));
    assert_eq!(
        fits(&ssn, "big", "n1"),
        Err("GpuShare no enough gpu memory on node n1".into())
    );
}

#[test]
fn a_pod_without_a_device_ask_is_not_checked() {
    let ssn = open(
        SHARING,
        &[
            gpu_node("n1", 1, 10, ""),
            gpu_pod("p", "cpu: '1'", None, ""),
        ],
    );
    assert_eq!(fits(&ssn, "p", "n1"), Ok(()));
}

#[test]
fn gpu_memory_is_ignored_unless_sharing_is_enabled() {
    let ssn = open(
        VGPU,
        &[
            gpu_node("n1", 1, 10, ""),
            gpu_pod("p", "volcano.sh/gpu-memory: '100'", None, ""),
        ],
    );
    assert_eq!(fits(&ssn, "p", "n1"), Ok(()));
}

#[test]
fn the_bind_names_the_card_and_the_predicate_time() {
    let b = binds(open(
        SHARING,
        &[
            gpu_node("n1", 2, 1000, ""),
            gpu_pod(
                "a",
                "volcano.sh/gpu-memory: '700'",
                Some("n1"),
                "volcano.sh/gpu-index: '0'",
            ),
            gpu_pod("p", "volcano.sh/gpu-memory: '500'", None, ""),
        ],
    ));
    let (node, ann) = &b["p"];
    assert_eq!(node, "n1");
    assert_eq!(ann["volcano.sh/gpu-index"], "1");
    assert!(ann.contains_key("volcano.sh/predicate-time"));
}

#[test]
fn gpu_number_takes_whole_idle_cards() {
    let b = binds(open(
        "deviceshare.GPUNumberEnable: true",
        &[
            gpu_node("n1", 3, 1000, ""),
            gpu_pod(
                "a",
                "volcano.sh/gpu-number: '1'",
                Some("n1"),
                "volcano.sh/gpu-index: '0'",
            ),
            gpu_pod("p", "volcano.sh/gpu-number: '2'", None, ""),
        ],
    ));
    assert_eq!(b["p"].1["volcano.sh/gpu-index"], "1,2");
}

#[test]
fn vgpu_bind_carries_the_hami_annotations() {
    let b = binds(open(
        VGPU,
        &[
            vgpu_node("n1", &[("GPU-0", 40000), ("GPU-1", 40000)]),
            gpu_pod(
                "p",
                "volcano.sh/vgpu-number: '1', volcano.sh/vgpu-memory: '1000', volcano.sh/vgpu-cores: '30'",
                None,
                "",
            ),
        ],
    ));
    let ann = &b["p"].1;
    // No policy: cards are tried from the highest index down.
    assert_eq!(ann["volcano.sh/vgpu-ids-new"], "GPU-1,NVIDIA,1000,30:");
    assert_eq!(
        ann["volcano.sh/devices-to-allocate"],
        "GPU-1,NVIDIA,1000,30:"
    );
    assert_eq!(ann["volcano.sh/vgpu-node"], "n1");
    assert_eq!(ann["volcano.sh/bind-phase"], "allocating");
}

#[test]
fn vgpu_binpack_prefers_the_fuller_card_and_scores_its_fill() {
    let objects = [
        vgpu_node("n1", &[("GPU-0", 10000), ("GPU-1", 10000)]),
        gpu_pod(
            "a",
            "volcano.sh/vgpu-memory: '4000'",
            Some("n1"),
            "volcano.sh/vgpu-ids-new: 'GPU-0,NVIDIA,4000,0:'",
        ),
        gpu_pod("p", "volcano.sh/vgpu-memory: '1000'", None, ""),
    ];
    let args =
        format!("{VGPU}, deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 2");
    let ssn = open(&args, &objects);
    let t = task(&ssn, "ns/p");
    // 100 × 5000/10000 on GPU-0, times the weight.
    assert_eq!(ssn.node_order(t, node_id(&ssn, "n1")), 100.0);
    let b = binds(ssn);
    assert_eq!(b["p"].1["volcano.sh/vgpu-ids-new"], "GPU-0,NVIDIA,1000,0:");
}

#[test]
fn vgpu_memory_beyond_every_card_is_unschedulable() {
    let ssn = open(
        VGPU,
        &[
            vgpu_node("n1", &[("GPU-0", 8000)]),
            gpu_pod("p", "volcano.sh/vgpu-memory: '9000'", None, ""),
        ],
    );
    assert_eq!(
        fits(&ssn, "p", "n1"),
        Err("hami-vgpuDeviceSharing error".into())
    );
}

#[test]
fn exclusive_rule_pods_never_share_a_card() {
    let objects = [
        vgpu_node("n1", &[("GPU-0", 10000), ("GPU-1", 10000)]),
        gpu_pod(
            "a",
            "volcano.sh/vgpu-memory: '1000'",
            Some("n1"),
            "volcano.sh/vgpu-ids-new: 'GPU-1,NVIDIA,1000,0:'",
        )
        .replace("uid: a,", "uid: a, labels: {app: train},"),
        gpu_pod("p", "volcano.sh/vgpu-memory: '1000'", None, "")
            .replace("uid: p,", "uid: p, labels: {app: train},"),
    ];
    let args = format!("{VGPU}, deviceshare.GPUExclusiveRules: [{{app: train}}]");
    let b = binds(open(&args, &objects));
    // Without the rule the highest card, GPU-1, would be tried first.
    assert_eq!(b["p"].1["volcano.sh/vgpu-ids-new"], "GPU-0,NVIDIA,1000,0:");
}

#[test]
fn node_lock_names_the_device_kinds_lock() {
    let gpu = bind_decisions(open(
        &format!("{SHARING}, deviceshare.NodeLockEnable: true"),
        &[
            gpu_node("n1", 1, 1000, ""),
            gpu_pod("p", "volcano.sh/gpu-memory: '10'", None, ""),
        ],
    ));
    assert_eq!(gpu[0].node_lock, Some("gpu"));
    let vgpu = bind_decisions(open(
        &format!("{VGPU}, deviceshare.NodeLockEnable: true"),
        &[
            vgpu_node("n1", &[("GPU-0", 1000)]),
            gpu_pod("p", "volcano.sh/vgpu-memory: '10'", None, ""),
        ],
    ));
    assert_eq!(vgpu[0].node_lock, Some("hamivgpu"));
    let unlocked = bind_decisions(open(
        SHARING,
        &[
            gpu_node("n1", 1, 1000, ""),
            gpu_pod("p", "volcano.sh/gpu-memory: '10'", None, ""),
        ],
    ));
    assert_eq!(unlocked[0].node_lock, None);
}

#[test]
fn without_predicates_no_cards_are_taken_and_binds_carry_nothing() {
    let objects = [
        gpu_node("n1", 1, 1000, ""),
        gpu_pod("p", "volcano.sh/gpu-memory: '10'", None, ""),
    ];
    let alone = session(
        &conf("deviceshare", SHARING),
        &[JOB.to_string(), objects.concat()].concat(),
    );
    let b = binds(alone);
    assert_eq!(b["p"].0, "n1");
    assert!(b["p"].1.is_empty());
}
