//! The plugin functions of the ABI, library side: decode the arguments, run the SDK plugin under
//! `catch_unwind`, encode the answer.

use std::cmp::Ordering;
use std::panic::{AssertUnwindSafe, catch_unwind};

use tephra_engine::config::Arguments;
use tephra_engine::framework::{
    EvictionContext, EvictionKind, FitError, SearchPurpose, StatusCode, Vote,
};
use tephra_engine::model::{HyperNodeId, JobId, NodeId, QueueId, SubJobId, TaskId};

use crate::abi::{
    self, FAILED, IdsOut, Instance, NOT_REGISTERED, OK, PANICKED, PluginVTable, Status, Str,
    TextOut, Tri, eviction_kind, fit_code, purpose,
};
use crate::{Builder, Plugin, SessionView};

pub(super) const VTABLE: PluginVTable = PluginVTable {
    build,
    drop: drop_instance,
    on_session_open,
    on_session_close,
    job_order,
    sub_job_order,
    task_order,
    queue_order,
    victim_queue_order,
    pre_predicate,
    predicate,
    node_order,
    batch_node_order,
    best_node,
    job_valid,
    job_ready,
    sub_job_ready,
    job_pipelined,
    sub_job_pipelined,
    job_enqueueable,
    job_enqueued,
    job_starving,
    preemptable,
    reclaimable,
    unified_evictable,
    victim_tasks,
    allocatable,
    overused,
    preemptive,
    hyper_node_order,
    hyper_node_gradient_for_job,
    hyper_node_gradient_for_sub_job,
    simulation_begin,
    simulate_remove_task,
    simulate_add_task,
    simulation_end,
    on_allocate,
    on_deallocate,
};

// ---- plumbing -------------------------------------------------------------------------------

fn put(msg: &TextOut, code: u32, text: &str) {
    // SAFETY: `msg` is the `TextOut` the host lent for the call running now, and `text` lives
    // through the call.
    unsafe { (msg.put)(msg.ctx, code, Str::new(text)) };
}

/// Runs `f`, turning a panic into `PANICKED` with the panic message.
fn guard(msg: &TextOut, f: impl FnOnce() -> Status) -> Status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(status) => status,
        Err(payload) => {
            let text = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic with a non-string payload".into());
            put(msg, 0, &text);
            PANICKED
        }
    }
}

/// The plugin behind instance `i`.
///
/// # Safety
/// `i` is an instance `build` created and `drop` has not freed yet.
unsafe fn plugin<'a>(i: Instance) -> &'a dyn Plugin {
    // SAFETY: the caller's contract: `i` points at the live `Box<dyn Plugin>` `build` made.
    unsafe { &**(i as *const Box<dyn Plugin>) }
}

/// The plugin behind instance `i`, for a `&mut` point.
///
/// # Safety
/// As for `plugin`, and no other call holds the instance meanwhile (the host calls the `&mut`
/// points only while it holds the instance exclusively).
unsafe fn plugin_mut<'a>(i: Instance) -> &'a mut dyn Plugin {
    // SAFETY: the caller's contract: a live instance, held exclusively.
    unsafe { &mut **(i as *mut Box<dyn Plugin>) }
}

/// The `len` ids at `ptr`.
///
/// # Safety
/// `ptr` points at `len` ids that stay alive and unchanged for `'a` (when `len` is not 0).
unsafe fn ids<'a>(ptr: *const u32, len: usize) -> &'a [u32] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract: `len` live ids at `ptr`.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

/// The `len` score slots at `ptr`, for writing.
///
/// # Safety
/// `ptr` points at `len` writable scores nothing else touches for `'a` (when `len` is not 0).
unsafe fn out_slice<'a>(ptr: *mut f64, len: usize) -> &'a mut [f64] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: the caller's contract: `len` writable scores at `ptr`, used by no one else.
    unsafe { std::slice::from_raw_parts_mut(ptr, len) }
}

fn tri(o: Ordering) -> Tri {
    o as i32
}

fn vote(v: Vote) -> Tri {
    match v {
        Vote::Reject => -1,
        Vote::Abstain => 0,
        Vote::Permit => 1,
    }
}

fn code(c: StatusCode) -> u32 {
    match c {
        StatusCode::Error => fit_code::ERROR,
        StatusCode::Unschedulable => fit_code::UNSCHEDULABLE,
        StatusCode::UnschedulableAndUnresolvable => fit_code::UNSCHEDULABLE_AND_UNRESOLVABLE,
        StatusCode::Wait => fit_code::WAIT,
        StatusCode::Skip => fit_code::SKIP,
    }
}

fn fit(r: Result<(), FitError>, msg: &TextOut) -> Status {
    match r {
        Ok(()) => OK,
        Err(e) => {
            for s in e.statuses.iter() {
                put(msg, code(s.code), &s.reason);
            }
            FAILED
        }
    }
}

fn flag(answer: Option<bool>, out: &mut u8) -> Status {
    match answer {
        Some(b) => {
            *out = u8::from(b);
            OK
        }
        None => NOT_REGISTERED,
    }
}

fn task_list(answer: Option<Vec<TaskId>>, out: &IdsOut) -> Status {
    match answer {
        Some(tasks) => {
            let raw: Vec<u32> = tasks.iter().map(|t| t.0).collect();
            // SAFETY: `out` is the `IdsOut` the host lent for the call running now, and `raw`
            // holds `raw.len()` ids through the call.
            unsafe { (out.put)(out.ctx, raw.as_ptr(), raw.len()) };
            OK
        }
        None => NOT_REGISTERED,
    }
}

fn groups(answer: Option<Vec<Vec<HyperNodeId>>>, out: &IdsOut) -> Status {
    match answer {
        Some(groups) => {
            for g in groups {
                let raw: Vec<u32> = g.iter().map(|h| h.0).collect();
                // SAFETY: as for the victims: the lent `IdsOut`, `raw` alive through the call.
                unsafe { (out.put)(out.ctx, raw.as_ptr(), raw.len()) };
            }
            OK
        }
        None => NOT_REGISTERED,
    }
}

// ---- building -------------------------------------------------------------------------------

unsafe extern "C" fn build(
    library: *const abi::Library,
    index: u32,
    arguments_json: Str,
    out: &mut Instance,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host passes back the descriptor this library's entry point returned.
        let lib = unsafe { &*library };
        // SAFETY: `Exports::new` stored `plugin_count` builders at `builders`, in a static.
        let builders =
            unsafe { std::slice::from_raw_parts(lib.builders as *const Builder, lib.plugin_count) };
        let Some(builder) = builders.get(index as usize) else {
            put(msg, 0, &format!("this library has no plugin #{index}"));
            return FAILED;
        };
        // SAFETY: the host passes UTF-8 JSON valid for the call.
        let json = unsafe { arguments_json.get() }.unwrap_or("{}");
        let map = match serde_json::from_str(json) {
            Ok(m) => m,
            Err(e) => {
                put(msg, 0, &format!("arguments are not a JSON object: {e}"));
                return FAILED;
            }
        };
        match builder(&Arguments::new(map)) {
            Ok(p) => {
                *out = Box::into_raw(Box::new(p)) as Instance;
                OK
            }
            Err(e) => {
                put(msg, 1, &e.key);
                put(msg, 2, &e.value);
                put(msg, 3, &e.reason);
                FAILED
            }
        }
    })
}

unsafe extern "C" fn drop_instance(i: Instance) {
    // A panicking `Drop` must not unwind into the host; there is nobody left to tell.
    let _ = catch_unwind(|| {
        // SAFETY: `i` came from `Box::into_raw` in `build` and the host drops it once.
        drop(unsafe { Box::from_raw(i as *mut Box<dyn Plugin>) });
    });
}

// ---- points ---------------------------------------------------------------------------------

unsafe extern "C" fn on_session_open(i: Instance, s: &abi::Session, msg: &TextOut) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        unsafe { plugin_mut(i) }.on_session_open(&SessionView::host(s));
        OK
    })
}

unsafe extern "C" fn on_session_close(i: Instance, s: &abi::Session, msg: &TextOut) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        unsafe { plugin_mut(i) }.on_session_close(&SessionView::host(s));
        OK
    })
}

unsafe extern "C" fn job_order(
    i: Instance,
    s: &abi::Session,
    l: u32,
    r: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        *out = tri(unsafe { plugin(i) }.job_order(&SessionView::host(s), JobId(l), JobId(r)));
        OK
    })
}

unsafe extern "C" fn sub_job_order(
    i: Instance,
    s: &abi::Session,
    l: u32,
    r: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        *out = tri(unsafe { plugin(i) }.sub_job_order(
            &SessionView::host(s),
            SubJobId(l),
            SubJobId(r),
        ));
        OK
    })
}

unsafe extern "C" fn task_order(
    i: Instance,
    s: &abi::Session,
    l: u32,
    r: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        *out = tri(unsafe { plugin(i) }.task_order(&SessionView::host(s), TaskId(l), TaskId(r)));
        OK
    })
}

unsafe extern "C" fn queue_order(
    i: Instance,
    s: &abi::Session,
    l: u32,
    r: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        *out = tri(unsafe { plugin(i) }.queue_order(&SessionView::host(s), QueueId(l), QueueId(r)));
        OK
    })
}

unsafe extern "C" fn victim_queue_order(
    i: Instance,
    s: &abi::Session,
    l: u32,
    r: u32,
    preemptor: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        *out = tri(unsafe { plugin(i) }.victim_queue_order(
            &v,
            QueueId(l),
            QueueId(r),
            QueueId(preemptor),
        ));
        OK
    })
}

unsafe extern "C" fn pre_predicate(
    i: Instance,
    s: &abi::Session,
    task: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        fit(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.pre_predicate(&SessionView::host(s), TaskId(task)),
            msg,
        )
    })
}

unsafe extern "C" fn predicate(
    i: Instance,
    s: &abi::Session,
    task: u32,
    node: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        fit(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.predicate(&SessionView::host(s), TaskId(task), NodeId(node)),
            msg,
        )
    })
}

unsafe extern "C" fn node_order(
    i: Instance,
    s: &abi::Session,
    task: u32,
    node: u32,
    out: &mut f64,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        match unsafe { plugin(i) }.node_order(&SessionView::host(s), TaskId(task), NodeId(node)) {
            Some(Ok(score)) => {
                *out = score;
                OK
            }
            Some(Err(e)) => {
                put(msg, 0, &e);
                FAILED
            }
            None => NOT_REGISTERED,
        }
    })
}

unsafe extern "C" fn batch_node_order(
    i: Instance,
    s: &abi::Session,
    task: u32,
    nodes: *const u32,
    len: usize,
    out: *mut f64,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        let nodes: Vec<NodeId> = unsafe { ids(nodes, len) }
            .iter()
            .map(|&n| NodeId(n))
            .collect();
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        match unsafe { plugin(i) }.batch_node_order(&SessionView::host(s), TaskId(task), &nodes) {
            Some(Ok(scores)) => {
                // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
                for (slot, score) in unsafe { out_slice(out, len) }.iter_mut().zip(scores) {
                    *slot = score;
                }
                OK
            }
            Some(Err(e)) => {
                put(msg, 0, &e);
                FAILED
            }
            None => NOT_REGISTERED,
        }
    })
}

#[allow(
    clippy::too_many_arguments,
    reason = "an ABI call passes each argument of the point as its own C value"
)]
unsafe extern "C" fn best_node(
    i: Instance,
    s: &abi::Session,
    task: u32,
    nodes: *const u32,
    scores: *const f64,
    len: usize,
    out: &mut u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host passes `len` live scores beside the `len` node ids.
        let scores = if len == 0 {
            &[][..]
        } else {
            // SAFETY: as above, `scores` holds `len` live values for this call.
            unsafe { std::slice::from_raw_parts(scores, len) }
        };
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        let pairs: Vec<(NodeId, f64)> = unsafe { ids(nodes, len) }
            .iter()
            .zip(scores)
            .map(|(&n, &sc)| (NodeId(n), sc))
            .collect();
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        match unsafe { plugin(i) }.best_node(&SessionView::host(s), TaskId(task), &pairs) {
            Some(n) => {
                *out = n.0;
                OK
            }
            None => NOT_REGISTERED,
        }
    })
}

unsafe extern "C" fn job_valid(i: Instance, s: &abi::Session, job: u32, msg: &TextOut) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        match unsafe { plugin(i) }.job_valid(&SessionView::host(s), JobId(job)) {
            Some(invalid) => {
                put(msg, 0, &invalid.reason);
                put(msg, 1, &invalid.message);
                FAILED
            }
            None => OK,
        }
    })
}

unsafe extern "C" fn job_ready(
    i: Instance,
    s: &abi::Session,
    job: u32,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        flag(
            unsafe { plugin(i) }.job_ready(&SessionView::host(s), JobId(job)),
            out,
        )
    })
}

unsafe extern "C" fn sub_job_ready(
    i: Instance,
    s: &abi::Session,
    job: u32,
    sub_job: u32,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        flag(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.sub_job_ready(&v, JobId(job), SubJobId(sub_job)),
            out,
        )
    })
}

unsafe extern "C" fn job_pipelined(
    i: Instance,
    s: &abi::Session,
    job: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        *out = vote(unsafe { plugin(i) }.job_pipelined(&SessionView::host(s), JobId(job)));
        OK
    })
}

unsafe extern "C" fn sub_job_pipelined(
    i: Instance,
    s: &abi::Session,
    job: u32,
    sub_job: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        *out = vote(unsafe { plugin(i) }.sub_job_pipelined(&v, JobId(job), SubJobId(sub_job)));
        OK
    })
}

unsafe extern "C" fn job_enqueueable(
    i: Instance,
    s: &abi::Session,
    job: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        *out = vote(unsafe { plugin(i) }.job_enqueueable(&SessionView::host(s), JobId(job)));
        OK
    })
}

unsafe extern "C" fn job_enqueued(
    i: Instance,
    s: &abi::Session,
    job: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        unsafe { plugin_mut(i) }.job_enqueued(&SessionView::host(s), JobId(job));
        OK
    })
}

unsafe extern "C" fn job_starving(
    i: Instance,
    s: &abi::Session,
    job: u32,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        flag(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.job_starving(&SessionView::host(s), JobId(job)),
            out,
        )
    })
}

unsafe extern "C" fn preemptable(
    i: Instance,
    s: &abi::Session,
    preemptor: u32,
    candidates: *const u32,
    len: usize,
    out: &IdsOut,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        let c: Vec<TaskId> = unsafe { ids(candidates, len) }
            .iter()
            .map(|&t| TaskId(t))
            .collect();
        task_list(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.preemptable(&SessionView::host(s), TaskId(preemptor), &c),
            out,
        )
    })
}

unsafe extern "C" fn reclaimable(
    i: Instance,
    s: &abi::Session,
    reclaimer: u32,
    candidates: *const u32,
    len: usize,
    out: &IdsOut,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        let c: Vec<TaskId> = unsafe { ids(candidates, len) }
            .iter()
            .map(|&t| TaskId(t))
            .collect();
        task_list(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.reclaimable(&SessionView::host(s), TaskId(reclaimer), &c),
            out,
        )
    })
}

#[allow(
    clippy::too_many_arguments,
    reason = "an ABI call passes each argument of the point as its own C value"
)]
unsafe extern "C" fn unified_evictable(
    i: Instance,
    s: &abi::Session,
    kind: u32,
    job: u32,
    candidates: *const u32,
    len: usize,
    out: &IdsOut,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let kind = match kind {
            eviction_kind::GANG_RECLAIM => EvictionKind::GangReclaim,
            _ => EvictionKind::GangPreempt,
        };
        let ctx = EvictionContext {
            kind,
            job: JobId(job),
        };
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        let c: Vec<TaskId> = unsafe { ids(candidates, len) }
            .iter()
            .map(|&t| TaskId(t))
            .collect();
        task_list(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.unified_evictable(&SessionView::host(s), &ctx, &c),
            out,
        )
    })
}

unsafe extern "C" fn victim_tasks(
    i: Instance,
    s: &abi::Session,
    tasks: *const u32,
    len: usize,
    out: &IdsOut,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        let t: Vec<TaskId> = unsafe { ids(tasks, len) }
            .iter()
            .map(|&t| TaskId(t))
            .collect();
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        task_list(
            unsafe { plugin(i) }.victim_tasks(&SessionView::host(s), &t),
            out,
        )
    })
}

unsafe extern "C" fn allocatable(
    i: Instance,
    s: &abi::Session,
    queue: u32,
    task: u32,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        flag(
            unsafe { plugin(i) }.allocatable(&v, QueueId(queue), TaskId(task)),
            out,
        )
    })
}

unsafe extern "C" fn overused(
    i: Instance,
    s: &abi::Session,
    queue: u32,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        flag(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.overused(&SessionView::host(s), QueueId(queue)),
            out,
        )
    })
}

#[allow(
    clippy::too_many_arguments,
    reason = "an ABI call passes each argument of the point as its own C value"
)]
unsafe extern "C" fn preemptive(
    i: Instance,
    s: &abi::Session,
    queue: u32,
    tasks: *const u32,
    len: usize,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        let t: Vec<TaskId> = unsafe { ids(tasks, len) }
            .iter()
            .map(|&t| TaskId(t))
            .collect();
        flag(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.preemptive(&SessionView::host(s), QueueId(queue), &t),
            out,
        )
    })
}

unsafe extern "C" fn hyper_node_order(
    i: Instance,
    s: &abi::Session,
    sub_job: u32,
    hyper_nodes: *const u32,
    len: usize,
    out: *mut f64,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        let h: Vec<HyperNodeId> = unsafe { ids(hyper_nodes, len) }
            .iter()
            .map(|&x| HyperNodeId(x))
            .collect();
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        match unsafe { plugin(i) }.hyper_node_order(&SessionView::host(s), SubJobId(sub_job), &h) {
            Some(scores) => {
                // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
                for (slot, score) in unsafe { out_slice(out, len) }.iter_mut().zip(scores) {
                    *slot = score;
                }
                OK
            }
            None => NOT_REGISTERED,
        }
    })
}

fn search_purpose(p: u32) -> SearchPurpose {
    match p {
        purpose::EVICT => SearchPurpose::Evict,
        _ => SearchPurpose::Allocate,
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "an ABI call passes each argument of the point as its own C value"
)]
unsafe extern "C" fn hyper_node_gradient_for_job(
    i: Instance,
    s: &abi::Session,
    job: u32,
    hn: u32,
    purpose: u32,
    out: &IdsOut,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        let (j, h, p) = (JobId(job), HyperNodeId(hn), search_purpose(purpose));
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        groups(
            unsafe { plugin(i) }.hyper_node_gradient_for_job(&v, j, h, p),
            out,
        )
    })
}

#[allow(
    clippy::too_many_arguments,
    reason = "an ABI call passes each argument of the point as its own C value"
)]
unsafe extern "C" fn hyper_node_gradient_for_sub_job(
    i: Instance,
    s: &abi::Session,
    sub_job: u32,
    hn: u32,
    purpose: u32,
    out: &IdsOut,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        let (sj, h, p) = (SubJobId(sub_job), HyperNodeId(hn), search_purpose(purpose));
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        groups(
            unsafe { plugin(i) }.hyper_node_gradient_for_sub_job(&v, sj, h, p),
            out,
        )
    })
}

unsafe extern "C" fn simulation_begin(
    i: Instance,
    s: &abi::Session,
    preemptor: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        unsafe { plugin(i) }.simulation_begin(&SessionView::host(s), TaskId(preemptor));
        OK
    })
}

/// A hook's `Result<(), String>` as a status, the error text in `msg`.
fn unit_status(r: Result<(), String>, msg: &TextOut) -> Status {
    match r {
        Ok(()) => OK,
        Err(e) => {
            put(msg, 0, &e);
            FAILED
        }
    }
}

unsafe extern "C" fn simulate_remove_task(
    i: Instance,
    s: &abi::Session,
    preemptor: u32,
    task: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        unit_status(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.simulate_remove_task(&v, TaskId(preemptor), TaskId(task)),
            msg,
        )
    })
}

unsafe extern "C" fn simulate_add_task(
    i: Instance,
    s: &abi::Session,
    preemptor: u32,
    task: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        unit_status(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin(i) }.simulate_add_task(&v, TaskId(preemptor), TaskId(task)),
            msg,
        )
    })
}

unsafe extern "C" fn simulation_end(
    i: Instance,
    s: &abi::Session,
    preemptor: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        unsafe { plugin(i) }.simulation_end(&SessionView::host(s), TaskId(preemptor));
        OK
    })
}

unsafe extern "C" fn on_allocate(
    i: Instance,
    s: &abi::Session,
    task: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        unit_status(
            // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
            unsafe { plugin_mut(i) }.on_allocate(&SessionView::host(s), TaskId(task)),
            msg,
        )
    })
}

unsafe extern "C" fn on_deallocate(
    i: Instance,
    s: &abi::Session,
    task: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host calls with a live instance and live slices (abi::PluginVTable).
        unsafe { plugin_mut(i) }.on_deallocate(&SessionView::host(s), TaskId(task));
        OK
    })
}
