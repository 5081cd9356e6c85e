//! The extension points, declared once.
//!
//! `plugin_points!(callback)` hands this one table to `callback!`, a `macro_rules!` macro that
//! turns it into one of the places a point lives: the engine's `Plugin` trait
//! (`framework/plugin.rs`), and in the SDK its `Plugin` trait, the bridge that links an SDK plugin
//! in, the ABI's function table, the library side of each call and the host side
//! (`sdk/src/{plugin,builtin,abi}.rs`, `sdk/src/guest/calls.rs`, `sdk/src/host/plugin.rs`). A
//! point added or changed here is added or changed in all of them, or one of them fails to
//! build. How the answers of several plugins combine is Volcano's rule for each point, written
//! by hand in `framework/dispatch.rs`; `POINTS` names every point so a test there checks that
//! each one is dispatched.
//!
//! The table has three groups, by what a point may change: `exclusive` points take the plugin
//! by `&mut self` (session open, admission and the allocate/deallocate event handlers),
//! `closing` is session close (also `&mut self`, and the engine lends the session mutably),
//! `shared` points take `&self` and may be called from several threads at once. Each entry
//! gives the point's arguments after the session, its answer and its default answer, the one
//! that stays out of the decision (`None` is "this plugin does not register the point", which
//! matters where Volcano's rule tells a missing function from an empty answer).
//!
//! Argument and answer types are written with `$crate` paths so the table reads the same
//! wherever it is expanded.

/// Calls `$callback!` with the table of extension points (see the module doc for its form).
#[doc(hidden)]
#[macro_export]
macro_rules! plugin_points {
    ($callback:ident) => {
        $callback! {
            exclusive {
                /// Once when the session opens, in tier order: precompute per-session state here.
                fn on_session_open() -> () = {};
                /// JobEnqueued: the job was admitted; book its resources.
                fn job_enqueued(job: $crate::model::JobId) -> () = {};
                /// Event handler: `task` was allocated or pipelined (or un-evicted). An error
                /// rolls the statement operation back.
                fn on_allocate(task: $crate::model::TaskId) -> Result<(), String> = { Ok(()) };
                /// Event handler: `task` was evicted, un-pipelined or un-allocated.
                fn on_deallocate(task: $crate::model::TaskId) -> () = {};
            }
            closing {
                /// Once when the session closes, before the job status updater runs.
                fn on_session_close() -> () = {};
            }
            shared {
                /// JobOrder: `Less` = `l` first. The first non-`Equal` answer across tiers wins.
                fn job_order(l: $crate::model::JobId, r: $crate::model::JobId)
                    -> std::cmp::Ordering = { std::cmp::Ordering::Equal };
                /// SubJobOrder.
                fn sub_job_order(l: $crate::model::SubJobId, r: $crate::model::SubJobId)
                    -> std::cmp::Ordering = { std::cmp::Ordering::Equal };
                /// TaskOrder.
                fn task_order(l: $crate::model::TaskId, r: $crate::model::TaskId)
                    -> std::cmp::Ordering = { std::cmp::Ordering::Equal };
                /// QueueOrder.
                fn queue_order(l: $crate::model::QueueId, r: $crate::model::QueueId)
                    -> std::cmp::Ordering = { std::cmp::Ordering::Equal };
                /// VictimQueueOrder: which queue's victims go first for `preemptor`'s queue.
                fn victim_queue_order(
                    l: $crate::model::QueueId,
                    r: $crate::model::QueueId,
                    preemptor: $crate::model::QueueId
                ) -> std::cmp::Ordering = { std::cmp::Ordering::Equal };

                /// PrePredicate: checks on the task alone.
                fn pre_predicate(task: $crate::model::TaskId)
                    -> Result<(), $crate::framework::FitError> = { Ok(()) };
                /// Predicate: may `task` go to `node`.
                fn predicate(task: $crate::model::TaskId, node: $crate::model::NodeId)
                    -> Result<(), $crate::framework::FitError> = { Ok(()) };
                /// NodeOrder: a score for one node.
                fn node_order(task: $crate::model::TaskId, node: $crate::model::NodeId)
                    -> Option<Result<f64, String>> = { None };
                /// BatchNodeOrder: one score per node of `nodes`, same order.
                fn batch_node_order(task: $crate::model::TaskId, nodes: &[$crate::model::NodeId])
                    -> Option<Result<Vec<f64>, String>> = { None };
                /// BestNode: pick a node from the scored candidates.
                fn best_node(task: $crate::model::TaskId, scores: &[($crate::model::NodeId, f64)])
                    -> Option<$crate::model::NodeId> = { None };

                /// JobValid: `Some` when the job must not be scheduled.
                fn job_valid(job: $crate::model::JobId)
                    -> Option<$crate::framework::JobInvalid> = { None };
                /// JobReady.
                fn job_ready(job: $crate::model::JobId) -> Option<bool> = { None };
                /// SubJobReady.
                fn sub_job_ready(job: $crate::model::JobId, sub_job: $crate::model::SubJobId)
                    -> Option<bool> = { None };
                /// JobPipelined vote.
                fn job_pipelined(job: $crate::model::JobId)
                    -> $crate::framework::Vote = { $crate::framework::Vote::Abstain };
                /// SubJobPipelined vote.
                fn sub_job_pipelined(job: $crate::model::JobId, sub_job: $crate::model::SubJobId)
                    -> $crate::framework::Vote = { $crate::framework::Vote::Abstain };
                /// JobEnqueueable vote.
                fn job_enqueueable(job: $crate::model::JobId)
                    -> $crate::framework::Vote = { $crate::framework::Vote::Abstain };
                /// JobStarving.
                fn job_starving(job: $crate::model::JobId) -> Option<bool> = { None };

                /// Preemptable: which of `candidates` `preemptor` may evict.
                fn preemptable(preemptor: $crate::model::TaskId, candidates: &[$crate::model::TaskId])
                    -> Option<Vec<$crate::model::TaskId>> = { None };
                /// Reclaimable: which of `candidates` `reclaimer` may evict.
                fn reclaimable(reclaimer: $crate::model::TaskId, candidates: &[$crate::model::TaskId])
                    -> Option<Vec<$crate::model::TaskId>> = { None };
                /// UnifiedEvictable: which of `candidates` the gang-aware eviction described by
                /// `ctx` may take (candidates come in the order the action would evict them).
                fn unified_evictable(
                    ctx: &$crate::framework::EvictionContext,
                    candidates: &[$crate::model::TaskId]
                ) -> Option<Vec<$crate::model::TaskId>> = { None };
                /// VictimTasks: tasks this plugin wants evicted.
                fn victim_tasks(tasks: &[$crate::model::TaskId])
                    -> Option<Vec<$crate::model::TaskId>> = { None };

                /// Allocatable: may `task` be allocated from `queue` now.
                fn allocatable(queue: $crate::model::QueueId, task: $crate::model::TaskId)
                    -> Option<bool> = { None };
                /// Overused: is the queue over its share.
                fn overused(queue: $crate::model::QueueId) -> Option<bool> = { None };
                /// Preemptive: may the queue take resources for `tasks` (together) by eviction.
                fn preemptive(queue: $crate::model::QueueId, tasks: &[$crate::model::TaskId])
                    -> Option<bool> = { None };

                /// HyperNodeOrder: one score per hyper-node of `hyper_nodes` for a sub-job.
                fn hyper_node_order(
                    sub_job: $crate::model::SubJobId,
                    hyper_nodes: &[$crate::model::HyperNodeId]
                ) -> Option<Vec<f64>> = { None };
                /// HyperNodeGradientForJob: groups of hyper-nodes under `hn` to try, in order,
                /// for `purpose`.
                fn hyper_node_gradient_for_job(
                    job: $crate::model::JobId,
                    hn: $crate::model::HyperNodeId,
                    purpose: $crate::framework::SearchPurpose
                ) -> Option<Vec<Vec<$crate::model::HyperNodeId>>> = { None };
                /// HyperNodeGradientForSubJob.
                fn hyper_node_gradient_for_sub_job(
                    sub_job: $crate::model::SubJobId,
                    hn: $crate::model::HyperNodeId,
                    purpose: $crate::framework::SearchPurpose
                ) -> Option<Vec<Vec<$crate::model::HyperNodeId>>> = { None };

                /// Preemption dry run: `preemptor`'s simulated view starts here;
                /// `simulate_*_task` change it and `simulation_end` drops the changes (Volcano
                /// works on a copy of the cycle state).
                fn simulation_begin(preemptor: $crate::model::TaskId) -> () = {};
                /// Preemption dry run: `task` is taken off its node in `preemptor`'s view.
                fn simulate_remove_task(preemptor: $crate::model::TaskId, task: $crate::model::TaskId)
                    -> Result<(), String> = { Ok(()) };
                /// Preemption dry run: `task` is put back on its node in `preemptor`'s view.
                fn simulate_add_task(preemptor: $crate::model::TaskId, task: $crate::model::TaskId)
                    -> Result<(), String> = { Ok(()) };
                /// Preemption dry run ends: `preemptor`'s view returns to what it was at
                /// `simulation_begin`.
                fn simulation_end(preemptor: $crate::model::TaskId) -> () = {};
            }
        }
    };
}

/// Emits `POINTS`, every point's name in table order.
macro_rules! point_names {
    ($($group:ident { $($(#[$doc:meta])* fn $name:ident $args:tt -> $ret:ty = $default:block;)* })*) => {
        /// The name of every extension point of the table, in its order.
        pub const POINTS: &[&str] = &[$($(stringify!($name)),*),*];
    };
}

plugin_points!(point_names);
