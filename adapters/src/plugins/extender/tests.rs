//! The extender against `myplugin-extender`, a small server each test starts on loopback.

use myplugin_extender::Server;
use tephra_engine::actions;
use tephra_engine::framework::{Session, StatusCode};
use tephra_engine::harness::Harness;
use tephra_engine::model::{JobId, NodeId, TaskId};

fn server() -> Server {
    Server::start("127.0.0.1:0", "my-label", 2.0).expect("loopback server starts")
}

fn conf(arguments: &str) -> String {
    format!(
        "actions: allocate\ntiers:\n- plugins:\n  - name: extender\n    arguments: {{{arguments}}}\n"
    )
}

/// `plain` (empty) and `labelled` (2 of 8 cpu used) nodes and one pending pod.
fn open(arguments: &str) -> Session {
    Harness::new(&conf(arguments))
        .with_plugin(super::NAME, super::build)
        .queue("q", 1)
        .node("plain", "8", "16Gi", &[])
        .node("labelled", "8", "16Gi", &[("my-label", "yes")])
        .manifests(
            "kind: PodGroup\nmetadata: {name: running, namespace: ns}\nspec: {queue: q, minMember: 1}\nstatus: {phase: Running}\n---\nkind: Pod\nmetadata: {name: r0, namespace: ns, uid: r0, annotations: {scheduling.k8s.io/group-name: running}}\nspec: {nodeName: labelled, containers: [{name: c, resources: {requests: {cpu: '2'}}}]}\nstatus: {phase: Running}\n",
        )
        .pod_group("ns", "pg", "q", 1)
        .pod("ns", "p", "pg", "1", "1Gi")
        .open()
        .expect("session opens")
}

fn verbs(s: &Server, prefix: &str) -> String {
    format!(
        "extender.urlPrefix: '{}', extender.predicateVerb: predicate, extender.prioritizeVerb: prioritize{prefix}",
        s.url()
    )
}

const P: TaskId = TaskId(0);
const PLAIN: NodeId = NodeId(0);
const LABELLED: NodeId = NodeId(1);

#[test]
fn predicate_and_prioritize_answer_like_myplugin() {
    let s = server();
    let ssn = open(&verbs(&s, ""));
    assert_eq!(&*ssn.state.snap.tasks.name[P.idx()], "p");
    assert!(ssn.predicate(P, LABELLED).is_ok());
    let err = ssn.predicate(P, PLAIN).unwrap_err();
    assert_eq!(
        err.statuses[0].code,
        StatusCode::UnschedulableAndUnresolvable
    );
    assert_eq!(err.to_string(), "node(s) didn't have label my-label");
    assert_eq!(
        ssn.batch_node_order(P, &[PLAIN, LABELLED])
            .map(|s| s.to_vec()),
        Some(vec![0.0, 0.5])
    );
}

#[test]
fn a_cycle_with_the_extender_places_the_pod_on_the_labelled_node() {
    let s = server();
    let args = verbs(
        &s,
        ", extender.onSessionOpenVerb: onSessionOpen, extender.onSessionCloseVerb: onSessionClose, extender.allocateFuncVerb: allocate",
    );
    let mut ssn = open(&args);
    actions::run_all(&mut ssn);
    assert_eq!(ssn.binds, [(P, LABELLED)]);
    ssn.close();
    let calls = s.calls();
    assert_eq!(calls.first().map(String::as_str), Some("onSessionOpen"));
    assert!(calls.iter().any(|c| c == "predicate") && calls.iter().any(|c| c == "allocate"));
    assert_eq!(calls.last().map(String::as_str), Some("onSessionClose"));
}

#[test]
fn failures_stop_scheduling_unless_ignorable() {
    let s = server();
    let failing = format!(
        "extender.urlPrefix: '{}', extender.predicateVerb: fail, extender.prioritizeVerb: fail, extender.jobEnqueueableVerb: fail",
        s.url()
    );
    let strict = open(&failing);
    let err = strict.predicate(P, LABELLED).unwrap_err();
    assert_eq!(err.statuses[0].code, StatusCode::Error);
    assert!(err.to_string().contains("code 500"), "{err}");
    assert_eq!(strict.batch_node_order(P, &[PLAIN]), None);
    assert!(!strict.job_enqueueable(JobId(0)));

    let lenient = open(&format!("{failing}, extender.ignorable: true"));
    assert!(lenient.predicate(P, PLAIN).is_ok());
    assert_eq!(
        lenient.batch_node_order(P, &[PLAIN]).map(|s| s.to_vec()),
        Some(vec![0.0])
    );
    assert!(lenient.job_enqueueable(JobId(0)));
}

#[test]
fn a_failed_session_open_registers_nothing_for_the_session() {
    let s = server();
    let ssn = open(&verbs(&s, ", extender.onSessionOpenVerb: fail"));
    assert!(ssn.predicate(P, PLAIN).is_ok());
    assert_eq!(s.calls(), ["fail"]);
}

#[test]
fn pods_without_a_managed_resource_are_not_sent() {
    let s = server();
    let ssn = open(&verbs(&s, ", extender.managedResources: [nvidia.com/gpu]"));
    assert!(ssn.predicate(P, PLAIN).is_ok());
    assert_eq!(
        ssn.batch_node_order(P, &[PLAIN, LABELLED])
            .map(|s| s.to_vec()),
        Some(vec![0.0, 0.0])
    );
    assert!(s.calls().is_empty());
}

#[test]
fn an_unreachable_extender_is_an_error_naming_its_url() {
    let url = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let ssn = open(&format!(
        "extender.urlPrefix: '{url}', extender.predicateVerb: predicate"
    ));
    let err = ssn.predicate(P, PLAIN).unwrap_err();
    assert!(
        err.to_string().contains(&format!("{url}/predicate")),
        "{err}"
    );
}
