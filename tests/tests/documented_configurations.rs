//! Every scheduler configuration Volcano's documentation gives for the plugins tephra added
//! after its first fifteen, and Volcano's default, loads with nothing set aside: the strict
//! check refuses any plugin or argument Volcano would run but tephra would skip.

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

/// Parses `text` and checks it strictly: nothing set aside, every plugin kept.
fn assert_loads_whole(name: &str, text: &str) {
    let config = SchedulerConfig::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let plugins = config.tiers.iter().map(|t| t.plugins.len()).sum::<usize>();
    let checked = check_config(config, &builtin_registry(), Strictness::Refuse)
        .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
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

#[test]
fn volcanos_numa_task_topology_and_cdp_guides_and_default_load_with_nothing_skipped() {
    for (name, text) in [
        ("default", DEFAULT_SCHEDULER_CONF),
        ("how_to_use_numa_aware", NUMA_AWARE_GUIDE),
        ("how_to_use_task_topology_plugin", TASK_TOPOLOGY_GUIDE),
        ("how_to_use_cdp_plugin", CDP_GUIDE),
    ] {
        assert_loads_whole(name, text);
    }
}

/// Configurations from Volcano's documentation naming nodegroup, resource-strategy-fit,
/// resourcequota, tdm and usage (Volcano: docs/design/node-group.md, proportional.md,
/// resource-strategy-fit-scheduling.md, tdm-plugin.md (its snippet given actions),
/// usage-based-scheduling.md; docs/user-guide/how_to_use_nodegroup_plugin.md,
/// how_to_use_resource_strategy_fit_plugin.md), and one naming all five with their documented
/// arguments.
const DOCUMENTED: [&str; 8] = [
    "actions: \"reclaim, allocate, backfill, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodegroup\n    enableHierarchy: true\n    arguments:\n      enablePreferredOrder: true\n",
    "actions: \"allocate, backfill, preempt, reclaim\"\ntiers:\n- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodegroup\n    arguments:\n      strict: false\n",
    "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: resource-strategy-fit\n    arguments:\n      proportional:\n        enable: true\n        resources: nvidia.com/gpu,nvidia.com/v100-sxm2-16gb\n        resourceProportion:\n          nvidia.com/gpu.cpu: 8\n          nvidia.com/gpu.memory: 8\n          nvidia.com/v100-sxm2-16gb.cpu: 16\n          nvidia.com/v100-sxm2-16gb.memory: 16\n",
    "actions: \"enqueue, allocate, backfill, reclaim, preempt\"\ntiers:\n- plugins:\n  - name: resource-strategy-fit\n    arguments:\n      resourceStrategyFitWeight: 10\n      resources:\n        nvidia.com/gpu:\n          type: MostAllocated\n          weight: 2\n        cpu:\n          type: \"LeastAllocated\"\n          weight: 1\n",
    "actions: \"enqueue, reclaim, allocate, backfill, preempt\"\ntiers:\n- plugins:\n  - name: resource-strategy-fit\n    arguments:\n      sra:\n        enable: true\n        resources: nvidia.com/t4, nvidia.com/a10\n        weight: 2\n        resourceWeight:\n          nvidia.com/t4: 1\n          nvidia.com/a10: 1\n",
    "actions: \"enqueue, allocate, preempt, shuffle\"\ntiers:\n- plugins:\n  - name: tdm\n    arguments:\n      tdm.revocable-zone.rz1: 1:00-4:00\n      tdm.evict.period: 1m\n",
    "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n  - name: usage\n    enablePredicate: false\n    arguments:\n      usage.weight: 5\n      cpu.weight: 1\n      memory.weight: 1\n      thresholds:\n        cpu: 80\n        mem: 70\n- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\nmetrics:\n  type: prometheus\n  address: http://192.168.0.10:9090\n  interval: 30s\n",
    "actions: \"enqueue, allocate, backfill, preempt, shuffle\"\ntiers:\n- plugins:\n  - name: resourcequota\n  - name: nodegroup\n    arguments: {strict: true, enablePreferredOrder: false}\n  - name: tdm\n    arguments: {tdm.revocable-zone.rz1: 10:00-21:00, tdm.evict.period: 1m}\n  - name: usage\n    arguments:\n      usage.weight: 5\n      cpu.weight: 1\n      memory.weight: 1\n      thresholds: {cpu: 80, mem: 80}\n      estimator: {request_ratio: 0.7, burst_ratio: 0, risk_threshold: 0.6, risk_factor: 1.2, be_cpu: 250m, be_mem: 200Mi}\n  - name: resource-strategy-fit\n    arguments:\n      resourceStrategyFitWeight: 10\n      resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}, cpu: {type: LeastAllocated, weight: 1}}\n      sra: {enable: true, resources: nvidia.com/gpu, weight: 10, resourceWeight: {nvidia.com/gpu: 1}}\n      proportional: {enable: false, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8}}\n",
];

#[test]
fn volcanos_documented_configurations_of_the_issue_30_plugins_load_with_nothing_set_aside() {
    for (i, text) in DOCUMENTED.iter().enumerate() {
        assert_loads_whole(&format!("DOCUMENTED[{i}]"), text);
    }
    let all = SchedulerConfig::parse(DOCUMENTED[7]).unwrap();
    let names: Vec<&str> = all.tiers[0]
        .plugins
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "resourcequota",
            "nodegroup",
            "tdm",
            "usage",
            "resource-strategy-fit"
        ]
    );
}

/// The deviceshare tiers of Volcano's user guides (how_to_use_gpu_sharing.md,
/// how_to_use_gpu_number.md, how_to_use_volcano_vgpu.md, how_to_use_vnpu.md), as arguments of
/// one configuration each.
const DEVICESHARE_GUIDES: [&str; 6] = [
    "deviceshare.GPUSharingEnable: true",
    "deviceshare.GPUNumberEnable: true",
    "deviceshare.VGPUEnable: true, deviceshare.SchedulePolicy: binpack",
    "deviceshare.VGPUEnable: true, deviceshare.GPUExclusiveRules: [{workloadType: training}, {workloadType: batch, priority: high}]",
    "deviceshare.AscendHAMiVNPUEnable: true, deviceshare.SchedulePolicy: binpack, deviceshare.KnownGeometriesCMNamespace: kube-system, deviceshare.KnownGeometriesCMName: hami-scheduler-device",
    "deviceshare.AscendMindClusterVNPUEnable: true",
];

#[test]
fn volcanos_deviceshare_guide_configurations_load_with_nothing_set_aside() {
    for args in DEVICESHARE_GUIDES {
        let text = format!(
            "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: drf\n  - name: deviceshare\n    arguments: {{{args}}}\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n"
        );
        assert_loads_whole(args, &text);
    }
}
