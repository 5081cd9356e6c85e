//! The plugin ABI: the only types that cross between tephra and a plugin library.
//!
//! Everything here is `#[repr(C)]`: integers, floats, borrowed UTF-8 slices and `unsafe extern
//! "C"` function pointers: each callee trusts the raw pointers it is handed (see "Safety" on each
//! table), which the compiler cannot check across the boundary, so every call is an `unsafe`
//! block that says why its arguments hold. Host and library may therefore be built by different compilers against
//! different versions of every crate; only `ABI_VERSION` must match. Ids cross as their `u32`,
//! the session crosses as a table of accessors (`SessionVTable`), answers come back through
//! out-parameters and the `TextOut` / `IdsOut` callbacks, so no allocation ever changes sides.
//!
//! Growing the ABI without a version bump: new accessor *fields* (the `field` constants) may be
//! added, since an older host answers `UNKNOWN_FIELD`; anything else bumps `ABI_VERSION`.

use std::ffi::c_void;

/// The version of this ABI. A library built for another version is refused at load.
pub const ABI_VERSION: u32 = 1;

/// The symbol every plugin library exports (see `export_plugins!`), of type `Entry`.
pub const ENTRY_SYMBOL: &str = "tephra_plugin_entry";

/// The entry point: the library's `Library` descriptor, valid while the library stays loaded.
/// It takes nothing and trusts nothing, so it is the one safe function type here.
pub type Entry = extern "C" fn() -> *const Library;

/// The outcome of a call across the boundary.
pub type Status = u32;
/// The call succeeded and wrote its answer.
pub const OK: Status = 0;
/// The plugin does not register this extension point (`None` in the trait).
pub const NOT_REGISTERED: Status = 1;
/// The call failed and wrote why to its `TextOut` (a bad argument, a fit error, a score error,
/// an invalid job).
pub const FAILED: Status = 2;
/// The callee panicked; the panic message was written to its `TextOut`.
pub const PANICKED: Status = 3;
/// A session accessor was asked for an id that is not in the session.
pub const NO_SUCH_ID: Status = 4;
/// A session accessor was asked for a field this host does not know.
pub const UNKNOWN_FIELD: Status = 5;

/// An id that is absent (a task without a node, ...).
pub const NO_ID: u32 = u32::MAX;

/// A borrowed UTF-8 string; `ptr` null means "none". Valid only during the call that passed it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Str {
    pub ptr: *const u8,
    pub len: usize,
}

impl Str {
    /// No string (`None`).
    pub const NONE: Str = Str {
        ptr: std::ptr::null(),
        len: 0,
    };

    /// Borrows `s`.
    pub const fn new(s: &str) -> Str {
        Str {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }

    /// Borrows `s`, or `NONE`.
    pub fn opt(s: Option<&str>) -> Str {
        s.map_or(Str::NONE, Str::new)
    }

    /// The string, `None` for `NONE`.
    ///
    /// # Safety
    /// `ptr` / `len` must describe valid UTF-8 that outlives `'a`, as the ABI promises for the
    /// duration of the call that passed it.
    pub unsafe fn get<'a>(self) -> Option<&'a str> {
        if self.ptr.is_null() {
            return None;
        }
        // SAFETY: the caller promises `ptr..ptr+len` is live UTF-8 for `'a`.
        Some(unsafe {
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.ptr, self.len))
        })
    }
}

/// Where a callee writes text: error and panic messages, each fit-error reason with its status
/// code (`fit_code`), a job's invalid reason (code 0) and message (code 1).
///
/// # Safety
/// `put` may be called only with this `ctx` and a `text` valid for the call, while the call
/// that lent the `TextOut` runs.
#[repr(C)]
pub struct TextOut {
    pub ctx: *mut c_void,
    pub put: unsafe extern "C" fn(ctx: *mut c_void, code: u32, text: Str),
}

/// Where a callee writes id lists: victims (one call), hyper-node gradients (one call per group).
///
/// # Safety
/// `put` may be called only with this `ctx` and `len` ids readable at `ids`, while the call that
/// lent the `IdsOut` runs.
#[repr(C)]
pub struct IdsOut {
    pub ctx: *mut c_void,
    pub put: unsafe extern "C" fn(ctx: *mut c_void, ids: *const u32, len: usize),
}

/// Fit-error status codes, Volcano's numbering.
pub mod fit_code {
    pub const ERROR: u32 = 1;
    pub const UNSCHEDULABLE: u32 = 2;
    pub const UNSCHEDULABLE_AND_UNRESOLVABLE: u32 = 3;
    pub const WAIT: u32 = 4;
    pub const SKIP: u32 = 5;
}

/// `SearchPurpose` of the hyper-node gradients.
pub mod purpose {
    pub const ALLOCATE: u32 = 0;
    pub const EVICT: u32 = 1;
}

/// `EvictionKind` of a unified-evictable call.
pub mod eviction_kind {
    pub const GANG_PREEMPT: u32 = 0;
    pub const GANG_RECLAIM: u32 = 1;
}

/// Votes and orderings cross as `i32`: Volcano's Reject / Abstain / Permit are -1 / 0 / 1, and
/// `Ordering::Less / Equal / Greater` are -1 / 0 / 1.
pub type Tri = i32;

/// The session, as the host lends it for one call.
#[repr(C)]
pub struct Session {
    pub ctx: *const c_void,
    pub vtable: *const SessionVTable,
}

/// Read-only accessors over the session. Each takes a `field` constant (see `field`), answers
/// `OK`, `NO_SUCH_ID`, `UNKNOWN_FIELD` or `PANICKED`, and writes its answer to `out`. Strings
/// written to `out` stay valid until the call that lent the session returns.
///
/// # Safety
/// Each accessor may be called only with the `ctx` of the `Session` that holds this table, while
/// the call that lent the session runs, and with any `Str` argument valid for the call.
#[repr(C)]
pub struct SessionVTable {
    /// Rows in a table (`field::table`).
    pub count: unsafe extern "C" fn(ctx: *const c_void, table: u32, out: &mut u32) -> Status,
    /// A string column (`field::text`).
    pub text:
        unsafe extern "C" fn(ctx: *const c_void, field: u32, id: u32, out: &mut Str) -> Status,
    /// A map entry such as a label (`field::lookup`); `Str::NONE` when the key is absent.
    pub lookup: unsafe extern "C" fn(
        ctx: *const c_void,
        field: u32,
        id: u32,
        key: Str,
        out: &mut Str,
    ) -> Status,
    /// A number column, booleans as 0 / 1 (`field::number`).
    pub number:
        unsafe extern "C" fn(ctx: *const c_void, field: u32, id: u32, out: &mut f64) -> Status,
    /// One dimension of a resource column (`field::resource`), in Volcano's units: cpu in
    /// millicores, memory in bytes, other scalars in milli-units, `pods` in units.
    pub resource: unsafe extern "C" fn(
        ctx: *const c_void,
        field: u32,
        id: u32,
        name: Str,
        out: &mut f64,
    ) -> Status,
    /// A reference to another row (`field::reference`); `NO_ID` when absent.
    pub reference:
        unsafe extern "C" fn(ctx: *const c_void, field: u32, id: u32, out: &mut u32) -> Status,
    /// The `index`-th member of a list column (`field::member`); its length is a `number` field.
    pub member: unsafe extern "C" fn(
        ctx: *const c_void,
        field: u32,
        id: u32,
        index: u32,
        out: &mut u32,
    ) -> Status,
    /// A row by name (`field::table`: node name, job `namespace/name`, queue name); `NO_ID`
    /// when there is none.
    pub find:
        unsafe extern "C" fn(ctx: *const c_void, table: u32, name: Str, out: &mut u32) -> Status,
}

/// The `field` selectors of the session accessors, grouped by accessor.
pub mod field {
    /// Tables, for `count` and `find`.
    pub mod table {
        pub const NODES: u32 = 0;
        pub const TASKS: u32 = 1;
        pub const JOBS: u32 = 2;
        pub const QUEUES: u32 = 3;
    }
    /// For `text`.
    pub mod text {
        pub const NODE_NAME: u32 = 0;
        pub const TASK_NAME: u32 = 1;
        pub const TASK_NAMESPACE: u32 = 2;
        pub const TASK_UID: u32 = 3;
        pub const TASK_ROLE: u32 = 4;
        pub const JOB_UID: u32 = 5;
        pub const JOB_NAME: u32 = 6;
        pub const JOB_NAMESPACE: u32 = 7;
        pub const QUEUE_NAME: u32 = 8;
    }
    /// For `lookup`.
    pub mod lookup {
        pub const NODE_LABEL: u32 = 0;
        pub const TASK_LABEL: u32 = 1;
        pub const TASK_ANNOTATION: u32 = 2;
        /// The job's PodGroup annotation.
        pub const JOB_ANNOTATION: u32 = 3;
    }
    /// For `number`.
    pub mod number {
        pub const NODE_UNSCHEDULABLE: u32 = 0;
        pub const NODE_TASK_COUNT: u32 = 1;
        /// Volcano's status bit (Pending 1, Allocated 2, ... Unknown 512).
        pub const TASK_STATUS: u32 = 2;
        pub const TASK_PRIORITY: u32 = 3;
        pub const TASK_BEST_EFFORT: u32 = 4;
        pub const TASK_PREEMPTABLE: u32 = 5;
        pub const JOB_PRIORITY: u32 = 6;
        pub const JOB_MIN_AVAILABLE: u32 = 7;
        pub const JOB_TASK_COUNT: u32 = 8;
        pub const JOB_READY_TASK_NUM: u32 = 9;
        pub const JOB_WAITING_TASK_NUM: u32 = 10;
        pub const QUEUE_WEIGHT: u32 = 11;
        /// The session clock in Unix seconds (the id is ignored).
        pub const SESSION_NOW: u32 = 12;
    }
    /// For `resource`.
    pub mod resource {
        pub const NODE_ALLOCATABLE: u32 = 0;
        pub const NODE_CAPACITY: u32 = 1;
        pub const NODE_USED: u32 = 2;
        pub const NODE_IDLE: u32 = 3;
        pub const NODE_RELEASING: u32 = 4;
        pub const NODE_PIPELINED: u32 = 5;
        pub const TASK_REQUEST: u32 = 6;
        pub const JOB_ALLOCATED: u32 = 7;
        pub const JOB_TOTAL_REQUEST: u32 = 8;
    }
    /// For `reference`.
    pub mod reference {
        pub const TASK_JOB: u32 = 0;
        pub const TASK_NODE: u32 = 1;
        pub const JOB_QUEUE: u32 = 2;
    }
    /// For `member`.
    pub mod member {
        /// Tasks accounted on a node (length: `number::NODE_TASK_COUNT`).
        pub const NODE_TASK: u32 = 0;
        /// Tasks of a job (length: `number::JOB_TASK_COUNT`).
        pub const JOB_TASK: u32 = 1;
    }
}

/// A plugin instance inside the library, opaque to the host.
pub type Instance = *mut c_void;

/// What a library exports: its plugins by name and the functions that run them. Read
/// `abi_version` before anything else.
#[repr(C)]
pub struct Library {
    pub abi_version: u32,
    /// The SDK version the library was built with, for messages.
    pub sdk_version: Str,
    pub plugin_names: *const Str,
    pub plugin_count: usize,
    /// The library's builders, opaque to the host.
    pub builders: *const c_void,
    pub vtable: PluginVTable,
}

/// The plugin functions. Every one takes the instance, the session and a `TextOut` for its
/// message, and answers a `Status`; `PANICKED` is possible from each. Slices cross as pointer and
/// length; score buffers are allocated by the host with one slot per input id.
///
/// # Safety
/// The host calls `build` only with the `Library` this library's entry point returned, and every
/// other function only with an instance `build` made and `drop` has not freed (`drop` once per
/// instance, and the `&mut` points never while another call holds the same instance), a
/// `Session` valid for the call, and slices of the stated length (score buffers writable).
#[repr(C)]
pub struct PluginVTable {
    /// Builds plugin `index` of `library` from its arguments (a JSON object).
    pub build: unsafe extern "C" fn(
        library: *const Library,
        index: u32,
        arguments_json: Str,
        out: &mut Instance,
        msg: &TextOut,
    ) -> Status,
    /// Drops an instance.
    pub drop: unsafe extern "C" fn(Instance),

    pub on_session_open: unsafe extern "C" fn(Instance, &Session, &TextOut) -> Status,
    pub on_session_close: unsafe extern "C" fn(Instance, &Session, &TextOut) -> Status,

    pub job_order: unsafe extern "C" fn(Instance, &Session, u32, u32, &mut Tri, &TextOut) -> Status,
    pub sub_job_order:
        unsafe extern "C" fn(Instance, &Session, u32, u32, &mut Tri, &TextOut) -> Status,
    pub task_order:
        unsafe extern "C" fn(Instance, &Session, u32, u32, &mut Tri, &TextOut) -> Status,
    pub queue_order:
        unsafe extern "C" fn(Instance, &Session, u32, u32, &mut Tri, &TextOut) -> Status,
    /// `(l, r, preemptor)`.
    pub victim_queue_order:
        unsafe extern "C" fn(Instance, &Session, u32, u32, u32, &mut Tri, &TextOut) -> Status,

    /// `FAILED`: the fit error's statuses were written with their codes.
    pub pre_predicate: unsafe extern "C" fn(Instance, &Session, u32, &TextOut) -> Status,
    /// `(task, node)`; `FAILED` as for `pre_predicate`.
    pub predicate: unsafe extern "C" fn(Instance, &Session, u32, u32, &TextOut) -> Status,
    /// `(task, node)`.
    pub node_order:
        unsafe extern "C" fn(Instance, &Session, u32, u32, &mut f64, &TextOut) -> Status,
    /// `(task, nodes, len, scores)`: one score per node.
    pub batch_node_order: unsafe extern "C" fn(
        Instance,
        &Session,
        u32,
        *const u32,
        usize,
        *mut f64,
        &TextOut,
    ) -> Status,
    /// `(task, nodes, scores, len, chosen)`.
    pub best_node: unsafe extern "C" fn(
        Instance,
        &Session,
        u32,
        *const u32,
        *const f64,
        usize,
        &mut u32,
        &TextOut,
    ) -> Status,

    /// `OK`: valid; `FAILED`: invalid, reason (code 0) and message (code 1) written.
    pub job_valid: unsafe extern "C" fn(Instance, &Session, u32, &TextOut) -> Status,
    pub job_ready: unsafe extern "C" fn(Instance, &Session, u32, &mut u8, &TextOut) -> Status,
    /// `(job, sub_job)`.
    pub sub_job_ready:
        unsafe extern "C" fn(Instance, &Session, u32, u32, &mut u8, &TextOut) -> Status,
    pub job_pipelined: unsafe extern "C" fn(Instance, &Session, u32, &mut Tri, &TextOut) -> Status,
    pub sub_job_pipelined:
        unsafe extern "C" fn(Instance, &Session, u32, u32, &mut Tri, &TextOut) -> Status,
    pub job_enqueueable:
        unsafe extern "C" fn(Instance, &Session, u32, &mut Tri, &TextOut) -> Status,
    pub job_enqueued: unsafe extern "C" fn(Instance, &Session, u32, &TextOut) -> Status,
    pub job_starving: unsafe extern "C" fn(Instance, &Session, u32, &mut u8, &TextOut) -> Status,

    /// `(preemptor, candidates, len, victims)`.
    pub preemptable: unsafe extern "C" fn(
        Instance,
        &Session,
        u32,
        *const u32,
        usize,
        &IdsOut,
        &TextOut,
    ) -> Status,
    pub reclaimable: unsafe extern "C" fn(
        Instance,
        &Session,
        u32,
        *const u32,
        usize,
        &IdsOut,
        &TextOut,
    ) -> Status,
    /// `(eviction_kind, starving job, candidates, len, victims)`.
    pub unified_evictable: unsafe extern "C" fn(
        Instance,
        &Session,
        u32,
        u32,
        *const u32,
        usize,
        &IdsOut,
        &TextOut,
    ) -> Status,
    /// `(tasks, len, victims)`.
    pub victim_tasks:
        unsafe extern "C" fn(Instance, &Session, *const u32, usize, &IdsOut, &TextOut) -> Status,

    /// `(queue, task)`.
    pub allocatable:
        unsafe extern "C" fn(Instance, &Session, u32, u32, &mut u8, &TextOut) -> Status,
    pub overused: unsafe extern "C" fn(Instance, &Session, u32, &mut u8, &TextOut) -> Status,
    /// `(queue, tasks, len)`.
    pub preemptive: unsafe extern "C" fn(
        Instance,
        &Session,
        u32,
        *const u32,
        usize,
        &mut u8,
        &TextOut,
    ) -> Status,

    /// `(sub_job, hyper_nodes, len, scores)`.
    pub hyper_node_order: unsafe extern "C" fn(
        Instance,
        &Session,
        u32,
        *const u32,
        usize,
        *mut f64,
        &TextOut,
    ) -> Status,
    /// `(job, hyper_node, purpose, groups)`.
    pub hyper_node_gradient_for_job:
        unsafe extern "C" fn(Instance, &Session, u32, u32, u32, &IdsOut, &TextOut) -> Status,
    /// `(sub_job, hyper_node, purpose, groups)`.
    pub hyper_node_gradient_for_sub_job:
        unsafe extern "C" fn(Instance, &Session, u32, u32, u32, &IdsOut, &TextOut) -> Status,

    /// `(preemptor)`.
    pub simulation_begin: unsafe extern "C" fn(Instance, &Session, u32, &TextOut) -> Status,
    /// `(preemptor, task)`; `FAILED`: the error was written.
    pub simulate_remove_task:
        unsafe extern "C" fn(Instance, &Session, u32, u32, &TextOut) -> Status,
    /// `(preemptor, task)`; `FAILED`: the error was written.
    pub simulate_add_task: unsafe extern "C" fn(Instance, &Session, u32, u32, &TextOut) -> Status,
    /// `(preemptor)`.
    pub simulation_end: unsafe extern "C" fn(Instance, &Session, u32, &TextOut) -> Status,

    /// `FAILED`: the error was written; the allocation is rolled back.
    pub on_allocate: unsafe extern "C" fn(Instance, &Session, u32, &TextOut) -> Status,
    pub on_deallocate: unsafe extern "C" fn(Instance, &Session, u32, &TextOut) -> Status,
}
