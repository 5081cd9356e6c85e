//! Volcano's built-in default configuration (`DefaultSchedulerConf`), used when no file is given.

/// The configuration Volcano falls back to.
pub const DEFAULT_SCHEDULER_CONF: &str = r#"actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"#;
