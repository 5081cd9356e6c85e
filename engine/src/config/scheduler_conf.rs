//! Parsing and checking `SchedulerConfiguration` (Volcano: pkg/scheduler/conf/scheduler_conf.go; pkg/scheduler/util.go, UnmarshalSchedulerConf).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{Action, Arguments};

/// A refused configuration; the message names the culprit on one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid scheduler configuration YAML: {0}")]
    Yaml(String),
    #[error(
        "unknown action {0:?} in `actions` (known: enqueue, allocate, backfill, preempt, reclaim, shuffle, gangpreempt, gangreclaim)"
    )]
    UnknownAction(String),
    #[error("`actions` is empty")]
    NoActions,
    #[error("unknown plugin {0:?} in tier {1}")]
    UnknownPlugin(String, usize),
    #[error("plugin {plugin}: {error}")]
    Argument {
        plugin: String,
        error: super::ArgumentError,
    },
    #[error("tier {0}: proportion and drf with hierarchy enabled conflicts")]
    HierarchyConflict(usize),
    #[error("configurations[{0}]: {1}")]
    ActionConfig(usize, String),
}

/// An extension point an enable flag gates (spec table 2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Point {
    JobOrder,
    JobReady,
    JobPipelined,
    TaskOrder,
    Preemptable,
    Reclaimable,
    Preemptive,
    QueueOrder,
    ClusterOrder,
    Predicate,
    BestNode,
    NodeOrder,
    TargetJob,
    ReservedNodes,
    JobEnqueued,
    Victim,
    JobStarving,
    Overused,
    Allocatable,
    HyperNodeOrder,
    SubJobReady,
    SubJobPipelined,
    SubJobOrder,
    HyperNodeGradient,
}

/// One plugin entry of a tier, with every enable flag resolved to its default.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginOption {
    pub name: String,
    /// One flag per `Point`, indexed by the point (dispatchers read it per plugin per call).
    flags: [bool; FLAGS.len()],
    pub enable_hierarchy: bool,
    pub arguments: Arguments,
}

/// YAML keys of the enable flags, the point each gates (in `Point` order), and whether an unset
/// flag means true.
const FLAGS: [(&str, Point, bool); 24] = [
    ("enableJobOrder", Point::JobOrder, true),
    ("enableJobReady", Point::JobReady, true),
    ("enableJobPipelined", Point::JobPipelined, true),
    ("enableTaskOrder", Point::TaskOrder, true),
    ("enablePreemptable", Point::Preemptable, true),
    ("enableReclaimable", Point::Reclaimable, true),
    ("enablePreemptive", Point::Preemptive, true),
    ("enableQueueOrder", Point::QueueOrder, true),
    ("enabledClusterOrder", Point::ClusterOrder, false),
    ("enablePredicate", Point::Predicate, true),
    ("enableBestNode", Point::BestNode, true),
    ("enableNodeOrder", Point::NodeOrder, true),
    ("enableTargetJob", Point::TargetJob, true),
    ("enableReservedNodes", Point::ReservedNodes, true),
    ("enableJobEnqueued", Point::JobEnqueued, true),
    ("enabledVictim", Point::Victim, true),
    ("enableJobStarving", Point::JobStarving, true),
    ("enabledOverused", Point::Overused, true),
    ("enabledAllocatable", Point::Allocatable, true),
    ("enabledHyperNodeOrder", Point::HyperNodeOrder, true),
    ("enabledSubJobReady", Point::SubJobReady, true),
    ("enabledSubJobPipelined", Point::SubJobPipelined, true),
    ("enabledSubJobOrder", Point::SubJobOrder, true),
    ("enabledHyperNodeGradient", Point::HyperNodeGradient, true),
];

impl Point {
    /// Every point, in declaration order (`point as usize` is its index here).
    pub const ALL: [Point; FLAGS.len()] = {
        let mut all = [Point::JobOrder; FLAGS.len()];
        let mut i = 0;
        while i < FLAGS.len() {
            all[i] = FLAGS[i].1;
            i += 1;
        }
        all
    };
}

impl PluginOption {
    /// A plugin entry with every flag at its YAML default and no arguments.
    pub fn new(name: &str) -> Self {
        PluginOption {
            name: name.to_string(),
            flags: FLAGS.map(|(_, _, d)| d),
            enable_hierarchy: false,
            arguments: Arguments::default(),
        }
    }

    /// Whether this entry's function for `point` is used by the dispatchers.
    pub fn enabled(&self, point: Point) -> bool {
        self.flags[point as usize]
    }

    /// Sets a flag by its YAML key; false when the key is not a flag.
    pub fn set_flag(&mut self, key: &str, value: bool) -> bool {
        match FLAGS.iter().find(|f| f.0 == key) {
            Some((_, point, _)) => {
                self.flags[*point as usize] = value;
                true
            }
            None if key == "enableHierarchy" => {
                self.enable_hierarchy = value;
                true
            }
            None => false,
        }
    }
}

/// A tier: plugins in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Tier {
    pub plugins: Vec<PluginOption>,
}

/// Per-action arguments (`configurations`); an entry named after no action is kept and never
/// read, as in Volcano.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionConfig {
    pub name: String,
    pub arguments: Arguments,
}

/// A parsed scheduler configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerConfig {
    pub actions: Vec<Action>,
    pub tiers: Vec<Tier>,
    pub configurations: Vec<ActionConfig>,
    pub metrics: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct RawConf {
    #[serde(default)]
    actions: String,
    #[serde(default)]
    tiers: Vec<RawTier>,
    #[serde(default)]
    configurations: Vec<RawActionConf>,
    #[serde(default)]
    metrics: BTreeMap<String, Value>,
}

#[derive(Deserialize)]
struct RawTier {
    #[serde(default)]
    plugins: Vec<BTreeMap<String, Value>>,
}

#[derive(Deserialize)]
struct RawActionConf {
    #[serde(default)]
    name: String,
    #[serde(default)]
    arguments: BTreeMap<String, Value>,
}

fn bool_of(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => crate::snapshot::parse_go_bool(s),
        _ => None,
    }
}

impl SchedulerConfig {
    /// Parses and checks the text: YAML, action names, flag types, the drf-hierarchy conflict,
    /// each a refusal as in Volcano's loader. Plugin names, their arguments and `configurations`
    /// names are checked against a registry by `framework::check_config`.
    pub fn parse(text: &str) -> Result<SchedulerConfig, ConfigError> {
        Self::parse_with(text, true)
    }

    /// Parses as Volcano's Go tests build a configuration in code: past the two checks of the
    /// YAML loader (an empty `actions` list is allowed, and hierarchical drf may sit beside
    /// proportion). For conformance scenarios, never for an operator's file.
    pub fn parse_as_code(text: &str) -> Result<SchedulerConfig, ConfigError> {
        Self::parse_with(text, false)
    }

    fn parse_with(text: &str, loader_checks: bool) -> Result<SchedulerConfig, ConfigError> {
        let raw: RawConf = serde_saphyr::from_str(text).map_err(|e| {
            ConfigError::Yaml(
                e.to_string()
                    .lines()
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        })?;
        let mut actions = Vec::new();
        let no_actions = raw.actions.trim().is_empty();
        for a in raw
            .actions
            .split(',')
            .filter(|_| loader_checks || !no_actions)
        {
            let a = a.trim();
            if a.is_empty() {
                if raw.actions.trim().is_empty() {
                    return Err(ConfigError::NoActions);
                }
                return Err(ConfigError::UnknownAction(String::new()));
            }
            let Some(action) = Action::parse(a) else {
                return Err(ConfigError::UnknownAction(a.to_string()));
            };
            actions.push(action);
        }
        let mut tiers = Vec::new();
        for (ti, t) in raw.tiers.iter().enumerate() {
            let mut plugins = Vec::new();
            for p in &t.plugins {
                let name = match p.get("name") {
                    Some(Value::String(s)) if !s.is_empty() => s.clone(),
                    _ => {
                        return Err(ConfigError::Yaml(format!(
                            "tier {ti}: a plugin entry has no `name`"
                        )));
                    }
                };
                let mut opt = PluginOption::new(&name);
                for (k, v) in p {
                    match k.as_str() {
                        "name" => {}
                        "arguments" => {
                            let map = match v {
                                Value::Object(m) => {
                                    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
                                }
                                Value::Null => BTreeMap::new(),
                                _ => {
                                    return Err(ConfigError::Yaml(format!(
                                        "plugin {name}: `arguments` must be a map"
                                    )));
                                }
                            };
                            opt.arguments = Arguments::new(map);
                        }
                        flag => {
                            let Some(b) = bool_of(v) else {
                                return Err(ConfigError::Yaml(format!(
                                    "plugin {name}: {flag} must be a boolean, got {v}"
                                )));
                            };
                            opt.set_flag(flag, b);
                        }
                    }
                }
                plugins.push(opt);
            }
            let drf_hier = plugins
                .iter()
                .any(|p| p.name == "drf" && p.enable_hierarchy);
            if loader_checks && drf_hier && plugins.iter().any(|p| p.name == "proportion") {
                return Err(ConfigError::HierarchyConflict(ti));
            }
            tiers.push(Tier { plugins });
        }
        let configurations = raw
            .configurations
            .into_iter()
            .map(|c| ActionConfig {
                name: c.name,
                arguments: Arguments::new(c.arguments),
            })
            .collect();
        let metrics = raw
            .metrics
            .into_iter()
            .map(|(k, v)| {
                (
                    k,
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string()),
                )
            })
            .collect();
        Ok(SchedulerConfig {
            actions,
            tiers,
            configurations,
            metrics,
        })
    }

    /// Arguments of an action: the first `configurations` entry with that name.
    pub fn action_arguments(&self, action: &str) -> Arguments {
        self.configurations
            .iter()
            .find(|c| c.name == action)
            .map(|c| c.arguments.clone())
            .unwrap_or_default()
    }

    /// True when `enableHierarchy` is set on the first entry of plugin `name` (`Session.HierarchyEnabled`).
    pub fn hierarchy_enabled(&self, name: &str) -> bool {
        self.tiers
            .iter()
            .flat_map(|t| &t.plugins)
            .find(|p| p.name == name)
            .is_some_and(|p| p.enable_hierarchy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_configuration_parses_with_flags_defaulted() {
        let c = SchedulerConfig::parse(crate::config::DEFAULT_SCHEDULER_CONF).unwrap();
        assert_eq!(c.actions, ["enqueue", "allocate", "backfill"]);
        assert_eq!(c.tiers.len(), 2);
        let gang = &c.tiers[0].plugins[1];
        assert!(gang.enabled(Point::JobReady));
        assert!(
            !gang.enabled(Point::ClusterOrder),
            "enabledClusterOrder is not defaulted"
        );
        assert!(!gang.enable_hierarchy, "enableHierarchy is not defaulted");
    }

    #[test]
    fn flag_table_follows_point_order() {
        for (i, (_, point, _)) in FLAGS.iter().enumerate() {
            assert_eq!(*point as usize, i);
            assert_eq!(Point::ALL[i], *point);
        }
    }

    #[test]
    fn flags_and_arguments_are_read_with_both_spellings() {
        let c = SchedulerConfig::parse(
            "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enablePreemptable: false\n    enabledVictim: false\n    arguments:\n      a: 1\n",
        )
        .unwrap();
        let g = &c.tiers[0].plugins[0];
        assert!(!g.enabled(Point::Preemptable));
        assert!(!g.enabled(Point::Victim));
        assert!(g.enabled(Point::JobOrder));
        assert_eq!(g.arguments.int("a").unwrap(), Some(1));
    }

    #[test]
    fn unknown_action_is_named() {
        let e = SchedulerConfig::parse("actions: enqueue, alocate\n").unwrap_err();
        assert_eq!(e, ConfigError::UnknownAction("alocate".into()));
        assert!(e.to_string().contains("alocate"));
    }

    #[test]
    fn empty_actions_are_refused() {
        assert_eq!(
            SchedulerConfig::parse("tiers: []\n").unwrap_err(),
            ConfigError::NoActions
        );
    }

    #[test]
    fn bad_yaml_reports_a_line() {
        let e = SchedulerConfig::parse(
            "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n   bad: [\n",
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("invalid scheduler configuration YAML"),
            "{msg}"
        );
        assert!(msg.contains("line"), "{msg}");
        assert!(!msg.contains('\n'));
    }

    #[test]
    fn code_built_configurations_skip_the_loader_checks() {
        let c = SchedulerConfig::parse_as_code(
            "actions: ''\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n  - name: proportion\n",
        )
        .unwrap();
        assert!(c.actions.is_empty());
        assert!(c.hierarchy_enabled("drf"));
        assert!(SchedulerConfig::parse_as_code("actions: nosuch\n").is_err());
    }

    #[test]
    fn hierarchical_drf_with_proportion_conflicts() {
        let e = SchedulerConfig::parse(
            "actions: allocate\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n  - name: proportion\n",
        )
        .unwrap_err();
        assert_eq!(e, ConfigError::HierarchyConflict(0));
    }

    #[test]
    fn action_configurations_take_the_first_match() {
        let c = SchedulerConfig::parse(
            "actions: allocate\nconfigurations:\n- name: allocate\n  arguments: {predicateErrorCacheEnable: false}\n- name: allocate\n  arguments: {predicateErrorCacheEnable: true}\n",
        )
        .unwrap();
        assert_eq!(
            c.action_arguments("allocate")
                .bool("predicateErrorCacheEnable")
                .unwrap(),
            Some(false)
        );
    }
}

#[cfg(test)]
mod malformed_input_tests {
    use super::*;

    #[test]
    fn malformed_configurations_are_errors_never_panics() {
        let inputs = [
            "",
            ":",
            "actions: [allocate]\n",
            "actions: allocate\ntiers: 5\n",
            "actions: allocate\ntiers:\n- plugins: {name: gang}\n",
            "actions: allocate\ntiers:\n- plugins:\n  - enableJobOrder: true\n",
            "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrder: maybe\n",
            "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    arguments: [1, 2]\n",
            "actions: allocate,,backfill\n",
            "\u{0}\u{1}\u{2}",
            "actions: 'allocate\n",
        ];
        for text in inputs {
            assert!(
                SchedulerConfig::parse(text).is_err(),
                "{text:?} should be refused"
            );
        }
    }
}
