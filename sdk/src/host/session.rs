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

/// The session behind `ctx`.
///
/// # Safety
/// `ctx` is the `SessionState` that `lend` lent for the call in progress.
unsafe fn state<'a>(ctx: *const c_void) -> &'a SessionState {
    // SAFETY: the caller's contract: `ctx` points at the lent, still borrowed `SessionState`.
    unsafe { &*(ctx as *const SessionState) }
}

/// The text of a key the library passed.
///
/// # Safety
/// `s` is UTF-8 the library keeps alive for `'a` (the accessor call).
unsafe fn key<'a>(s: Str) -> &'a str {
    // SAFETY: the caller's contract: valid UTF-8, alive for the call.
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

// The accessors trust the library to pass the `ctx` of the session lent for the call in
// progress and keys valid for the call (`abi::SessionVTable`); each says so once.

unsafe extern "C" fn count(ctx: *const c_void, table: u32, out: &mut u32) -> Status {
    // SAFETY: the `SessionVTable` contract: the lent session's `ctx`.
    let ssn = unsafe { state(ctx) };
    serve(out, || read::count(ssn, table))
}

unsafe extern "C" fn text(ctx: *const c_void, field: u32, id: u32, out: &mut Str) -> Status {
    // SAFETY: the `SessionVTable` contract: the lent session's `ctx`.
    let ssn = unsafe { state(ctx) };
    serve(out, || read::text(ssn, field, id).map(Str::new))
}

unsafe extern "C" fn lookup(
    ctx: *const c_void,
    field: u32,
    id: u32,
    k: Str,
    out: &mut Str,
) -> Status {
    // SAFETY: the `SessionVTable` contract: the lent session's `ctx`, a key valid for the call.
    let (ssn, k) = unsafe { (state(ctx), key(k)) };
    serve(out, || read::lookup(ssn, field, id, k).map(Str::opt))
}

unsafe extern "C" fn number(ctx: *const c_void, field: u32, id: u32, out: &mut f64) -> Status {
    // SAFETY: the `SessionVTable` contract: the lent session's `ctx`.
    let ssn = unsafe { state(ctx) };
    serve(out, || read::number(ssn, field, id))
}

unsafe extern "C" fn resource(
    ctx: *const c_void,
    field: u32,
    id: u32,
    name: Str,
    out: &mut f64,
) -> Status {
    // SAFETY: the `SessionVTable` contract: the lent session's `ctx`, a name valid for the call.
    let (ssn, name) = unsafe { (state(ctx), key(name)) };
    serve(out, || read::resource(ssn, field, id, name))
}

unsafe extern "C" fn reference(ctx: *const c_void, field: u32, id: u32, out: &mut u32) -> Status {
    // SAFETY: the `SessionVTable` contract: the lent session's `ctx`.
    let ssn = unsafe { state(ctx) };
    serve(out, || {
        read::reference(ssn, field, id).map(|r| r.unwrap_or(NO_ID))
    })
}

unsafe extern "C" fn member(
    ctx: *const c_void,
    field: u32,
    id: u32,
    index: u32,
    out: &mut u32,
) -> Status {
    // SAFETY: the `SessionVTable` contract: the lent session's `ctx`.
    let ssn = unsafe { state(ctx) };
    serve(out, || read::member(ssn, field, id, index))
}

unsafe extern "C" fn find(ctx: *const c_void, table: u32, name: Str, out: &mut u32) -> Status {
    // SAFETY: the `SessionVTable` contract: the lent session's `ctx`, a name valid for the call.
    let (ssn, name) = unsafe { (state(ctx), key(name)) };
    serve(out, || {
        read::find(ssn, table, name).map(|r| r.unwrap_or(NO_ID))
    })
}
