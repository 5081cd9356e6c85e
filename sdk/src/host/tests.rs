//! The ABI end to end inside one process: plugins exported as a library would export them,
//! registered through `PluginLibrary`, and answering exactly as when linked in.

use std::sync::Arc;

use tephra_engine::framework::{
    EvictionContext, EvictionKind, PluginRegistry, SearchPurpose, Session, Statement,
};
use tephra_engine::harness::Harness;
use tephra_engine::model::{HyperNodeId, JobId, NodeId, QueueId, TaskId};

use super::{AbiError, PluginLibrary};
use crate::abi::{self, Str};
use crate::guest::Exports;
use crate::prelude::*;
use crate::{Builder, linked};

/// Touches most kinds of answer: orders, fit errors with two statuses, scores, votes, lists,
/// groups, job validity, event-handler errors.
struct Probe {
    weight: f64,
}

fn probe(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Probe {
        weight: args.float("weight")?.unwrap_or(1.0),
    }))
}

impl Plugin for Probe {
    fn name(&self) -> &str {
        "probe"
    }
    fn job_order(&self, ssn: &SessionView, l: JobId, r: JobId) -> Ordering {
        ssn.job_uid(r).cmp(ssn.job_uid(l))
    }
    fn predicate(&self, ssn: &SessionView, t: TaskId, n: NodeId) -> Result<(), FitError> {
        if ssn.node_label(n, "ok").is_some() {
            return Ok(());
        }
        let first = FitError::new(StatusCode::Unschedulable, "no ok label");
        let second = FitError::new(StatusCode::Wait, ssn.task_name(t).to_string());
        Err(FitError {
            statuses: [first.statuses[0].clone(), second.statuses[0].clone()].into(),
        })
    }
    fn node_order(&self, ssn: &SessionView, t: TaskId, n: NodeId) -> Option<Result<f64, String>> {
        Some(Ok(
            ssn.node_idle(n, "cpu") / 1000.0 * self.weight + ssn.task_request(t, "cpu")
        ))
    }
    fn batch_node_order(
        &self,
        _: &SessionView,
        _: TaskId,
        nodes: &[NodeId],
    ) -> Option<Result<Vec<f64>, String>> {
        Some(Ok(nodes.iter().map(|n| f64::from(n.0) * 10.0).collect()))
    }
    fn job_valid(&self, ssn: &SessionView, j: JobId) -> Option<JobInvalid> {
        ssn.job_annotation(j, "invalid").map(|why| JobInvalid {
            reason: "Probe".into(),
            message: why.into(),
        })
    }
    fn job_enqueueable(&self, _: &SessionView, _: JobId) -> Vote {
        Vote::Reject
    }
    fn preemptable(&self, _: &SessionView, _: TaskId, c: &[TaskId]) -> Option<Vec<TaskId>> {
        Some(c.iter().copied().filter(|t| t.0 % 2 == 0).collect())
    }
    fn unified_evictable(
        &self,
        _: &SessionView,
        ctx: &EvictionContext,
        c: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        (ctx.kind == EvictionKind::GangReclaim).then(|| c.iter().rev().copied().collect())
    }
    fn preemptive(&self, _: &SessionView, _: QueueId, tasks: &[TaskId]) -> Option<bool> {
        Some(tasks.len() == 2)
    }
    fn hyper_node_gradient_for_job(
        &self,
        _: &SessionView,
        _: JobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        Some(match purpose {
            SearchPurpose::Allocate => vec![vec![hn], vec![]],
            SearchPurpose::Evict => vec![vec![hn, hn]],
        })
    }
    fn simulate_remove_task(&self, _: &SessionView, _: TaskId, t: TaskId) -> Result<(), String> {
        Err(format!("cannot remove {}", t.0))
    }
    fn on_allocate(&mut self, ssn: &SessionView, t: TaskId) -> Result<(), String> {
        match ssn.task_name(t) {
            "refused" => Err("refused by probe".into()),
            _ => Ok(()),
        }
    }
}

/// Panics in the predicate.
struct Boom;

fn boom(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Boom))
}

impl Plugin for Boom {
    fn name(&self) -> &str {
        "boom"
    }
    fn predicate(&self, _: &SessionView, _: TaskId, _: NodeId) -> Result<(), FitError> {
        panic!("boom in predicate")
    }
    fn node_order(&self, _: &SessionView, _: TaskId, _: NodeId) -> Option<Result<f64, String>> {
        Some(Ok(5.0))
    }
}

/// Answers ids the session does not have.
struct Liar;

fn liar(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Liar))
}

impl Plugin for Liar {
    fn name(&self) -> &str {
        "liar"
    }
    fn best_node(&self, _: &SessionView, _: TaskId, _: &[(NodeId, f64)]) -> Option<NodeId> {
        Some(NodeId(99))
    }
    fn node_order(&self, _: &SessionView, _: TaskId, _: NodeId) -> Option<Result<f64, String>> {
        Some(Ok(5.0))
    }
}

/// Reads every accessor of the view into one string, returned as a job-invalid message.
struct Digest;

fn digest(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Digest))
}

fn read_everything(ssn: &SessionView) -> String {
    let mut out = format!("now {}\n", ssn.now());
    for n in ssn.nodes() {
        out += &format!(
            "node {} {:?} {} {} {} {} {} {} {} {:?} {:?}\n",
            ssn.node_name(n),
            ssn.node_label(n, "ok"),
            ssn.node_unschedulable(n),
            ssn.node_allocatable(n, "cpu"),
            ssn.node_capacity(n, "memory"),
            ssn.node_used(n, "pods"),
            ssn.node_idle(n, "cpu"),
            ssn.node_releasing(n, "cpu"),
            ssn.node_pipelined(n, "nvidia.com/gpu"),
            ssn.node_tasks(n),
            ssn.node_id(ssn.node_name(n)),
        );
    }
    for t in (0..ssn.task_count() as u32).map(TaskId) {
        out += &format!(
            "task {} {} {} {:?} {:?} {:?} {:?} {} {} {} {} {:?} {:?}\n",
            ssn.task_name(t),
            ssn.task_namespace(t),
            ssn.task_uid(t),
            ssn.task_role(t),
            ssn.task_label(t, "app"),
            ssn.task_annotation(t, "scheduling.k8s.io/group-name"),
            ssn.task_status(t),
            ssn.task_priority(t),
            ssn.task_best_effort(t),
            ssn.task_preemptable(t),
            ssn.task_request(t, "memory"),
            ssn.task_job(t),
            ssn.task_node(t),
        );
    }
    for j in (0..ssn.job_count() as u32).map(JobId) {
        out += &format!(
            "job {} {} {} {:?} {:?} {} {} {:?} {} {} {} {} {:?}\n",
            ssn.job_uid(j),
            ssn.job_name(j),
            ssn.job_namespace(j),
            ssn.job_annotation(j, "invalid"),
            ssn.job_queue(j),
            ssn.job_priority(j),
            ssn.job_min_available(j),
            ssn.job_tasks(j),
            ssn.job_ready_task_num(j),
            ssn.job_waiting_task_num(j),
            ssn.job_allocated(j, "cpu"),
            ssn.job_total_request(j, "cpu"),
            ssn.job_id(ssn.job_uid(j)),
        );
    }
    for q in (0..ssn.queue_count() as u32).map(QueueId) {
        out += &format!(
            "queue {} {} {:?}\n",
            ssn.queue_name(q),
            ssn.queue_weight(q),
            ssn.queue_id(ssn.queue_name(q))
        );
    }
    out
}

impl Plugin for Digest {
    fn name(&self) -> &str {
        "digest"
    }
    fn job_valid(&self, ssn: &SessionView, _: JobId) -> Option<JobInvalid> {
        Some(JobInvalid {
            reason: "digest".into(),
            message: read_everything(ssn),
        })
    }
}

static EXPORTS: Exports = Exports::new(
    &[
        Str::new("probe"),
        Str::new("boom"),
        Str::new("digest"),
        Str::new("liar"),
    ],
    &[
        probe as Builder,
        boom as Builder,
        digest as Builder,
        liar as Builder,
    ],
);

fn library() -> Arc<PluginLibrary> {
    // SAFETY: `EXPORTS` is a static descriptor of this very binary.
    unsafe { PluginLibrary::new(EXPORTS.library(), "in-process", Box::new(())) }.unwrap()
}

fn harness(conf: &str) -> Harness {
    Harness::new(conf)
        .queue("q", 1)
        .node("a", "4", "8Gi", &[("ok", "1")])
        .node("b", "8", "8Gi", &[])
        .pod_group("ns", "pg", "q", 1)
        .pod("ns", "p0", "pg", "1", "1Gi")
        .pod("ns", "refused", "pg", "1", "1Gi")
}

fn conf(plugin: &str) -> String {
    format!(
        "actions: allocate\ntiers:\n- plugins:\n  - name: {plugin}\n    arguments: {{weight: 2}}\n"
    )
}

/// The same probe opened linked in and loaded through the ABI.
fn both() -> (Session, Session) {
    let mut registry = PluginRegistry::new();
    library().register(&mut registry);
    let external = registry.get("probe").cloned().unwrap();
    let local = harness(&conf("probe")).with_plugin("probe", linked(probe));
    let remote = harness(&conf("probe")).with_plugin("probe", move |a| external(a));
    (local.open().unwrap(), remote.open().unwrap())
}

#[test]
fn a_loaded_plugin_answers_exactly_as_when_linked_in() {
    let (local, remote) = both();
    let nodes: Vec<NodeId> = local.state.snap.nodes.ids().collect();
    let tasks = [TaskId(0), TaskId(1)];
    for s in [&local, &remote] {
        assert_eq!(s.predicate(tasks[0], nodes[0]), Ok(()));
    }
    for &t in &tasks {
        for &n in &nodes {
            assert_eq!(local.predicate(t, n), remote.predicate(t, n));
            assert_eq!(local.node_order(t, n), remote.node_order(t, n));
        }
        assert_eq!(
            local.batch_node_order(t, &nodes),
            remote.batch_node_order(t, &nodes)
        );
        assert_eq!(local.preemptable(t, &tasks), remote.preemptable(t, &tasks));
    }
    let err = remote.predicate(tasks[0], nodes[1]).unwrap_err();
    assert_eq!(err.statuses.len(), 2);
    assert_eq!(err.statuses[1].code, StatusCode::Wait);
    assert_eq!(err.statuses[1].reason, "p0");
    assert_eq!(remote.node_order(tasks[0], nodes[1]), 8.0 * 2.0 + 1000.0);
    let j = JobId(0);
    assert_eq!(local.job_valid(j), remote.job_valid(j));
    assert_eq!(local.job_enqueueable(j), remote.job_enqueueable(j));
    assert!(!remote.job_enqueueable(j));
    let h = HyperNodeId(0);
    for purpose in [SearchPurpose::Allocate, SearchPurpose::Evict] {
        assert_eq!(
            local.hyper_node_gradient_for_job(j, h, purpose),
            remote.hyper_node_gradient_for_job(j, h, purpose)
        );
    }
    assert_eq!(
        remote.hyper_node_gradient_for_job(j, h, SearchPurpose::Evict),
        vec![vec![h, h]]
    );
    let q = local.state.snap.jobs.queue[0];
    for tasks in [&tasks[..1], &tasks[..]] {
        assert_eq!(local.preemptive(q, tasks), remote.preemptive(q, tasks));
    }
    for kind in [EvictionKind::GangPreempt, EvictionKind::GangReclaim] {
        let ctx = EvictionContext { kind, job: j };
        assert_eq!(
            local.unified_evictable(&ctx, &tasks),
            remote.unified_evictable(&ctx, &tasks)
        );
    }
    let (a, b) = (tasks[0], tasks[1]);
    assert_eq!(
        remote.simulate_remove_task(a, b),
        Err("cannot remove 1".to_string())
    );
    assert_eq!(
        local.simulate_remove_task(a, b),
        remote.simulate_remove_task(a, b)
    );
    assert_eq!(remote.simulate_add_task(a, b), Ok(()));
}

#[test]
fn every_session_read_gives_the_same_value_through_the_abi() {
    let mut registry = PluginRegistry::new();
    library().register(&mut registry);
    let external = registry.get("digest").cloned().unwrap();
    let conf = "actions: allocate\ntiers:\n- plugins:\n  - name: digest\n";
    let local = harness(conf)
        .with_plugin("digest", linked(digest))
        .open()
        .unwrap();
    let remote = harness(conf)
        .with_plugin("digest", move |a| external(a))
        .open()
        .unwrap();
    let (l, r) = (
        local.job_valid(JobId(0)).unwrap(),
        remote.job_valid(JobId(0)).unwrap(),
    );
    assert!(
        l.message.contains("node b None false 8000"),
        "{}",
        l.message
    );
    assert_eq!(l, r);
}

#[test]
fn event_handler_errors_cross_the_boundary() {
    let (_, mut remote) = both();
    let mut stmt = Statement::default();
    assert_eq!(stmt.allocate(&mut remote, TaskId(0), NodeId(0)), Ok(()));
    assert_eq!(
        stmt.allocate(&mut remote, TaskId(1), NodeId(0)),
        Err("refused by probe".to_string())
    );
}

#[test]
fn a_refused_argument_names_its_key() {
    let mut registry = PluginRegistry::new();
    library().register(&mut registry);
    let args = Arguments::new([("weight".to_string(), "heavy".into())].into());
    let err = registry.get("probe").unwrap()(&args).err().unwrap();
    assert_eq!(err.key, "weight");
    assert!(err.reason.contains("number"), "{err}");
}

#[test]
fn a_panic_disables_the_plugin_for_the_session_and_others_go_on() {
    let mut registry = PluginRegistry::new();
    library().register(&mut registry);
    let external = registry.get("boom").cloned().unwrap();
    let conf = "actions: allocate\ntiers:\n- plugins:\n  - name: boom\n";
    let ssn = harness(conf)
        .with_plugin("boom", move |a| external(a))
        .open()
        .unwrap();
    let (t, n) = (TaskId(0), NodeId(1));
    assert_eq!(ssn.predicate(t, n), Ok(()), "a panicking predicate passes");
    assert_eq!(
        ssn.node_order(t, n),
        0.0,
        "and the plugin is off for the session"
    );
}

#[test]
fn an_answer_naming_an_id_outside_the_session_disables_the_plugin() {
    let mut registry = PluginRegistry::new();
    library().register(&mut registry);
    let external = registry.get("liar").cloned().unwrap();
    let conf = "actions: allocate\ntiers:\n- plugins:\n  - name: liar\n";
    let ssn = harness(conf)
        .with_plugin("liar", move |a| external(a))
        .open()
        .unwrap();
    let (t, n) = (TaskId(0), NodeId(1));
    assert_eq!(ssn.best_node(t, &[(n, 1.0)]), None, "node 99 is not taken");
    assert_eq!(
        ssn.node_order(t, n),
        0.0,
        "and the plugin is off for the session"
    );
}

#[test]
fn a_library_for_another_abi_version_is_refused() {
    #[repr(C)]
    struct Future {
        abi_version: u32,
    }
    static FUTURE: Future = Future { abi_version: 99 };
    let ptr = &FUTURE as *const Future as *const abi::Library;
    // SAFETY: only `abi_version`, the first field of every version, is read.
    let err = unsafe { PluginLibrary::new(ptr, "future.so", Box::new(())) }.unwrap_err();
    assert_eq!(
        err,
        AbiError::Version {
            found: 99,
            expected: abi::ABI_VERSION
        }
    );
    assert_eq!(
        err.to_string(),
        "built for plugin ABI version 99, this tephra speaks version 2"
    );
}
