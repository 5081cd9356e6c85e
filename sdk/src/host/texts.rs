//! Collecting what a library writes to a `TextOut` or an `IdsOut`.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::abi::{IdsOut, Str, TextOut};

/// The texts of one call, each with its code.
#[derive(Debug, Default)]
pub(super) struct Texts(pub Vec<(u32, String)>);

impl Texts {
    /// A `TextOut` that appends to `self`; valid while `self` is neither moved nor dropped.
    pub fn out(&mut self) -> TextOut {
        TextOut {
            ctx: self as *mut Texts as *mut c_void,
            put: put_text,
        }
    }

    /// The text written with `code`, empty when none.
    pub fn get(&self, code: u32) -> &str {
        self.0
            .iter()
            .find(|(c, _)| *c == code)
            .map_or("", |(_, t)| t.as_str())
    }
}

/// `TextOut::put` of `Texts::out`; trusts its `ctx` and `text` (`abi::TextOut`).
unsafe extern "C" fn put_text(ctx: *mut c_void, code: u32, text: Str) {
    // Nothing may unwind into the library; a lost message is the worst outcome.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `ctx` is the `Texts` that `Texts::out` lent for this call, and `text` is
        // UTF-8 the library keeps alive during `put`.
        let (texts, text) = unsafe { (&mut *(ctx as *mut Texts), text.get()) };
        texts.0.push((code, text.unwrap_or_default().to_string()));
    }));
}

/// The id lists of one call.
#[derive(Debug, Default)]
pub(super) struct IdLists(pub Vec<Vec<u32>>);

impl IdLists {
    /// An `IdsOut` that appends to `self`; valid while `self` is neither moved nor dropped.
    pub fn out(&mut self) -> IdsOut {
        IdsOut {
            ctx: self as *mut IdLists as *mut c_void,
            put: put_ids,
        }
    }
}

/// `IdsOut::put` of `IdLists::out`; trusts its `ctx` and ids (`abi::IdsOut`).
unsafe extern "C" fn put_ids(ctx: *mut c_void, ids: *const u32, len: usize) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `ctx` is the `IdLists` that `IdLists::out` lent for this call, and `ids`
        // points to `len` ids the library keeps alive during `put`.
        let lists = unsafe { &mut *(ctx as *mut IdLists) };
        let ids = if len == 0 {
            &[][..]
        } else {
            // SAFETY: `ids` points to `len` ids the library keeps alive during `put`.
            unsafe { std::slice::from_raw_parts(ids, len) }
        };
        lists.0.push(ids.to_vec());
    }));
}
