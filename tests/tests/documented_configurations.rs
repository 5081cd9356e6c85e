//! Every scheduler configuration Volcano's documentation gives for the numa-aware,
//! task-topology and cdp plugins, and Volcano's default, loads with nothing set aside: the
//! strict check refuses any plugin or argument Volcano would run but tephra would skip.

use tephra_engine::config::{DEFAULT_SCHEDULER_CONF, SchedulerConfig};
use tephra_engine::framework::{Strictness, check_config};
use tephra_engine::plugins::builtin_registry;

/// Volcano: docs/user-guide/how_to_use_numa_aware.md.
const NUMA_AWARE_GUIDE: &str = r#"actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: numa-aware # add it to enable numa-aware plugin
    arguments:
      weight: 10
"#;

/// Volcano: docs/user-guide/how_to_use_task_topology_plugin.md.
const TASK_TOPOLOGY_GUIDE: &str = r#"actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: task-topology
    arguments:
      task-topology.weight: 10
  - name: proportion
  - name: nodeorder
  - name: binpack
"#;

/// Volcano: docs/user-guide/how_to_use_cdp_plugin.md.
const CDP_GUIDE: &str = r#"actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: cdp
- plugins:
  - name: drf
  - name: predicates
  - name: task-topology
    arguments:
      task-topology.weight: 10
  - name: proportion
  - name: nodeorder
  - name: binpack
"#;

#[test]
fn volcanos_numa_task_topology_and_cdp_guides_and_default_load_with_nothing_skipped() {
    let registry = builtin_registry();
    for (name, text) in [
        ("default", DEFAULT_SCHEDULER_CONF),
        ("how_to_use_numa_aware", NUMA_AWARE_GUIDE),
        ("how_to_use_task_topology_plugin", TASK_TOPOLOGY_GUIDE),
        ("how_to_use_cdp_plugin", CDP_GUIDE),
    ] {
        let config = SchedulerConfig::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let plugins = config.tiers.iter().map(|t| t.plugins.len()).sum::<usize>();
        let checked = check_config(config, &registry, Strictness::Refuse)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            checked.set_aside.is_empty(),
            "{name}: {:?}",
            checked.set_aside
        );
        let kept = checked
            .config
            .tiers
            .iter()
            .map(|t| t.plugins.len())
            .sum::<usize>();
        assert_eq!(kept, plugins, "{name}: every plugin kept");
    }
}
