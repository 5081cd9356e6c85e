//! A library's plugin run as an engine plugin. Every call lends the session, collects the
//! answer, and maps it back to engine types. A plugin that panics, or answers an id the session
//! does not have, is disabled for the rest of its session (one cycle) with one log line; while
//! disabled it answers like a plugin that registers nothing, so the cycle goes on without it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering as Atomic};

use tephra_engine::framework::{Plugin, SessionState};

use super::PluginLibrary;
use super::session::lend;
use crate::abi::{self, Instance, PANICKED, PluginVTable, ReplyOut, Status};
use crate::wire::{Answer, Reply, Wire};

/// One instance of a library's plugin, for one session.
pub(super) struct ExternalPlugin {
    library: Arc<PluginLibrary>,
    name: String,
    instance: Instance,
    disabled: AtomicBool,
}

// SAFETY: instances are the SDK's `Box<dyn sdk::Plugin>`, which is `Send + Sync`; `&self` points
// only ever take a shared reference inside the library.
unsafe impl Send for ExternalPlugin {}
// SAFETY: as for `Send`.
unsafe impl Sync for ExternalPlugin {}

impl Drop for ExternalPlugin {
    fn drop(&mut self) {
        // SAFETY: the instance came from this library's `build` and is dropped once, here.
        unsafe { (self.vtable().drop)(self.instance) };
    }
}

impl ExternalPlugin {
    pub(super) fn new(library: Arc<PluginLibrary>, name: String, instance: Instance) -> Self {
        ExternalPlugin {
            library,
            name,
            instance,
            disabled: AtomicBool::new(false),
        }
    }

    fn vtable(&self) -> &PluginVTable {
        &self.library.exports().vtable
    }

    /// Calls into the library unless the plugin is disabled. `None` when disabled, or when the
    /// call panicked or answered what `A` refuses in `ssn` (which disables the plugin and logs
    /// why).
    fn call<A: Answer>(
        &self,
        point: &str,
        ssn: &SessionState,
        f: impl FnOnce(&PluginVTable, Instance, &abi::Session, &ReplyOut) -> Status,
    ) -> Option<Reply> {
        if self.disabled.load(Atomic::Relaxed) {
            return None;
        }
        let session = lend(ssn);
        let mut reply = Reply::default();
        reply.status = f(self.vtable(), self.instance, &session, &reply.out());
        if reply.status == PANICKED {
            self.disable(&format!("panicked in {point}: {}", reply.text(0)));
            return None;
        }
        if let Some(why) = A::refusal(&reply, ssn) {
            self.disable(&format!("failed in {point}: {why}"));
            return None;
        }
        Some(reply)
    }

    fn disable(&self, what: &str) {
        if !self.disabled.swap(true, Atomic::Relaxed) {
            eprintln!(
                "tephra: plugin {} ({}) {what}; disabled for the rest of this cycle",
                self.name,
                self.library.origin()
            );
        }
    }
}

/// Calls function `$f` of the library's vtable `$v` (as `call` and its wrappers lend it).
macro_rules! library_call {
    ($v:ident . $f:ident ( $($arg:expr),* $(,)? )) => {
        // SAFETY: `call` lends this library's own vtable, an instance its `build` made and `drop`
        // has not freed (the `&mut self` points hold it exclusively), and a session and `ReplyOut`
        // valid for the call; ids, slices and buffers are the host's for the call's duration.
        unsafe { ($v.$f)($($arg),*) }
    };
}

/// Emits `impl Plugin for ExternalPlugin` from the table of extension points: each point
/// sends its arguments (`Wire`), calls the library and reads the answer back (`Answer`).
macro_rules! host_side {
    (
        exclusive { $($(#[$xdoc:meta])* fn $xname:ident ($($xarg:ident: $xty:ty),*) -> $xret:ty = $xdefault:block;)* }
        closing { $($(#[$cdoc:meta])* fn $cname:ident ($($carg:ident: $cty:ty),*) -> $cret:ty = $cdefault:block;)* }
        shared { $($(#[$sdoc:meta])* fn $sname:ident ($($sarg:ident: $sty:ty),*) -> $sret:ty = $sdefault:block;)* }
    ) => {
        impl Plugin for ExternalPlugin {
            fn name(&self) -> &str {
                &self.name
            }
            $(
                fn $xname(&mut self, ssn: &SessionState, $($xarg: $xty),*) -> $xret {
                    host_side!(@call self, ssn, $xname ($($xarg: $xty),*) -> $xret)
                }
            )*
            $(
                fn $cname(&mut self, ssn: &mut SessionState, $($carg: $cty),*) -> $cret {
                    host_side!(@call self, ssn, $cname ($($carg: $cty),*) -> $cret)
                }
            )*
            $(
                fn $sname(&self, ssn: &SessionState, $($sarg: $sty),*) -> $sret {
                    host_side!(@call self, ssn, $sname ($($sarg: $sty),*) -> $sret)
                }
            )*
        }
    };
    (@call $self:ident, $ssn:ident, $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty) => {{
        $(let $arg = <$ty as Wire>::send($arg);)*
        let reply = $self.call::<$ret>(stringify!($name), $ssn, |v, i, s, out| {
            library_call!(v.$name(i, s, $(<$ty as Wire>::c(&$arg),)* out))
        });
        <$ret as Answer>::from_reply(reply)
    }};
}

tephra_engine::plugin_points!(host_side);
