//! The scheduling framework: the `Plugin` trait and registry, the `Session` with one dispatch
//! function per extension point, `Statement` transactions, and session close into `Decisions`.

mod carryover;
mod close;
mod column;
mod config_check;
mod decisions;
mod dispatch;
mod event;
mod eviction;
mod fit_error;
mod fit_message;
mod job_columns;
mod job_conditions;
mod node_accounts;
mod node_columns;
mod node_failures;
mod options;
mod plugin;
mod points;
mod registry;
mod search_purpose;
mod session;
mod session_metrics;
mod state;
mod statement;
mod task_columns;
mod tasks_on_nodes;
mod timers;
mod topology;
mod vote;

pub use crate::model::StatusCounts;
pub use carryover::{Carryover, ClosedSession};
pub use close::to_resource_list;
pub use column::Column;
pub use config_check::{CheckedConfig, SetAside, Strictness, check_config};
pub use decisions::{
    Bind, Decisions, Eviction, NumaBooking, Pipelined, PodConditionUpdate, PodGroupUpdate,
    QueueUpdate, VolumeBinds,
};
pub use event::{Event, EventObject};
pub use eviction::{EvictionContext, EvictionKind};
pub use fit_error::{FitError, FitErrors, Status, StatusCode};
pub use job_columns::{JobColumns, SubJobColumns};
pub use job_conditions::JobConditions;
pub use node_columns::NodeColumns;
pub use node_failures::NodeFailures;
pub use options::{NodeSampling, SessionOptions};
pub use plugin::{Plugin, PluginBuilder};
pub use points::POINTS;
pub use registry::PluginRegistry;
pub use search_purpose::SearchPurpose;
pub use session::Session;
pub use session_metrics::{
    EvictingAction, GangFigures, JobAssumed, PluginTiming, QueueFigures, SearchStage,
    SearchTimings, SessionMetrics,
};
pub use state::{LastTransaction, NodeTasks, SessionState};
pub use statement::{Op, Statement, allocate_and_dispatch};
pub use task_columns::TaskColumns;
pub use timers::Timers;
pub use vote::{JobInvalid, Vote};
