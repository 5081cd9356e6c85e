//! The scheduler configuration file (Volcano's `volcano-scheduler.conf`): actions, plugin tiers
//! with their enable flags and arguments, per-action configurations.

mod action;
mod arguments;
mod default_conf;
mod scheduler_conf;

pub use action::Action;
pub use arguments::{ArgumentError, Arguments};
pub use default_conf::DEFAULT_SCHEDULER_CONF;
pub use scheduler_conf::{ActionConfig, ConfigError, PluginOption, Point, SchedulerConfig, Tier};
