//! Collecting what a library writes to a `ReplyOut` during one call.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::abi::{ReplyOut, Str};
use crate::wire::{Reply, copied};

impl Reply {
    /// A `ReplyOut` that appends to `self`; valid while `self` is neither moved nor dropped.
    pub(super) fn out(&mut self) -> ReplyOut {
        ReplyOut {
            ctx: self as *mut Reply as *mut c_void,
            text: put_text,
            numbers: put_numbers,
            ids: put_ids,
        }
    }
}

/// Runs `f` on the `Reply` behind `ctx`; nothing may unwind into the library, and a lost answer
/// is the worst outcome.
///
/// # Safety
/// `ctx` is the `Reply` that `Reply::out` lent for the call running now.
unsafe fn with_reply(ctx: *mut c_void, f: impl FnOnce(&mut Reply)) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract: `ctx` is the lent, live `Reply`.
        f(unsafe { &mut *(ctx as *mut Reply) })
    }));
}

/// `ReplyOut::text`; trusts its `ctx` and `text` (`abi::ReplyOut`).
unsafe extern "C" fn put_text(ctx: *mut c_void, code: u32, text: Str) {
    // SAFETY: `ctx` is the lent `Reply` and `text` is UTF-8 the library keeps alive during the
    // call (`abi::ReplyOut`).
    unsafe {
        with_reply(ctx, |r| {
            r.texts
                .push((code, text.get().unwrap_or_default().to_string()))
        })
    };
}

/// `ReplyOut::numbers`; trusts its `ctx` and values (`abi::ReplyOut`).
unsafe extern "C" fn put_numbers(ctx: *mut c_void, values: *const f64, len: usize) {
    // SAFETY: `ctx` is the lent `Reply`; `values` holds `len` numbers the library keeps alive
    // during the call (`abi::ReplyOut`).
    unsafe { with_reply(ctx, |r| r.numbers.extend(copied(values, len))) };
}

/// `ReplyOut::ids`; trusts its `ctx` and ids (`abi::ReplyOut`).
unsafe extern "C" fn put_ids(ctx: *mut c_void, ids: *const u32, len: usize) {
    // SAFETY: `ctx` is the lent `Reply`; `ids` holds `len` ids the library keeps alive during
    // the call (`abi::ReplyOut`).
    unsafe { with_reply(ctx, |r| r.ids.push(copied(ids, len))) };
}
