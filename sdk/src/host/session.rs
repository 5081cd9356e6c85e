//! Lending the session to a library: a static accessor table over `SessionState`, answering
//! with `read` and never unwinding into the library.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use tephra_engine::framework::SessionState;

use crate::abi::{self, NO_ID, OK, PANICKED, SessionVTable, Status, Str};
use crate::read;

static VTABLE: SessionVTable = SessionVTable {
    count,
    text,
    lookup,
    number,
    resource,
    reference,
    member,
    find,
};

/// The session as lent for one call; valid while `ssn` is borrowed.
pub(super) fn lend(ssn: &SessionState) -> abi::Session {
    abi::Session {
        ctx: ssn as *const SessionState as *const c_void,
        vtable: &VTABLE,
    }
}

fn state<'a>(ctx: *const c_void) -> &'a SessionState {
    // SAFETY: `ctx` is the `SessionState` that `lend` lent for the call in progress.
    unsafe { &*(ctx as *const SessionState) }
}

fn key<'a>(s: Str) -> &'a str {
    // SAFETY: the library keeps the key alive during the accessor call.
    unsafe { s.get() }.unwrap_or_default()
}

/// Runs `f` and writes its answer; a panic (a bug on this side) becomes `PANICKED`.
fn serve<T>(out: &mut T, f: impl FnOnce() -> read::Read<T>) -> Status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => {
            *out = v;
            OK
        }
        Ok(Err(status)) => status,
        Err(_) => PANICKED,
    }
}

extern "C" fn count(ctx: *const c_void, table: u32, out: &mut u32) -> Status {
    serve(out, || read::count(state(ctx), table))
}

extern "C" fn text(ctx: *const c_void, field: u32, id: u32, out: &mut Str) -> Status {
    serve(out, || read::text(state(ctx), field, id).map(Str::new))
}

extern "C" fn lookup(ctx: *const c_void, field: u32, id: u32, k: Str, out: &mut Str) -> Status {
    serve(out, || {
        read::lookup(state(ctx), field, id, key(k)).map(Str::opt)
    })
}

extern "C" fn number(ctx: *const c_void, field: u32, id: u32, out: &mut f64) -> Status {
    serve(out, || read::number(state(ctx), field, id))
}

extern "C" fn resource(
    ctx: *const c_void,
    field: u32,
    id: u32,
    name: Str,
    out: &mut f64,
) -> Status {
    serve(out, || read::resource(state(ctx), field, id, key(name)))
}

extern "C" fn reference(ctx: *const c_void, field: u32, id: u32, out: &mut u32) -> Status {
    serve(out, || {
        read::reference(state(ctx), field, id).map(|r| r.unwrap_or(NO_ID))
    })
}

extern "C" fn member(ctx: *const c_void, field: u32, id: u32, index: u32, out: &mut u32) -> Status {
    serve(out, || read::member(state(ctx), field, id, index))
}

extern "C" fn find(ctx: *const c_void, table: u32, name: Str, out: &mut u32) -> Status {
    serve(out, || {
        read::find(state(ctx), table, key(name)).map(|r| r.unwrap_or(NO_ID))
    })
}
