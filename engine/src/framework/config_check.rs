//! Checking a parsed configuration against a plugin registry the way Volcano runs one: a plugin
//! it does not know is skipped, an argument of the wrong type falls back to its default, and a
//! `configurations` entry for no action is never read, and an action argument of the wrong type
//! falls back to its default. Each such part is set aside and named, so an operator learns what
//! is not running; `--strict-config` refuses the file instead.
//!
//! Volcano: pkg/scheduler/framework/framework.go, OpenSession (an unknown plugin is logged and
//! skipped); pkg/scheduler/framework/arguments.go, Arguments.GetInt / GetFloat64 / GetBool /
//! GetString (a wrongly typed value is logged and the default kept);
//! pkg/scheduler/framework/arguments.go, GetArgOfActionFromConf (entries are looked up by
//! action name, others are never read).

use std::fmt;

use super::PluginRegistry;
use crate::config::{Action, ArgumentError, ConfigError, SchedulerConfig};

/// A part of a configuration that tephra does not run, and why.
#[derive(Debug, Clone, PartialEq)]
pub enum SetAside {
    /// A plugin the registry does not have: left out of its tier, the rest of the tier runs.
    UnknownPlugin { plugin: String, tier: usize },
    /// A plugin argument its plugin refused: dropped, so the plugin uses its default for it.
    Argument {
        plugin: String,
        error: ArgumentError,
    },
    /// A `configurations` entry (at `index`) named after no action: no action reads it.
    UnknownActionConfiguration { index: usize, action: String },
    /// An action argument its action refused: dropped, so the action uses its default for it.
    ActionArgument {
        index: usize,
        action: String,
        error: ArgumentError,
    },
}

impl SetAside {
    /// The error `--strict-config` refuses the configuration with.
    pub fn refusal(&self) -> ConfigError {
        match self {
            SetAside::UnknownPlugin { plugin, tier } => {
                ConfigError::UnknownPlugin(plugin.clone(), *tier)
            }
            SetAside::Argument { plugin, error } => ConfigError::Argument {
                plugin: plugin.clone(),
                error: error.clone(),
            },
            SetAside::UnknownActionConfiguration { index, action } => {
                ConfigError::ActionConfig(*index, format!("unknown action {action:?}"))
            }
            SetAside::ActionArgument {
                index,
                action,
                error,
            } => ConfigError::ActionConfig(*index, format!("action {action:?}: {error}")),
        }
    }

    /// A short, stable name of the kind of problem (a metrics label).
    pub fn kind(&self) -> &'static str {
        match self {
            SetAside::UnknownPlugin { .. } => "unknown_plugin",
            SetAside::Argument { .. } => "argument",
            SetAside::UnknownActionConfiguration { .. } => "unknown_action_configuration",
            SetAside::ActionArgument { .. } => "action_argument",
        }
    }
}

impl fmt::Display for SetAside {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let outcome = match self {
            SetAside::UnknownPlugin { .. } => "skipped, the rest of the tiers run",
            SetAside::Argument { .. } => "the plugin uses its default for it",
            SetAside::UnknownActionConfiguration { .. } => "ignored",
            SetAside::ActionArgument { .. } => "the action uses its default for it",
        };
        write!(f, "{}; {outcome}", self.refusal())
    }
}

/// A configuration with the parts tephra does not run taken out, and those parts.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedConfig {
    pub config: SchedulerConfig,
    pub set_aside: Vec<SetAside>,
}

/// What `check_config` does with a part Volcano would skip or default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Strictness {
    /// Set it aside and name it, as Volcano runs such a file.
    #[default]
    SetAside,
    /// Refuse the configuration with the first such part (`--strict-config`).
    Refuse,
}

/// Builds every plugin of `config` once and sets aside what Volcano would skip or default, or
/// refuses it by `strictness`. An argument error that names no argument of the plugin cannot
/// fall back to a default, so it refuses the configuration either way.
pub fn check_config(
    mut config: SchedulerConfig,
    registry: &PluginRegistry,
    strictness: Strictness,
) -> Result<CheckedConfig, ConfigError> {
    let mut set_aside = Vec::new();
    for (tier_index, tier) in config.tiers.iter_mut().enumerate() {
        let mut kept = Vec::with_capacity(tier.plugins.len());
        for mut option in std::mem::take(&mut tier.plugins) {
            let Some(builder) = registry.get(&option.name) else {
                set_aside.push(SetAside::UnknownPlugin {
                    plugin: option.name,
                    tier: tier_index,
                });
                continue;
            };
            while let Err(error) = builder(&option.arguments) {
                if option.arguments.remove(&error.key).is_none() {
                    return Err(ConfigError::Argument {
                        plugin: option.name,
                        error,
                    });
                }
                set_aside.push(SetAside::Argument {
                    plugin: option.name.clone(),
                    error,
                });
            }
            kept.push(option);
        }
        tier.plugins = kept;
    }
    for (index, c) in config.configurations.iter_mut().enumerate() {
        if Action::parse(&c.name).is_none() {
            set_aside.push(SetAside::UnknownActionConfiguration {
                index,
                action: c.name.clone(),
            });
            continue;
        }
        for error in crate::actions::refused_arguments(&c.name, &c.arguments) {
            c.arguments.remove(&error.key);
            set_aside.push(SetAside::ActionArgument {
                index,
                action: c.name.clone(),
                error,
            });
        }
    }
    match set_aside.first() {
        Some(part) if strictness == Strictness::Refuse => Err(part.refusal()),
        _ => Ok(CheckedConfig { config, set_aside }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Point;
    use crate::plugins::builtin_registry;

    fn check(text: &str) -> CheckedConfig {
        check_config(
            SchedulerConfig::parse(text).unwrap(),
            &builtin_registry(),
            Strictness::SetAside,
        )
        .unwrap()
    }

    const UNKNOWN_PLUGIN: &str = "actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: priority\n  - name: nosuch\n  - name: gang\n- plugins:\n  - name: predicates\n";

    #[test]
    fn an_unknown_plugin_is_skipped_and_the_rest_of_the_tiers_kept() {
        let c = check(UNKNOWN_PLUGIN);
        let names: Vec<Vec<&str>> = c
            .config
            .tiers
            .iter()
            .map(|t| t.plugins.iter().map(|p| p.name.as_str()).collect())
            .collect();
        assert_eq!(names, [vec!["priority", "gang"], vec!["predicates"]]);
        assert_eq!(
            c.set_aside,
            [SetAside::UnknownPlugin {
                plugin: "nosuch".into(),
                tier: 0
            }]
        );
        let part = &c.set_aside[0];
        assert_eq!(part.kind(), "unknown_plugin");
        assert_eq!(
            part.to_string(),
            "unknown plugin \"nosuch\" in tier 0; skipped, the rest of the tiers run"
        );
    }

    #[test]
    fn a_tier_of_unknown_plugins_stays_as_an_empty_tier() {
        let c = check(
            "actions: allocate\ntiers:\n- plugins:\n  - name: nosuch\n- plugins:\n  - name: gang\n",
        );
        assert_eq!(c.config.tiers.len(), 2);
        assert!(c.config.tiers[0].plugins.is_empty());
        assert_eq!(c.config.tiers[1].plugins[0].name, "gang");
    }

    #[test]
    fn a_wrongly_typed_argument_is_dropped_and_the_others_kept() {
        let c = check(
            "actions: allocate\ntiers:\n- plugins:\n  - name: binpack\n    enableNodeOrder: false\n    arguments:\n      binpack.weight: heavy\n      binpack.cpu: 5\n      binpack.memory: [1]\n",
        );
        let binpack = &c.config.tiers[0].plugins[0];
        assert_eq!(binpack.arguments.int("binpack.cpu").unwrap(), Some(5));
        assert_eq!(binpack.arguments.raw("binpack.weight"), None);
        assert_eq!(binpack.arguments.raw("binpack.memory"), None);
        assert!(!binpack.enabled(Point::NodeOrder), "flags are kept");
        let keys: Vec<(&str, &str, &str)> = c
            .set_aside
            .iter()
            .map(|p| match p {
                SetAside::Argument { plugin, error } => {
                    (p.kind(), plugin.as_str(), error.key.as_str())
                }
                other => panic!("not an argument: {other:?}"),
            })
            .collect();
        assert_eq!(keys.len(), 2, "{:?}", c.set_aside);
        assert!(keys.contains(&("argument", "binpack", "binpack.weight")));
        assert!(keys.contains(&("argument", "binpack", "binpack.memory")));
        let message = c.set_aside[0].to_string();
        assert!(
            message.starts_with("plugin binpack: argument binpack."),
            "{message}"
        );
        assert!(
            message.ends_with("; the plugin uses its default for it"),
            "{message}"
        );
    }

    #[test]
    fn a_bad_rescheduling_threshold_is_blamed_on_its_strategies_argument() {
        let c = check(
            "actions: allocate\ntiers:\n- plugins:\n  - name: rescheduling\n    arguments:\n      interval: 1m\n      strategies:\n      - name: lowNodeUtilization\n        params: {thresholds: {cpu: lots}}\n",
        );
        let args = &c.config.tiers[0].plugins[0].arguments;
        assert_eq!(args.raw("strategies"), None);
        assert_eq!(args.string("interval").unwrap().as_deref(), Some("1m"));
        assert!(matches!(
            &c.set_aside[..],
            [SetAside::Argument { plugin, error }] if plugin == "rescheduling" && error.key == "strategies"
        ));
    }

    #[test]
    fn an_argument_error_naming_no_argument_refuses_the_configuration() {
        let mut registry = builtin_registry();
        registry.register("picky", |_| {
            Err(ArgumentError {
                key: "derived".into(),
                value: "x".into(),
                reason: "never satisfied".into(),
            })
        });
        let conf = SchedulerConfig::parse(
            "actions: allocate\ntiers:\n- plugins:\n  - name: picky\n    arguments: {a: 1}\n",
        )
        .unwrap();
        let e = check_config(conf, &registry, Strictness::SetAside).unwrap_err();
        assert!(matches!(e, ConfigError::Argument { ref plugin, .. } if plugin == "picky"));
    }

    #[test]
    fn a_configurations_entry_for_no_action_is_named_and_kept_unread() {
        let c = check(
            "actions: allocate\nconfigurations:\n- name: allocate\n  arguments: {a: 1}\n- name: alocate\n",
        );
        assert_eq!(
            c.set_aside,
            [SetAside::UnknownActionConfiguration {
                index: 1,
                action: "alocate".into()
            }]
        );
        assert_eq!(c.set_aside[0].kind(), "unknown_action_configuration");
        assert_eq!(
            c.set_aside[0].refusal().to_string(),
            "configurations[1]: unknown action \"alocate\""
        );
    }

    #[test]
    fn a_wrongly_typed_action_argument_is_named_and_dropped() {
        let c = check(concat!(
            "actions: allocate, preempt\nconfigurations:\n",
            "- name: preempt\n  arguments: {minCandidateNodesPercentage: lots, enableTopologyAwarePreemption: true}\n",
        ));
        assert_eq!(c.set_aside.len(), 1);
        assert_eq!(c.set_aside[0].kind(), "action_argument");
        let text = c.set_aside[0].to_string();
        assert!(
            text.starts_with(
                "configurations[0]: action \"preempt\": argument minCandidateNodesPercentage"
            ),
            "{text}"
        );
        let kept = c.config.action_arguments("preempt");
        assert!(kept.raw("minCandidateNodesPercentage").is_none());
        assert!(kept.raw("enableTopologyAwarePreemption").is_some());
    }

    #[test]
    fn refusing_names_the_first_part_set_aside_with_the_plain_error() {
        let strict = |text: &str| {
            check_config(
                SchedulerConfig::parse(text).unwrap(),
                &builtin_registry(),
                Strictness::Refuse,
            )
        };
        let e = strict(UNKNOWN_PLUGIN).unwrap_err();
        assert_eq!(e, ConfigError::UnknownPlugin("nosuch".into(), 0));
        assert_eq!(e.to_string(), "unknown plugin \"nosuch\" in tier 0");
        let e = strict("actions: allocate\ntiers:\n- plugins:\n  - name: overcommit\n    arguments: {overcommit-factor: high}\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("plugin overcommit: argument overcommit-factor:"),
            "{e}"
        );
        let clean = strict("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n").unwrap();
        assert!(clean.set_aside.is_empty());
    }
}
