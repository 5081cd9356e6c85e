//! A scenario's `schedulerConf`. The Go tests build their configuration in code, past two
//! checks of Volcano's YAML loader that the engine's parser makes: hook-level cases have
//! `actions: ''` (no action runs), and the hdrf cases enable drf's hierarchy beside
//! proportion. Only here are both accepted.

use serde_json::Value;
use tephra_engine::config::{ConfigError, SchedulerConfig};
use tephra_engine::snapshot::parse_go_bool;

/// Any action name, to get an action-less configuration past the parser.
const PLACEHOLDER_ACTION: &str = "allocate";

/// Parses a scenario's configuration as the Go tests would have built it.
pub fn parse_scenario_conf(text: &str) -> Result<SchedulerConfig, ConfigError> {
    match SchedulerConfig::parse(text) {
        Err(e @ (ConfigError::NoActions | ConfigError::HierarchyConflict(_))) => {
            parse_as_built_in_code(text, e)
        }
        other => other,
    }
}

/// Parses without the two loader checks: a placeholder action stands in for none, and
/// `enableHierarchy` flags are taken out before parsing and set afterwards. `refused` is
/// returned when the text is not a mapping to rewrite.
fn parse_as_built_in_code(
    text: &str,
    refused: ConfigError,
) -> Result<SchedulerConfig, ConfigError> {
    let Ok(Value::Object(mut doc)) = serde_saphyr::from_str::<Value>(text) else {
        return Err(refused);
    };
    let no_actions = doc
        .get("actions")
        .and_then(Value::as_str)
        .is_none_or(|a| a.trim().is_empty());
    if no_actions {
        doc.insert("actions".into(), Value::from(PLACEHOLDER_ACTION));
    }
    let mut hierarchical = Vec::new();
    let tiers = doc
        .get_mut("tiers")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten();
    for (ti, tier) in tiers.enumerate() {
        let plugins = tier
            .get_mut("plugins")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten();
        for (pi, plugin) in plugins.enumerate() {
            let flag = plugin
                .as_object_mut()
                .and_then(|p| p.remove("enableHierarchy"));
            if flag.is_some_and(|v| {
                v.as_bool().or_else(|| v.as_str().and_then(parse_go_bool)) == Some(true)
            }) {
                hierarchical.push((ti, pi));
            }
        }
    }
    let mut conf = SchedulerConfig::parse(&Value::Object(doc).to_string())?;
    if no_actions {
        conf.actions.clear();
    }
    for (ti, pi) in hierarchical {
        if let Some(p) = conf.tiers.get_mut(ti).and_then(|t| t.plugins.get_mut(pi)) {
            p.enable_hierarchy = true;
        }
    }
    Ok(conf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_actions_give_a_hook_level_configuration() {
        let c = parse_scenario_conf(
            "actions: ''\ntiers:\n- plugins:\n  - name: binpack\n    enableNodeOrder: true\n",
        )
        .unwrap();
        assert!(c.actions.is_empty());
        assert_eq!(c.tiers[0].plugins[0].name, "binpack");
    }

    #[test]
    fn hierarchical_drf_beside_proportion_is_accepted_with_its_flag() {
        let text = "actions: allocate\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n  - name: proportion\n    enableHierarchy: false\n";
        let c = parse_scenario_conf(text).unwrap();
        assert_eq!(c.actions, ["allocate"]);
        assert!(c.hierarchy_enabled("drf"));
        assert!(!c.hierarchy_enabled("proportion"));
    }

    #[test]
    fn listed_actions_are_kept_in_order() {
        assert_eq!(
            parse_scenario_conf("actions: enqueue, allocate\n")
                .unwrap()
                .actions,
            ["enqueue", "allocate"]
        );
    }

    #[test]
    fn other_errors_are_passed_through() {
        assert_eq!(
            parse_scenario_conf("actions: alocate\n").unwrap_err(),
            ConfigError::UnknownAction("alocate".into())
        );
        assert!(parse_scenario_conf("actions: ''\ntiers: 3\n").is_err());
        assert!(matches!(
            parse_scenario_conf("- a\n"),
            Err(ConfigError::Yaml(_))
        ));
        assert_eq!(parse_scenario_conf("").unwrap_err(), ConfigError::NoActions);
    }
}
