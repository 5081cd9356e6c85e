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
    (msg.put)(msg.ctx, code, Str::new(text));
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

fn plugin<'a>(i: Instance) -> &'a dyn Plugin {
    // SAFETY: the host passes an instance `build` created and `drop` has not freed yet.
    unsafe { &**(i as *const Box<dyn Plugin>) }
}

fn plugin_mut<'a>(i: Instance) -> &'a mut dyn Plugin {
    // SAFETY: as for `plugin`; the host calls the `&mut` points only while it holds the
    // instance exclusively.
    unsafe { &mut **(i as *mut Box<dyn Plugin>) }
}

fn ids<'a>(ptr: *const u32, len: usize) -> &'a [u32] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the host passes a live slice of `len` ids for the duration of the call.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

fn out_slice<'a>(ptr: *mut f64, len: usize) -> &'a mut [f64] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: the host passes a buffer of `len` scores it does not touch during the call.
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
            (out.put)(out.ctx, raw.as_ptr(), raw.len());
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
                (out.put)(out.ctx, raw.as_ptr(), raw.len());
            }
            OK
        }
        None => NOT_REGISTERED,
    }
}

// ---- building -------------------------------------------------------------------------------

extern "C" fn build(
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

extern "C" fn drop_instance(i: Instance) {
    // A panicking `Drop` must not unwind into the host; there is nobody left to tell.
    let _ = catch_unwind(|| {
        // SAFETY: `i` came from `Box::into_raw` in `build` and the host drops it once.
        drop(unsafe { Box::from_raw(i as *mut Box<dyn Plugin>) });
    });
}

// ---- points ---------------------------------------------------------------------------------

extern "C" fn on_session_open(i: Instance, s: &abi::Session, msg: &TextOut) -> Status {
    guard(msg, || {
        plugin_mut(i).on_session_open(&SessionView::host(s));
        OK
    })
}

extern "C" fn on_session_close(i: Instance, s: &abi::Session, msg: &TextOut) -> Status {
    guard(msg, || {
        plugin_mut(i).on_session_close(&SessionView::host(s));
        OK
    })
}

extern "C" fn job_order(
    i: Instance,
    s: &abi::Session,
    l: u32,
    r: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        *out = tri(plugin(i).job_order(&SessionView::host(s), JobId(l), JobId(r)));
        OK
    })
}

extern "C" fn sub_job_order(
    i: Instance,
    s: &abi::Session,
    l: u32,
    r: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        *out = tri(plugin(i).sub_job_order(&SessionView::host(s), SubJobId(l), SubJobId(r)));
        OK
    })
}

extern "C" fn task_order(
    i: Instance,
    s: &abi::Session,
    l: u32,
    r: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        *out = tri(plugin(i).task_order(&SessionView::host(s), TaskId(l), TaskId(r)));
        OK
    })
}

extern "C" fn queue_order(
    i: Instance,
    s: &abi::Session,
    l: u32,
    r: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        *out = tri(plugin(i).queue_order(&SessionView::host(s), QueueId(l), QueueId(r)));
        OK
    })
}

extern "C" fn victim_queue_order(
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
        *out = tri(plugin(i).victim_queue_order(&v, QueueId(l), QueueId(r), QueueId(preemptor)));
        OK
    })
}

extern "C" fn pre_predicate(i: Instance, s: &abi::Session, task: u32, msg: &TextOut) -> Status {
    guard(msg, || {
        fit(
            plugin(i).pre_predicate(&SessionView::host(s), TaskId(task)),
            msg,
        )
    })
}

extern "C" fn predicate(
    i: Instance,
    s: &abi::Session,
    task: u32,
    node: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        fit(
            plugin(i).predicate(&SessionView::host(s), TaskId(task), NodeId(node)),
            msg,
        )
    })
}

extern "C" fn node_order(
    i: Instance,
    s: &abi::Session,
    task: u32,
    node: u32,
    out: &mut f64,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        match plugin(i).node_order(&SessionView::host(s), TaskId(task), NodeId(node)) {
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

extern "C" fn batch_node_order(
    i: Instance,
    s: &abi::Session,
    task: u32,
    nodes: *const u32,
    len: usize,
    out: *mut f64,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let nodes: Vec<NodeId> = ids(nodes, len).iter().map(|&n| NodeId(n)).collect();
        match plugin(i).batch_node_order(&SessionView::host(s), TaskId(task), &nodes) {
            Some(Ok(scores)) => {
                for (slot, score) in out_slice(out, len).iter_mut().zip(scores) {
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
extern "C" fn best_node(
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
        let pairs: Vec<(NodeId, f64)> = ids(nodes, len)
            .iter()
            .zip(scores)
            .map(|(&n, &sc)| (NodeId(n), sc))
            .collect();
        match plugin(i).best_node(&SessionView::host(s), TaskId(task), &pairs) {
            Some(n) => {
                *out = n.0;
                OK
            }
            None => NOT_REGISTERED,
        }
    })
}

extern "C" fn job_valid(i: Instance, s: &abi::Session, job: u32, msg: &TextOut) -> Status {
    guard(msg, || {
        match plugin(i).job_valid(&SessionView::host(s), JobId(job)) {
            Some(invalid) => {
                put(msg, 0, &invalid.reason);
                put(msg, 1, &invalid.message);
                FAILED
            }
            None => OK,
        }
    })
}

extern "C" fn job_ready(
    i: Instance,
    s: &abi::Session,
    job: u32,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        flag(plugin(i).job_ready(&SessionView::host(s), JobId(job)), out)
    })
}

extern "C" fn sub_job_ready(
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
            plugin(i).sub_job_ready(&v, JobId(job), SubJobId(sub_job)),
            out,
        )
    })
}

extern "C" fn job_pipelined(
    i: Instance,
    s: &abi::Session,
    job: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        *out = vote(plugin(i).job_pipelined(&SessionView::host(s), JobId(job)));
        OK
    })
}

extern "C" fn sub_job_pipelined(
    i: Instance,
    s: &abi::Session,
    job: u32,
    sub_job: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        *out = vote(plugin(i).sub_job_pipelined(&v, JobId(job), SubJobId(sub_job)));
        OK
    })
}

extern "C" fn job_enqueueable(
    i: Instance,
    s: &abi::Session,
    job: u32,
    out: &mut Tri,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        *out = vote(plugin(i).job_enqueueable(&SessionView::host(s), JobId(job)));
        OK
    })
}

extern "C" fn job_enqueued(i: Instance, s: &abi::Session, job: u32, msg: &TextOut) -> Status {
    guard(msg, || {
        plugin_mut(i).job_enqueued(&SessionView::host(s), JobId(job));
        OK
    })
}

extern "C" fn job_starving(
    i: Instance,
    s: &abi::Session,
    job: u32,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        flag(
            plugin(i).job_starving(&SessionView::host(s), JobId(job)),
            out,
        )
    })
}

extern "C" fn preemptable(
    i: Instance,
    s: &abi::Session,
    preemptor: u32,
    candidates: *const u32,
    len: usize,
    out: &IdsOut,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let c: Vec<TaskId> = ids(candidates, len).iter().map(|&t| TaskId(t)).collect();
        task_list(
            plugin(i).preemptable(&SessionView::host(s), TaskId(preemptor), &c),
            out,
        )
    })
}

extern "C" fn reclaimable(
    i: Instance,
    s: &abi::Session,
    reclaimer: u32,
    candidates: *const u32,
    len: usize,
    out: &IdsOut,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let c: Vec<TaskId> = ids(candidates, len).iter().map(|&t| TaskId(t)).collect();
        task_list(
            plugin(i).reclaimable(&SessionView::host(s), TaskId(reclaimer), &c),
            out,
        )
    })
}

#[allow(
    clippy::too_many_arguments,
    reason = "an ABI call passes each argument of the point as its own C value"
)]
extern "C" fn unified_evictable(
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
        let c: Vec<TaskId> = ids(candidates, len).iter().map(|&t| TaskId(t)).collect();
        task_list(
            plugin(i).unified_evictable(&SessionView::host(s), &ctx, &c),
            out,
        )
    })
}

extern "C" fn victim_tasks(
    i: Instance,
    s: &abi::Session,
    tasks: *const u32,
    len: usize,
    out: &IdsOut,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let t: Vec<TaskId> = ids(tasks, len).iter().map(|&t| TaskId(t)).collect();
        task_list(plugin(i).victim_tasks(&SessionView::host(s), &t), out)
    })
}

extern "C" fn allocatable(
    i: Instance,
    s: &abi::Session,
    queue: u32,
    task: u32,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        flag(plugin(i).allocatable(&v, QueueId(queue), TaskId(task)), out)
    })
}

extern "C" fn overused(
    i: Instance,
    s: &abi::Session,
    queue: u32,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        flag(
            plugin(i).overused(&SessionView::host(s), QueueId(queue)),
            out,
        )
    })
}

#[allow(
    clippy::too_many_arguments,
    reason = "an ABI call passes each argument of the point as its own C value"
)]
extern "C" fn preemptive(
    i: Instance,
    s: &abi::Session,
    queue: u32,
    tasks: *const u32,
    len: usize,
    out: &mut u8,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let t: Vec<TaskId> = ids(tasks, len).iter().map(|&t| TaskId(t)).collect();
        flag(
            plugin(i).preemptive(&SessionView::host(s), QueueId(queue), &t),
            out,
        )
    })
}

extern "C" fn hyper_node_order(
    i: Instance,
    s: &abi::Session,
    sub_job: u32,
    hyper_nodes: *const u32,
    len: usize,
    out: *mut f64,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let h: Vec<HyperNodeId> = ids(hyper_nodes, len)
            .iter()
            .map(|&x| HyperNodeId(x))
            .collect();
        match plugin(i).hyper_node_order(&SessionView::host(s), SubJobId(sub_job), &h) {
            Some(scores) => {
                for (slot, score) in out_slice(out, len).iter_mut().zip(scores) {
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
extern "C" fn hyper_node_gradient_for_job(
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
        groups(plugin(i).hyper_node_gradient_for_job(&v, j, h, p), out)
    })
}

#[allow(
    clippy::too_many_arguments,
    reason = "an ABI call passes each argument of the point as its own C value"
)]
extern "C" fn hyper_node_gradient_for_sub_job(
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
        groups(plugin(i).hyper_node_gradient_for_sub_job(&v, sj, h, p), out)
    })
}

extern "C" fn simulation_begin(
    i: Instance,
    s: &abi::Session,
    preemptor: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        plugin(i).simulation_begin(&SessionView::host(s), TaskId(preemptor));
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

extern "C" fn simulate_remove_task(
    i: Instance,
    s: &abi::Session,
    preemptor: u32,
    task: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        unit_status(
            plugin(i).simulate_remove_task(&v, TaskId(preemptor), TaskId(task)),
            msg,
        )
    })
}

extern "C" fn simulate_add_task(
    i: Instance,
    s: &abi::Session,
    preemptor: u32,
    task: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        let v = SessionView::host(s);
        unit_status(
            plugin(i).simulate_add_task(&v, TaskId(preemptor), TaskId(task)),
            msg,
        )
    })
}

extern "C" fn simulation_end(
    i: Instance,
    s: &abi::Session,
    preemptor: u32,
    msg: &TextOut,
) -> Status {
    guard(msg, || {
        plugin(i).simulation_end(&SessionView::host(s), TaskId(preemptor));
        OK
    })
}

extern "C" fn on_allocate(i: Instance, s: &abi::Session, task: u32, msg: &TextOut) -> Status {
    guard(msg, || {
        unit_status(
            plugin_mut(i).on_allocate(&SessionView::host(s), TaskId(task)),
            msg,
        )
    })
}

extern "C" fn on_deallocate(i: Instance, s: &abi::Session, task: u32, msg: &TextOut) -> Status {
    guard(msg, || {
        plugin_mut(i).on_deallocate(&SessionView::host(s), TaskId(task));
        OK
    })
}
