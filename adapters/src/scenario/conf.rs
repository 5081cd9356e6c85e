//! A scenario's `schedulerConf`. The Go tests build their configuration in code, past two
//! checks of Volcano's YAML loader that the engine's parser makes: hook-level cases have
//! `actions: ''` (no action runs), and the hdrf cases enable drf's hierarchy beside
//! proportion. Only here are both accepted.

use tephra_engine::config::{ConfigError, SchedulerConfig};

/// Parses a scenario's configuration as the Go tests would have built it.
pub fn parse_scenario_conf(text: &str) -> Result<SchedulerConfig, ConfigError> {
    SchedulerConfig::parse_as_code(text)
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
    }
}
