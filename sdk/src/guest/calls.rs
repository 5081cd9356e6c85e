//! The plugin functions of the ABI, library side: rebuild the arguments, run the SDK plugin
//! under `catch_unwind`, write the answer. One function per extension point, generated from the
//! table of points (`tephra_engine::plugin_points!`).

use std::panic::{AssertUnwindSafe, catch_unwind};

use tephra_engine::config::Arguments;

use crate::abi::{self, FAILED, Instance, OK, PANICKED, PluginVTable, ReplyOut, Status, Str};
use crate::wire::{Answer, Lend, Wire, put_text};
use crate::{Builder, Plugin, SessionView};

/// Runs `f`, turning a panic into `PANICKED` with the panic message.
fn guard(out: &ReplyOut, f: impl FnOnce() -> Status) -> Status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(status) => status,
        Err(payload) => {
            let text = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic with a non-string payload".into());
            put_text(out, 0, &text);
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

unsafe extern "C" fn build(
    library: *const abi::Library,
    index: u32,
    arguments_json: Str,
    out: &mut Instance,
    msg: &ReplyOut,
) -> Status {
    guard(msg, || {
        // SAFETY: the host passes back the descriptor this library's entry point returned.
        let lib = unsafe { &*library };
        // SAFETY: `Exports::new` stored `plugin_count` builders at `builders`, in a static.
        let builders =
            unsafe { std::slice::from_raw_parts(lib.builders as *const Builder, lib.plugin_count) };
        let Some(builder) = builders.get(index as usize) else {
            put_text(msg, 0, &format!("this library has no plugin #{index}"));
            return FAILED;
        };
        // SAFETY: the host passes UTF-8 JSON valid for the call.
        let json = unsafe { arguments_json.get() }.unwrap_or("{}");
        let map = match serde_json::from_str(json) {
            Ok(m) => m,
            Err(e) => {
                put_text(msg, 0, &format!("arguments are not a JSON object: {e}"));
                return FAILED;
            }
        };
        match builder(&Arguments::new(map)) {
            Ok(p) => {
                *out = Box::into_raw(Box::new(p)) as Instance;
                OK
            }
            Err(e) => {
                put_text(msg, 1, &e.key);
                put_text(msg, 2, &e.value);
                put_text(msg, 3, &e.reason);
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

/// Emits one ABI function per point and `VTABLE`, the table of them.
macro_rules! library_side {
    (
        exclusive { $($(#[$xdoc:meta])* fn $xname:ident ($($xarg:ident: $xty:ty),*) -> $xret:ty = $xdefault:block;)* }
        closing { $($(#[$cdoc:meta])* fn $cname:ident ($($carg:ident: $cty:ty),*) -> $cret:ty = $cdefault:block;)* }
        shared { $($(#[$sdoc:meta])* fn $sname:ident ($($sarg:ident: $sty:ty),*) -> $sret:ty = $sdefault:block;)* }
    ) => {
        pub(super) const VTABLE: PluginVTable = PluginVTable {
            build,
            drop: drop_instance,
            $($xname,)*
            $($cname,)*
            $($sname,)*
        };

        $(library_side!(@point plugin_mut, $xname ($($xarg: $xty),*) -> $xret);)*
        $(library_side!(@point plugin_mut, $cname ($($carg: $cty),*) -> $cret);)*
        $(library_side!(@point plugin, $sname ($($sarg: $sty),*) -> $sret);)*
    };
    (@point $instance:ident, $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        #[allow(
            clippy::too_many_arguments,
            reason = "an ABI call passes each argument of the point as its own C value"
        )]
        unsafe extern "C" fn $name(
            i: Instance,
            s: &abi::Session,
            $($arg: <$ty as Wire>::C,)*
            out: &ReplyOut,
        ) -> Status {
            guard(out, || {
                $(
                    // SAFETY: the host passes each argument as `Wire::c` made it, alive for the
                    // call (abi::PluginVTable).
                    let $arg = unsafe { <$ty as Wire>::receive($arg) };
                )*
                // SAFETY: the host calls with a live instance, held exclusively for the `&mut`
                // points (abi::PluginVTable).
                let plugin = unsafe { $instance(i) };
                let answer: $ret = plugin.$name(&SessionView::host(s), $($arg.lend()),*);
                <$ret as Answer>::reply(answer, out)
            })
        }
    };
}

tephra_engine::plugin_points!(library_side);
