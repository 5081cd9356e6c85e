//! The `Plugin` trait: one method per extension point, each with a neutral default, generated
//! from the table of points (`points.rs`) that the SDK's trait and the plugin ABI come from too.
//!
//! A method that returns `Option` answers `None` for "this plugin does not register this point";
//! that matters where Volcano's combination rule distinguishes a missing function from an empty
//! answer (victims, JobStarving, ...). Hooks take `&self` and a read-only `SessionState`, so the
//! framework may call them from several threads; only session open/close, `job_enqueued` and the
//! allocate/deallocate event handlers get `&mut self`.

use std::sync::Arc;

use fixedbitset::FixedBitSet;

use super::{FitError, SessionState};

use crate::config::{ArgumentError, Arguments};
use crate::model::{NodeId, TaskId};

/// Emits the engine's `Plugin` trait from the table of extension points (`points.rs`), with
/// the engine's own points that plugin libraries do not see (batched predicates and the class
/// cache's questions) written here.
macro_rules! engine_plugin_trait {
    (
        exclusive { $($(#[$xdoc:meta])* fn $xname:ident ($($xarg:ident: $xty:ty),*) -> $xret:ty = $xdefault:block;)* }
        closing { $($(#[$cdoc:meta])* fn $cname:ident ($($carg:ident: $cty:ty),*) -> $cret:ty = $cdefault:block;)* }
        shared { $($(#[$sdoc:meta])* fn $sname:ident ($($sarg:ident: $sty:ty),*) -> $sret:ty = $sdefault:block;)* }
    ) => {
        /// A scheduling plugin. Every method but `name` has a default that stays out of the
        /// decision.
        #[allow(
            unused_variables,
            reason = "the default methods name the arguments a plugin's own version reads"
        )]
        pub trait Plugin: Send + Sync {
            /// The name configured in the tiers.
            fn name(&self) -> &str;

            $($(#[$xdoc])* fn $xname(&mut self, ssn: &SessionState, $($xarg: $xty),*) -> $xret $xdefault)*
            $($(#[$cdoc])* fn $cname(&mut self, ssn: &mut SessionState, $($carg: $cty),*) -> $cret $cdefault)*
            $($(#[$sdoc])* fn $sname(&self, ssn: &SessionState, $($sarg: $sty),*) -> $sret $sdefault)*

            /// Predicate over a batch of nodes, one answer per node in order: a scan of many nodes asks
            /// in batches, so a plugin whose predicate reads shared state may read it once a batch
            /// (threads scanning together would otherwise contend on it node by node). Must answer
            /// exactly as `predicate` does node by node, which the default asks.
            fn predicate_nodes(
                &self,
                ssn: &SessionState,
                task: TaskId,
                nodes: &[NodeId],
            ) -> Vec<Result<(), FitError>> {
                nodes
                    .iter()
                    .map(|&n| self.predicate(ssn, task, n))
                    .collect()
            }
            /// Whether this plugin's predicate and node scores for `task` are node-local: they depend
            /// only on the task's scheduling signature (requests, node selector, node affinity,
            /// tolerations, overhead, and per container its image, host ports, requests and restart
            /// policy: `snapshot::TaskSignature`) and on each node's own state, so a change on one node
            /// changes nothing on another. Then tasks of one signature share a cached node ranking
            /// (`actions::class_cache`), which the next session keeps for the nodes that did not
            /// change: the answers must not depend on anything else that may differ between sessions
            /// (the configuration aside). The safe default is `false`; plugins without predicate or
            /// score hooks answer `true`.
            fn node_local(&self, ssn: &SessionState, task: TaskId) -> bool {
                false
            }

            /// Nodes that can pass this plugin's predicate for `task` in this snapshot, from what a
            /// session never changes (labels, taints, schedulability): every node outside the set fails
            /// the predicate whatever the session does. A superset is fine; `None` (the default) says
            /// nothing. A class ranks only these nodes up front and works out the failures of the
            /// others when they are needed.
            fn static_feasible(&self, ssn: &SessionState, task: TaskId) -> Option<FixedBitSet> {
                None
            }
        }
    };
}

crate::plugin_points!(engine_plugin_trait);

/// Builds a plugin from its arguments; a bad argument is refused. A shared closure rather than a
/// `fn` pointer so a builder can hold what it needs, such as the library an external plugin was
/// loaded from.
pub type PluginBuilder =
    Arc<dyn Fn(&Arguments) -> Result<Box<dyn Plugin>, ArgumentError> + Send + Sync>;
