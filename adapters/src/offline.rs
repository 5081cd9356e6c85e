//! Fixed inputs of offline runs (scenarios and simulations), so every run is reproducible.

use tephra_engine::api::Time;

/// The scheduler name offline runs answer to, as vc-scheduler's `--scheduler-name` default.
pub const DEFAULT_SCHEDULER_NAME: &str = "volcano";

/// Volcano's default queue, for PodGroups that name none.
pub const DEFAULT_QUEUE: &str = "default";

/// The clock of the first session: 2025-01-01T00:00:00Z.
pub const START_TIME: Time = Time(1_735_689_600);

/// When the offline scheduler started: one scheduling period before the first session, so
/// interval timers (the `rescheduling` plugin's) measure from there.
pub const SCHEDULER_START: Time = Time(START_TIME.0 - 1);
