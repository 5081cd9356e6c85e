//! The plugin trait of the SDK: the engine's `Plugin`, point for point, reading the session
//! through `SessionView` so the same code runs linked in or loaded from a library.

use tephra_engine::config::{ArgumentError, Arguments};

use crate::SessionView;

/// Emits the SDK's `Plugin` trait from the table of extension points: the engine's points,
/// reading the session through `SessionView`.
macro_rules! sdk_plugin_trait {
    (
        exclusive { $($(#[$xdoc:meta])* fn $xname:ident ($($xarg:ident: $xty:ty),*) -> $xret:ty = $xdefault:block;)* }
        closing { $($(#[$cdoc:meta])* fn $cname:ident ($($carg:ident: $cty:ty),*) -> $cret:ty = $cdefault:block;)* }
        shared { $($(#[$sdoc:meta])* fn $sname:ident ($($sarg:ident: $sty:ty),*) -> $sret:ty = $sdefault:block;)* }
    ) => {
        /// A scheduling plugin written against the SDK. Each method is the engine `Plugin`
        /// method of the same name (see `docs/plugins.md` for when each is called and how
        /// answers combine); every one but `name` has a default that stays out of the decision,
        /// and `None` means "this plugin does not register the point".
        #[allow(
            unused_variables,
            reason = "the default methods name the arguments a plugin's own version reads"
        )]
        pub trait Plugin: Send + Sync {
            /// The name configured in the tiers.
            fn name(&self) -> &str;

            $($(#[$xdoc])* fn $xname(&mut self, ssn: &SessionView, $($xarg: $xty),*) -> $xret $xdefault)*
            $($(#[$cdoc])* fn $cname(&mut self, ssn: &SessionView, $($carg: $cty),*) -> $cret $cdefault)*
            $($(#[$sdoc])* fn $sname(&self, ssn: &SessionView, $($sarg: $sty),*) -> $sret $sdefault)*
        }
    };
}

tephra_engine::plugin_points!(sdk_plugin_trait);

/// Builds an SDK plugin from its arguments: what `export_plugins!` and `register_builtin` take.
pub type Builder = fn(&Arguments) -> Result<Box<dyn Plugin>, ArgumentError>;
