//! `--feature-gates`: the Volcano gates that decide what the scheduler's cache watches
//! (Volcano: pkg/features/volcano_features.go, `defaultVolcanoFeatureGates`, read in
//! pkg/scheduler/cache/cache.go, `addEventHandler`).
//!
//! Volcano's gate set also holds every kube-scheduler gate it links, so a name tephra does not
//! know is accepted and named in a warning rather than refused; a value that is not a Go bool is
//! refused, as Go's `featuregate.Set` refuses it.

use crate::flags::go_bool;

/// The gates tephra acts on, with Volcano's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureGates {
    /// Watch PodDisruptionBudgets (the `pdb` plugin's input).
    pub pod_disruption_budgets: bool,
    /// Watch ReplicationControllers, ReplicaSets and StatefulSets.
    pub workload_support: bool,
    /// Watch PriorityClasses (together with `--priority-class`).
    pub priority_class: bool,
    /// Watch Numatopologies.
    pub resource_topology: bool,
    /// Names given that tephra has no behaviour for, in the order given.
    pub unknown: Vec<String>,
}

impl Default for FeatureGates {
    fn default() -> Self {
        FeatureGates {
            pod_disruption_budgets: true,
            workload_support: true,
            priority_class: true,
            resource_topology: true,
            unknown: Vec::new(),
        }
    }
}

impl FeatureGates {
    /// Parses `Name=bool,Name=bool`; spaces around names and values are ignored.
    pub fn parse(flag: &str) -> Result<FeatureGates, String> {
        let mut gates = FeatureGates::default();
        for pair in flag.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((name, value)) = pair.split_once('=') else {
                return Err(format!(
                    "--feature-gates: missing bool value for {pair:?} (want Name=true|false)"
                ));
            };
            let (name, value) = (name.trim(), value.trim());
            let on = go_bool(value)
                .map_err(|e| format!("--feature-gates: invalid value of {name}={value}: {e}"))?;
            match name {
                "PodDisruptionBudgetsSupport" => gates.pod_disruption_budgets = on,
                "WorkLoadSupport" => gates.workload_support = on,
                "PriorityClass" => gates.priority_class = on,
                "ResourceTopology" => gates.resource_topology = on,
                _ => gates.unknown.push(name.to_string()),
            }
        }
        Ok(gates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_flag_gives_volcanos_defaults() {
        assert_eq!(FeatureGates::parse("").unwrap(), FeatureGates::default());
        assert!(FeatureGates::default().pod_disruption_budgets);
    }

    #[test]
    fn known_gates_are_set_and_unknown_ones_are_named() {
        let g =
            FeatureGates::parse(" PodDisruptionBudgetsSupport=false, SomeKubeGate=true ,").unwrap();
        assert!(!g.pod_disruption_budgets);
        assert!(g.workload_support);
        assert_eq!(g.unknown, ["SomeKubeGate"]);
    }

    #[test]
    fn a_value_that_is_not_a_go_bool_is_refused_naming_the_gate() {
        let e = FeatureGates::parse("WorkLoadSupport=maybe").unwrap_err();
        assert!(e.contains("WorkLoadSupport=maybe"), "{e}");
        let e = FeatureGates::parse("WorkLoadSupport").unwrap_err();
        assert!(e.contains("WorkLoadSupport"), "{e}");
    }
}
