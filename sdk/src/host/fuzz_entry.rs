//! `plugin_abi`, the fuzz target of the ABI's host side over arbitrary bytes: the library's
//! argument decoding (`build` with any JSON text), every session accessor with any field, id
//! and key, and a whole session whose library plugin answers every point from the bytes (any
//! ids, scores, orders and statuses), so nothing a library writes can make the host panic.
//! `fuzz/fuzz_targets/plugin_abi.rs` and the corpus replay test call it.

use std::cmp::Ordering;
use std::sync::{Arc, LazyLock};

use tephra_engine::actions::run_all;
use tephra_engine::config::SchedulerConfig;
use tephra_engine::framework::{
    EvictionContext, FitError, PluginRegistry, SearchPurpose, Session, SessionOptions, StatusCode,
};
use tephra_engine::harness::Harness;
use tephra_engine::snapshot::Snapshot;

use super::PluginLibrary;
use super::session::lend;
use crate::abi::{self, Str};
use crate::guest::Exports;
use crate::prelude::*;
use crate::wire::Reply;
use crate::{Builder, Plugin};

/// A plugin whose every answer is read from a script of bytes, at a place that depends only on
/// the point and its arguments, so an answer does not depend on the order (or the thread) of
/// the calls.
struct Oracle {
    script: Vec<u8>,
}

fn oracle(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    let hex = args.string("script")?.unwrap_or_default();
    let script = (0..hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
        .collect();
    args.float("weight")?;
    args.int("limit")?;
    args.bool("strict")?;
    Ok(Box::new(Oracle { script }))
}

static EXPORTS: Exports = Exports::new(&[Str::new("oracle")], &[oracle as Builder]);

static LIBRARY: LazyLock<Arc<PluginLibrary>> = LazyLock::new(|| {
    // SAFETY: `EXPORTS` is a static descriptor of this very binary.
    unsafe { PluginLibrary::new(EXPORTS.library(), "fuzz", Box::new(())) }
        .expect("the fuzz library's descriptor is valid")
});

impl Oracle {
    /// The script's byte for this call of `point` with these arguments; 0 without a script.
    fn byte(&self, point: u32, args: &[u32]) -> u8 {
        if self.script.is_empty() {
            return 0;
        }
        let mut h = u64::from(point).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        for &a in args {
            h = (h ^ u64::from(a)).wrapping_mul(0x100_0000_01B3);
        }
        self.script[(h % self.script.len() as u64) as usize]
    }

    fn word(&self, point: u32, args: &[u32]) -> u32 {
        let b = |k: u32| u32::from(self.byte(point, &[args, &[k]].concat()));
        b(1) | b(2) << 8 | b(3) << 16 | b(4) << 24
    }

    fn number(&self, point: u32, args: &[u32]) -> f64 {
        let bits = u64::from(self.word(point, args)) << 32 | u64::from(self.word(point + 1, args));
        match self.byte(point, args) % 4 {
            0 => f64::from_bits(bits),
            _ => f64::from(self.byte(point + 2, args)) - 100.0,
        }
    }

    fn order(&self, point: u32, args: &[u32]) -> Ordering {
        match self.byte(point, args) % 3 {
            0 => Ordering::Less,
            1 => Ordering::Equal,
            _ => Ordering::Greater,
        }
    }

    fn flag(&self, point: u32, args: &[u32]) -> Option<bool> {
        match self.byte(point, args) % 3 {
            0 => None,
            b => Some(b == 1),
        }
    }

    fn vote(&self, point: u32, args: &[u32]) -> Vote {
        match self.byte(point, args) % 3 {
            0 => Vote::Reject,
            1 => Vote::Abstain,
            _ => Vote::Permit,
        }
    }

    /// An id: one of `known` mostly, sometimes any `u32`.
    fn id(&self, point: u32, args: &[u32], known: &[u32]) -> u32 {
        let b = self.byte(point, args);
        match known.get(usize::from(b) % (known.len() + 1)) {
            Some(&id) if b % 8 != 7 => id,
            _ => self.word(point + 3, args),
        }
    }

    fn ids(&self, point: u32, args: &[u32], known: &[u32]) -> Vec<u32> {
        let n = u32::from(self.byte(point + 4, args) % 6);
        (0..n)
            .map(|k| self.id(point, &[args, &[k]].concat(), known))
            .collect()
    }

    fn fit(&self, point: u32, args: &[u32]) -> Result<(), FitError> {
        let code = match self.byte(point, args) % 8 {
            0 => StatusCode::Error,
            1 => StatusCode::Unschedulable,
            2 => StatusCode::UnschedulableAndUnresolvable,
            3 => StatusCode::Wait,
            4 => StatusCode::Skip,
            _ => return Ok(()),
        };
        Err(FitError::new(code, format!("oracle {point}")))
    }

    fn failure(&self, point: u32, args: &[u32]) -> Result<(), String> {
        match self.byte(point, args) % 4 {
            0 => Err(format!("oracle {point}")),
            _ => Ok(()),
        }
    }
}

fn raw<T: Copy>(ids: &[T], f: impl Fn(T) -> u32) -> Vec<u32> {
    ids.iter().map(|&i| f(i)).collect()
}

impl Plugin for Oracle {
    fn name(&self) -> &str {
        "oracle"
    }
    fn on_allocate(&mut self, _: &SessionView, t: TaskId) -> Result<(), String> {
        self.failure(1, &[t.0])
    }
    fn job_order(&self, _: &SessionView, l: JobId, r: JobId) -> Ordering {
        self.order(2, &[l.0, r.0])
    }
    fn sub_job_order(&self, _: &SessionView, l: SubJobId, r: SubJobId) -> Ordering {
        self.order(3, &[l.0, r.0])
    }
    fn task_order(&self, _: &SessionView, l: TaskId, r: TaskId) -> Ordering {
        self.order(4, &[l.0, r.0])
    }
    fn queue_order(&self, _: &SessionView, l: QueueId, r: QueueId) -> Ordering {
        self.order(5, &[l.0, r.0])
    }
    fn victim_queue_order(&self, _: &SessionView, l: QueueId, r: QueueId, p: QueueId) -> Ordering {
        self.order(6, &[l.0, r.0, p.0])
    }
    fn pre_predicate(&self, _: &SessionView, t: TaskId) -> Result<(), FitError> {
        self.fit(7, &[t.0])
    }
    fn predicate(&self, _: &SessionView, t: TaskId, n: NodeId) -> Result<(), FitError> {
        self.fit(8, &[t.0, n.0])
    }
    fn node_order(&self, _: &SessionView, t: TaskId, n: NodeId) -> Option<Result<f64, String>> {
        match self.byte(9, &[t.0, n.0]) % 4 {
            0 => None,
            1 => Some(Err("oracle node order".into())),
            _ => Some(Ok(self.number(10, &[t.0, n.0]))),
        }
    }
    fn batch_node_order(
        &self,
        _: &SessionView,
        t: TaskId,
        nodes: &[NodeId],
    ) -> Option<Result<Vec<f64>, String>> {
        let n = match self.byte(13, &[t.0]) % 4 {
            0 => return None,
            1 => return Some(Err("oracle batch node order".into())),
            2 => nodes.len(),
            _ => usize::from(self.byte(14, &[t.0]) % 5),
        };
        Some(Ok((0..n as u32)
            .map(|k| self.number(15, &[t.0, k]))
            .collect()))
    }
    fn best_node(&self, _: &SessionView, t: TaskId, scores: &[(NodeId, f64)]) -> Option<NodeId> {
        let known = raw(scores, |(n, _)| n.0);
        self.byte(18, &[t.0])
            .is_multiple_of(2)
            .then(|| NodeId(self.id(19, &[t.0], &known)))
    }
    fn job_valid(&self, _: &SessionView, j: JobId) -> Option<JobInvalid> {
        self.byte(23, &[j.0]).is_multiple_of(4).then(|| JobInvalid {
            reason: "Oracle".into(),
            message: format!("job {}", j.0),
        })
    }
    fn job_ready(&self, _: &SessionView, j: JobId) -> Option<bool> {
        self.flag(24, &[j.0])
    }
    fn sub_job_ready(&self, _: &SessionView, j: JobId, s: SubJobId) -> Option<bool> {
        self.flag(25, &[j.0, s.0])
    }
    fn job_pipelined(&self, _: &SessionView, j: JobId) -> Vote {
        self.vote(26, &[j.0])
    }
    fn sub_job_pipelined(&self, _: &SessionView, j: JobId, s: SubJobId) -> Vote {
        self.vote(27, &[j.0, s.0])
    }
    fn job_enqueueable(&self, _: &SessionView, j: JobId) -> Vote {
        self.vote(28, &[j.0])
    }
    fn job_starving(&self, _: &SessionView, j: JobId) -> Option<bool> {
        self.flag(29, &[j.0])
    }
    fn preemptable(&self, _: &SessionView, p: TaskId, c: &[TaskId]) -> Option<Vec<TaskId>> {
        let known = raw(c, |t| t.0);
        (!self.byte(30, &[p.0]).is_multiple_of(4)).then(|| {
            self.ids(31, &[p.0], &known)
                .into_iter()
                .map(TaskId)
                .collect()
        })
    }
    fn reclaimable(&self, _: &SessionView, r: TaskId, c: &[TaskId]) -> Option<Vec<TaskId>> {
        let known = raw(c, |t| t.0);
        (!self.byte(36, &[r.0]).is_multiple_of(4)).then(|| {
            self.ids(37, &[r.0], &known)
                .into_iter()
                .map(TaskId)
                .collect()
        })
    }
    fn unified_evictable(
        &self,
        _: &SessionView,
        ctx: &EvictionContext,
        c: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        let known = raw(c, |t| t.0);
        (!self.byte(42, &[ctx.job.0]).is_multiple_of(4)).then(|| {
            self.ids(43, &[ctx.job.0], &known)
                .into_iter()
                .map(TaskId)
                .collect()
        })
    }
    fn victim_tasks(&self, _: &SessionView, tasks: &[TaskId]) -> Option<Vec<TaskId>> {
        let known = raw(tasks, |t| t.0);
        let key = [known.len() as u32];
        self.byte(48, &key)
            .is_multiple_of(4)
            .then(|| self.ids(49, &key, &known).into_iter().map(TaskId).collect())
    }
    fn allocatable(&self, _: &SessionView, q: QueueId, t: TaskId) -> Option<bool> {
        self.flag(54, &[q.0, t.0])
    }
    fn overused(&self, _: &SessionView, q: QueueId) -> Option<bool> {
        self.flag(55, &[q.0])
    }
    fn preemptive(&self, _: &SessionView, q: QueueId, tasks: &[TaskId]) -> Option<bool> {
        self.flag(56, &[q.0, tasks.len() as u32])
    }
    fn hyper_node_order(
        &self,
        _: &SessionView,
        s: SubJobId,
        hyper_nodes: &[HyperNodeId],
    ) -> Option<Vec<f64>> {
        let n = (hyper_nodes.len() + usize::from(self.byte(57, &[s.0]) % 3)).saturating_sub(1);
        self.byte(58, &[s.0])
            .is_multiple_of(2)
            .then(|| (0..n as u32).map(|k| self.number(59, &[s.0, k])).collect())
    }
    fn hyper_node_gradient_for_job(
        &self,
        _: &SessionView,
        j: JobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        self.gradient(62, &[j.0, hn.0, purpose as u32], hn)
    }
    fn hyper_node_gradient_for_sub_job(
        &self,
        _: &SessionView,
        s: SubJobId,
        hn: HyperNodeId,
        purpose: SearchPurpose,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        self.gradient(70, &[s.0, hn.0, purpose as u32], hn)
    }
    fn simulate_remove_task(&self, _: &SessionView, p: TaskId, t: TaskId) -> Result<(), String> {
        self.failure(78, &[p.0, t.0])
    }
    fn simulate_add_task(&self, _: &SessionView, p: TaskId, t: TaskId) -> Result<(), String> {
        self.failure(79, &[p.0, t.0])
    }
}

impl Oracle {
    fn gradient(&self, point: u32, args: &[u32], hn: HyperNodeId) -> Option<Vec<Vec<HyperNodeId>>> {
        self.byte(point, args).is_multiple_of(2).then(|| {
            (0..u32::from(self.byte(point + 1, args) % 3))
                .map(|g| {
                    self.ids(point + 2, &[args, &[g]].concat(), &[hn.0])
                        .into_iter()
                        .map(HyperNodeId)
                        .collect()
                })
                .collect()
        })
    }
}

/// Two queues, three nodes, a running job to evict and two pending ones, a hyper-node.
const CLUSTER: &str = "\
- {kind: Queue, metadata: {name: q1}, spec: {weight: 1}}
- {kind: Queue, metadata: {name: q2}, spec: {weight: 3}}
- {kind: Node, metadata: {name: n1, labels: {zone: a}}, status: {allocatable: {cpu: 4, memory: 8Gi, pods: 10}}}
- {kind: Node, metadata: {name: n2, labels: {zone: b}}, status: {allocatable: {cpu: 2, memory: 4Gi, pods: 10}}}
- {kind: Node, metadata: {name: n3}, status: {allocatable: {cpu: 1, memory: 1Gi, pods: 1}}}
- {kind: HyperNode, metadata: {name: s0}, spec: {tier: 1, members: [{type: Node, selector: {exactMatch: {name: n1}}}, {type: Node, selector: {exactMatch: {name: n2}}}]}}
- {kind: PodGroup, metadata: {name: run, namespace: ns}, spec: {queue: q1, minMember: 1}, status: {phase: Running}}
- {kind: PodGroup, metadata: {name: gang, namespace: ns}, spec: {queue: q2, minMember: 2, networkTopology: {mode: soft, highestTierAllowed: 1}}}
- {kind: PodGroup, metadata: {name: one, namespace: ns}, spec: {queue: q1, minMember: 1}}
- {kind: Pod, metadata: {name: r0, namespace: ns, uid: r0, annotations: {scheduling.k8s.io/group-name: run}}, spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: 2, memory: 2Gi}}}]}, status: {phase: Running}}
- {kind: Pod, metadata: {name: r1, namespace: ns, uid: r1, annotations: {scheduling.k8s.io/group-name: run}}, spec: {nodeName: n2, containers: [{name: c, resources: {requests: {cpu: 1, memory: 1Gi}}}]}, status: {phase: Running}}
- {kind: Pod, metadata: {name: g0, namespace: ns, uid: g0, annotations: {scheduling.k8s.io/group-name: gang}}, spec: {containers: [{name: c, resources: {requests: {cpu: 2, memory: 2Gi}}}]}, status: {phase: Pending}}
- {kind: Pod, metadata: {name: g1, namespace: ns, uid: g1, annotations: {scheduling.k8s.io/group-name: gang}}, spec: {containers: [{name: c, resources: {requests: {cpu: 2, memory: 2Gi}}}]}, status: {phase: Pending}}
- {kind: Pod, metadata: {name: o0, namespace: ns, uid: o0, annotations: {scheduling.k8s.io/group-name: one}}, spec: {containers: [{name: c, resources: {requests: {cpu: 500m, memory: 512Mi}}}]}, status: {phase: Pending}}
";

/// Every action, the oracle in the first tier beside the plugins that combine with it.
fn conf(script: &[u8]) -> String {
    let hex: String = script.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "actions: enqueue, allocate, backfill, preempt, reclaim, gangpreempt, gangreclaim\n\
         tiers:\n- plugins:\n  - name: oracle\n    arguments: {{script: \"{hex}\"}}\n  - name: priority\n  - name: gang\n\
         - plugins:\n  - name: proportion\n  - name: predicates\n  - name: network-topology-aware\n"
    )
}

/// Reads the fuzz input as its three parts in turn.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        b
    }

    /// A length-prefixed slice (as much as is left when shorter).
    fn slice(&mut self) -> &'a [u8] {
        let n = usize::from(self.byte()).min(self.0.len());
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        s
    }

    fn id(&mut self) -> u32 {
        match self.byte() {
            255 => abi::NO_ID,
            254 => u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()]),
            b => u32::from(b % 16),
        }
    }
}

/// The library's `build` with any arguments text and plugin index, as a foreign host may call it.
fn build(text: &[u8], index: u32) {
    let Ok(json) = std::str::from_utf8(text) else {
        return;
    };
    let lib = LIBRARY.exports();
    let mut reply = Reply::default();
    let mut instance = std::ptr::null_mut();
    // SAFETY: `lib` is the in-process library's descriptor; the JSON and the `ReplyOut` live
    // through the call.
    let status =
        unsafe { (lib.vtable.build)(lib, index, Str::new(json), &mut instance, &reply.out()) };
    if status == abi::OK && !instance.is_null() {
        // SAFETY: the instance `build` just made, dropped once.
        unsafe { (lib.vtable.drop)(instance) };
    }
}

/// Each accessor of the lent session with fields, ids and keys from `input`.
fn views(ssn: &tephra_engine::framework::SessionState, input: &mut Input) {
    let session = lend(ssn);
    // SAFETY: `lend` gives the host's static accessor table.
    let v = unsafe { &*session.vtable };
    let ctx = session.ctx;
    while !input.0.is_empty() {
        let (op, field, id) = (input.byte(), u32::from(input.byte() % 16), input.id());
        let key = String::from_utf8_lossy(input.slice()).into_owned();
        let key = Str::new(&key);
        let (mut n, mut f, mut s) = (0u32, 0f64, Str::NONE);
        // SAFETY: `ctx` is the session lent above, still borrowed; `key` and the outputs live
        // through each call.
        unsafe {
            match op % 8 {
                0 => (v.count)(ctx, field, &mut n),
                1 => (v.text)(ctx, field, id, &mut s),
                2 => (v.lookup)(ctx, field, id, key, &mut s),
                3 => (v.number)(ctx, field, id, &mut f),
                4 => (v.resource)(ctx, field, id, key, &mut f),
                5 => (v.reference)(ctx, field, id, &mut n),
                6 => (v.member)(ctx, field, id, input.id(), &mut n),
                _ => (v.find)(ctx, field, key, &mut n),
            }
        };
    }
}

/// The built-in plugins and the oracle, registered once.
static REGISTRY: LazyLock<PluginRegistry> = LazyLock::new(|| {
    let mut registry = tephra_engine::plugins::builtin_registry();
    LIBRARY.register(&mut registry);
    registry
});

/// `CLUSTER`, parsed and built once: every input opens its session over the same snapshot, so
/// an execution spends its time on what the input decides, not on reading a constant.
static SNAPSHOT: LazyLock<Arc<Snapshot>> =
    LazyLock::new(|| Arc::new(Harness::new("").manifests(CLUSTER).snapshot()));

/// The target: `build` with the first slice as arguments, a session whose oracle plays the
/// second slice, then accessor calls from the rest on the session it leaves.
pub fn plugin_abi(data: &[u8]) {
    let mut input = Input(data);
    let index = u32::from(input.byte() % 3);
    build(input.slice(), index);
    let script = input.slice();
    let Ok(config) = SchedulerConfig::parse(&conf(script)) else {
        return;
    };
    let Ok(mut ssn) = Session::open(
        Arc::clone(&SNAPSHOT),
        Arc::new(config),
        &REGISTRY,
        SessionOptions::default(),
    ) else {
        return;
    };
    run_all(&mut ssn);
    views(&ssn.state, &mut input);
    let _ = ssn.close();
}
