//! The plugin ABI: the only types that cross between tephra and a plugin library.
//!
//! Everything here is `#[repr(C)]`: integers, floats, borrowed UTF-8 slices and `unsafe extern
//! "C"` function pointers: each callee trusts the raw pointers it is handed (see "Safety" on each
//! table), which the compiler cannot check across the boundary, so every call is an `unsafe`
//! block that says why its arguments hold. Host and library may therefore be built by different compilers against
//! different versions of every crate; only `ABI_VERSION` must match. Ids cross as their `u32`,
//! the session crosses as a table of accessors (`SessionVTable`), answers come back through the
//! `ReplyOut` callbacks, so no allocation ever changes sides. The plugin functions
//! (`PluginVTable`) are generated from the table of extension points
//! (`tephra_engine::plugin_points!`), each argument in the C form `crate::wire::Wire` gives it.
//!
//! Growing the ABI without a version bump: new accessor *fields* (the `field` constants) may be
//! added, since an older host answers `UNKNOWN_FIELD`; anything else bumps `ABI_VERSION`.

use std::ffi::c_void;

/// The version of this ABI. A library built for another version is refused at load.
pub const ABI_VERSION: u32 = 2;

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
/// The call failed and wrote why to its `ReplyOut` (a bad argument, a fit error, a score error,
/// an invalid job).
pub const FAILED: Status = 2;
/// The callee panicked; the panic message was written to its `ReplyOut` (code 0).
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

/// Where a callee writes its answer and messages: texts with a code (error and panic messages,
/// each fit-error reason with its status code `fit_code`, a job's invalid reason (code 0) and
/// message (code 1)), lists of numbers (orderings and votes as -1 / 0 / 1, flags as 0 / 1,
/// scores) and lists of ids (victims, a chosen node, one list per hyper-node group). How each
/// answer is written is `crate::wire::Answer`.
///
/// # Safety
/// Each function may be called only with this `ctx`, and with a `text` or `len` values valid for
/// the call, while the call that lent the `ReplyOut` runs.
#[repr(C)]
pub struct ReplyOut {
    pub ctx: *mut c_void,
    pub text: unsafe extern "C" fn(ctx: *mut c_void, code: u32, text: Str),
    pub numbers: unsafe extern "C" fn(ctx: *mut c_void, values: *const f64, len: usize),
    pub ids: unsafe extern "C" fn(ctx: *mut c_void, ids: *const u32, len: usize),
}

/// A list of ids lent for one call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Ids {
    pub ptr: *const u32,
    pub len: usize,
}

/// Scored nodes lent for one call: `len` node ids and as many scores.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Scored {
    pub nodes: *const u32,
    pub scores: *const f64,
    pub len: usize,
}

/// A gang-aware eviction: its `eviction_kind` and the starving job.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Eviction {
    pub kind: u32,
    pub job: u32,
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

/// Emits `PluginVTable` from the table of extension points: `build` and `drop`, then one
/// function per point taking the instance, the session, the point's arguments in their C form
/// and a `ReplyOut`, and answering a `Status`.
macro_rules! plugin_vtable {
    ($($group:ident { $($(#[$doc:meta])* fn $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty = $default:block;)* })*) => {
        /// The plugin functions. Every point takes the instance, the session, its arguments in
        /// the C form of `crate::wire::Wire` and a `ReplyOut` for its answer and messages, and
        /// answers a `Status`; `PANICKED` is possible from each.
        ///
        /// # Safety
        /// The host calls `build` only with the `Library` this library's entry point returned,
        /// and every other function only with an instance `build` made and `drop` has not freed
        /// (`drop` once per instance, and the `&mut` points never while another call holds the
        /// same instance), a `Session` and a `ReplyOut` valid for the call, and id and score
        /// lists of the stated length, alive for the call.
        #[repr(C)]
        pub struct PluginVTable {
            /// Builds plugin `index` of `library` from its arguments (a JSON object); a refused
            /// argument is written as its key (code 1), value (code 2) and reason (code 3).
            pub build: unsafe extern "C" fn(
                library: *const Library,
                index: u32,
                arguments_json: Str,
                out: &mut Instance,
                msg: &ReplyOut,
            ) -> Status,
            /// Drops an instance.
            pub drop: unsafe extern "C" fn(Instance),
            $($(
                $(#[$doc])*
                pub $name: unsafe extern "C" fn(
                    Instance,
                    &Session,
                    $(<$ty as crate::wire::Wire>::C,)*
                    &ReplyOut,
                ) -> Status,
            )*)*
        }
    };
}

tephra_engine::plugin_points!(plugin_vtable);
