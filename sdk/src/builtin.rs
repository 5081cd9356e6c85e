//! Linking an SDK plugin in as a built-in: the engine calls it like any other plugin and it
//! reads the session state directly, with no ABI in between.

use tephra_engine::config::{ArgumentError, Arguments};
use tephra_engine::framework::{Plugin, PluginRegistry, SessionState};

use crate::{Builder, SessionView};

/// Registers an SDK plugin's builder under `name`, as a built-in.
pub fn register_builtin(registry: &mut PluginRegistry, name: &str, builder: Builder) {
    registry.register(name, linked(builder));
}

/// An SDK builder as an engine builder, e.g. for `Harness::with_plugin` in a plugin's tests.
pub fn linked(
    builder: Builder,
) -> impl Fn(&Arguments) -> Result<Box<dyn Plugin>, ArgumentError> + Send + Sync + 'static {
    move |args| Ok(Box::new(Linked(builder(args)?)) as Box<dyn Plugin>)
}

/// An SDK plugin seen as an engine plugin.
struct Linked(Box<dyn crate::Plugin>);

fn view(ssn: &SessionState) -> SessionView<'_> {
    SessionView::local(ssn)
}

/// Emits `impl Plugin for Linked` from the table of extension points: each point asks the SDK
/// plugin's method of the same name.
macro_rules! linked_points {
    (
        exclusive { $($(#[$xdoc:meta])* fn $xname:ident ($($xarg:ident: $xty:ty),*) -> $xret:ty = $xdefault:block;)* }
        closing { $($(#[$cdoc:meta])* fn $cname:ident ($($carg:ident: $cty:ty),*) -> $cret:ty = $cdefault:block;)* }
        shared { $($(#[$sdoc:meta])* fn $sname:ident ($($sarg:ident: $sty:ty),*) -> $sret:ty = $sdefault:block;)* }
    ) => {
        impl Plugin for Linked {
            fn name(&self) -> &str {
                self.0.name()
            }
            $(
                fn $xname(&mut self, ssn: &SessionState, $($xarg: $xty),*) -> $xret {
                    self.0.$xname(&view(ssn), $($xarg),*)
                }
            )*
            $(
                fn $cname(&mut self, ssn: &mut SessionState, $($carg: $cty),*) -> $cret {
                    self.0.$cname(&view(ssn), $($carg),*)
                }
            )*
            $(
                fn $sname(&self, ssn: &SessionState, $($sarg: $sty),*) -> $sret {
                    self.0.$sname(&view(ssn), $($sarg),*)
                }
            )*
        }
    };
}

tephra_engine::plugin_points!(linked_points);
