//! `resource-strategy-fit` (Volcano: pkg/scheduler/plugins/resource-strategy-fit/
//! resource_strategy_fit.go): scores a node per requested resource as most- or
//! least-allocated after the task, each resource with its own strategy and weight, averaged,
//! × 100 × `resourceStrategyFitWeight`; adds the `sra` score (keep scarce resources free,
//! `sra.rs`) and, with `proportional` on, refuses nodes whose idle cpu and memory would fall
//! below what their idle scarce resources need (`proportional.rs`).
//!
//! A pod may choose its own strategy with the annotations
//! `volcano.sh/resource-strategy-scoring-type` (the type) and
//! `volcano.sh/resource-strategy-weight` (JSON resource → weight), which replace the
//! configured resources for it.

mod proportional;
mod sra;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::config::{ArgumentError, Arguments};
use crate::framework::{FitError, Plugin, SessionState};
use crate::model::{NodeId, TaskId};

use proportional::Proportional;
use sra::Sra;

/// Weight of the fit score when `resourceStrategyFitWeight` is absent or negative.
const DEFAULT_WEIGHT: i64 = 10;
/// Pod annotation choosing the pod's own scoring type.
pub const SCORING_TYPE_ANNOTATION: &str = "volcano.sh/resource-strategy-scoring-type";
/// Pod annotation with the pod's own resource weights (JSON).
pub const WEIGHT_ANNOTATION: &str = "volcano.sh/resource-strategy-weight";

/// How one resource is scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    MostAllocated,
    LeastAllocated,
    /// A type the pod annotation names that is neither: its resources score 0 but count in the
    /// weights.
    Other,
}

impl Strategy {
    fn of(name: &str) -> Strategy {
        match name {
            "MostAllocated" => Strategy::MostAllocated,
            "LeastAllocated" => Strategy::LeastAllocated,
            _ => Strategy::Other,
        }
    }
}

/// How a pod's annotations choose its scoring.
#[derive(Debug, Clone, PartialEq)]
enum PodScoring {
    /// No annotation: the configured resources.
    Configured,
    /// The pod's own strategy and resource weights.
    Own(Strategy, BTreeMap<String, i64>),
    /// A type without usable weights: the fit score is 0.
    Unusable,
}

/// One configured resource pattern: an exact name, or a prefix ending in a single `*`.
#[derive(Debug, Clone, PartialEq)]
struct ResourceRule {
    strategy: Strategy,
    weight: i64,
}

/// The plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceStrategyFit {
    weight: i64,
    resources: BTreeMap<String, ResourceRule>,
    sra: Sra,
    proportional: Option<Proportional>,
}

fn arg_error(key: &str, v: &Value, reason: &str) -> ArgumentError {
    ArgumentError {
        key: key.into(),
        value: v.to_string(),
        reason: reason.into(),
    }
}

/// A whole number as Volcano's argument decoder takes one (a float is truncated).
fn int_of(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_f64().map(|f| f as i64))
}

/// Only a single trailing `*` makes a pattern; a bare `*` is refused too.
fn valid_pattern(pattern: &str) -> bool {
    !pattern.contains('*')
        || (pattern != "*" && pattern.ends_with('*') && pattern.matches('*').count() == 1)
}

/// `resources`: name → `{type, weight}`; an empty or absent table scores cpu and memory
/// least-allocated, weight 1. Invalid patterns are dropped, weights below 1 become 1 and
/// unknown types least-allocated.
fn read_resources(args: &Arguments) -> Result<BTreeMap<String, ResourceRule>, ArgumentError> {
    let mut rules = BTreeMap::new();
    if let Some(v) = args.raw("resources") {
        let Value::Object(table) = v else {
            return Err(arg_error(
                "resources",
                v,
                "expected a map of resource to {type, weight}",
            ));
        };
        for (name, rule) in table {
            let field = |key: &str| {
                rule.as_object()
                    .and_then(|o| o.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)))
                    .map(|(_, v)| v)
            };
            let weight = match field("weight") {
                None => 0,
                Some(w) => int_of(w)
                    .ok_or_else(|| arg_error("resources", w, "a weight must be a number"))?,
            };
            let strategy = match field("type").map(|t| t.as_str()) {
                Some(Some("MostAllocated")) => Strategy::MostAllocated,
                Some(None) => return Err(arg_error("resources", rule, "a type must be a string")),
                _ => Strategy::LeastAllocated,
            };
            if valid_pattern(name) {
                rules.insert(
                    name.clone(),
                    ResourceRule {
                        strategy,
                        weight: if weight <= 0 { 1 } else { weight },
                    },
                );
            }
        }
    }
    if args
        .raw("resources")
        .is_none_or(|v| v.as_object().is_some_and(|o| o.is_empty()))
    {
        for name in ["cpu", "memory"] {
            let rule = ResourceRule {
                strategy: Strategy::LeastAllocated,
                weight: 1,
            };
            rules.insert(name.to_string(), rule);
        }
    }
    Ok(rules)
}

/// Builds the plugin from `resourceStrategyFitWeight`, `resources`, `sra` and `proportional`.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    let weight = match args.raw("resourceStrategyFitWeight") {
        None => DEFAULT_WEIGHT,
        Some(v) => int_of(v)
            .ok_or_else(|| arg_error("resourceStrategyFitWeight", v, "expected an integer"))?,
    };
    Ok(Box::new(ResourceStrategyFit {
        weight: if weight < 0 { DEFAULT_WEIGHT } else { weight },
        resources: read_resources(args)?,
        sra: Sra::from_args(args)?,
        proportional: Proportional::from_args(args)?,
    }))
}

/// The configured rule of `resource`: its exact name, else the matching pattern with the
/// longest prefix.
fn rule_for<'a>(
    resource: &str,
    rules: &'a BTreeMap<String, ResourceRule>,
) -> Option<&'a ResourceRule> {
    if let Some(rule) = rules.get(resource) {
        return Some(rule);
    }
    rules
        .iter()
        .filter_map(|(pattern, rule)| {
            let prefix = pattern.strip_suffix('*')?;
            resource.starts_with(prefix).then_some((prefix.len(), rule))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, rule)| rule)
}

/// One resource's score: the share allocated (or left free) after the task, × `weight`;
/// `None` when the task would overflow the node.
fn resource_score(
    strategy: Strategy,
    request: f64,
    used: f64,
    capacity: f64,
    weight: i64,
) -> Option<f64> {
    if weight == 0 || capacity == 0.0 {
        return Some(0.0);
    }
    let after = request + used;
    if after > capacity {
        return None;
    }
    Some(match strategy {
        Strategy::MostAllocated => after * weight as f64 / capacity,
        Strategy::LeastAllocated => (capacity - after) * weight as f64 / capacity,
        Strategy::Other => 0.0,
    })
}

impl ResourceStrategyFit {
    /// How the pod's annotations choose its scoring.
    fn pod_scoring(ssn: &SessionState, task: TaskId) -> PodScoring {
        let annotations = &ssn.snap.tasks.pod[task.idx()].metadata.annotations;
        let Some(kind) = annotations
            .get(SCORING_TYPE_ANNOTATION)
            .filter(|k| !k.is_empty())
        else {
            return PodScoring::Configured;
        };
        annotations
            .get(WEIGHT_ANNOTATION)
            .filter(|w| !w.is_empty())
            .and_then(|w| serde_json::from_str(w).ok())
            .map_or(PodScoring::Unusable, |weights| {
                PodScoring::Own(Strategy::of(kind), weights)
            })
    }

    /// The fit score (Volcano: resource_strategy_fit.go, Score).
    fn fit_score(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> f64 {
        let scoring = Self::pod_scoring(ssn, task);
        if scoring == PodScoring::Unusable {
            return 0.0;
        }
        let request = ssn.resreq(task);
        let allocatable = &ssn.snap.nodes.allocatable[node.idx()];
        let used = &ssn.nodes.used[node];
        let (mut score, mut weights) = (0.0, 0);
        for name in request.resource_names() {
            let rule = match &scoring {
                PodScoring::Own(strategy, weights) => {
                    weights.get(&name.to_string()).map(|&w| (*strategy, w))
                }
                _ => rule_for(&name.to_string(), &self.resources).map(|r| (r.strategy, r.weight)),
            };
            let Some((strategy, weight)) = rule else {
                continue;
            };
            let capacity = allocatable.get(name);
            let Some(s) = resource_score(
                strategy,
                request.get(name),
                used.get(name),
                capacity,
                weight,
            ) else {
                return 0.0;
            };
            score += s;
            weights += weight;
        }
        if weights > 0 {
            score /= weights as f64;
        }
        score * 100.0 * self.weight as f64
    }
}

impl Plugin for ResourceStrategyFit {
    fn name(&self) -> &str {
        "resource-strategy-fit"
    }

    /// Node-local unless the pod's annotations, which its signature does not carry, choose
    /// its strategy.
    fn node_local(&self, ssn: &SessionState, task: TaskId) -> bool {
        let annotations = &ssn.snap.tasks.pod[task.idx()].metadata.annotations;
        !annotations.contains_key(SCORING_TYPE_ANNOTATION)
    }

    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        match &self.proportional {
            Some(p) => p.check(ssn, task, node),
            None => Ok(()),
        }
    }

    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        if self.weight <= 0 && self.sra.weight <= 0 {
            return None;
        }
        let mut score = 0.0;
        if self.weight > 0 {
            score += self.fit_score(ssn, task, node);
        }
        if self.sra.weight > 0 {
            score += self.sra.score(ssn, task, node);
        }
        Some(Ok(score))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::find::{node_id, task};
    use crate::harness::objects::{JOB, node, pod};
    use crate::harness::{conf, session};

    fn score(args: &str, objects: &str, pod_key: &str, node_name: &str) -> f64 {
        let ssn = session(&conf("resource-strategy-fit", args), objects);
        ssn.node_order(task(&ssn, pod_key), node_id(&ssn, node_name))
    }

    #[test]
    fn defaults_score_cpu_and_memory_least_allocated_times_ten() {
        let objects = JOB.to_string()
            + &node("n1", "", "cpu: '4', memory: 4Gi")
            + &pod(
                "p",
                "",
                "containers: [{resources: {requests: {cpu: '1', memory: 1Gi}}}]",
            );
        assert_eq!(score("", &objects, "ns/p", "n1"), 0.75 * 100.0 * 10.0);
    }

    #[test]
    fn the_longest_matching_pattern_wins_and_an_exact_name_beats_it() {
        let rule = |w| ResourceRule {
            strategy: Strategy::MostAllocated,
            weight: w,
        };
        let rules: BTreeMap<String, ResourceRule> = [
            ("nvidia.*".to_string(), rule(1)),
            ("nvidia.com/*".to_string(), rule(2)),
            ("nvidia.com/gpu".to_string(), rule(3)),
        ]
        .into();
        assert_eq!(rule_for("nvidia.com/gpu", &rules).unwrap().weight, 3);
        assert_eq!(rule_for("nvidia.com/a10", &rules).unwrap().weight, 2);
        assert_eq!(rule_for("nvidia.io/x", &rules).unwrap().weight, 1);
        assert!(rule_for("amd.com/gpu", &rules).is_none());
        assert!(!valid_pattern("*") && !valid_pattern("a*b*") && valid_pattern("a/*"));
    }

    #[test]
    fn an_overflowing_resource_zeroes_the_fit_score() {
        let objects = JOB.to_string()
            + &node("n1", "", "cpu: '1', memory: 4Gi")
            + &pod(
                "p",
                "",
                "containers: [{resources: {requests: {cpu: '2', memory: 1Gi}}}]",
            );
        assert_eq!(score("", &objects, "ns/p", "n1"), 0.0);
    }

    #[test]
    fn a_pod_annotation_chooses_its_own_strategy_and_weights() {
        let objects = JOB.to_string()
            + &node("n1", "", "cpu: '4', memory: 4Gi")
            + &pod("p", "", "containers: [{resources: {requests: {cpu: '1', memory: 1Gi}}}]")
                .replace(
                    "scheduling.k8s.io/group-name: pg",
                    "scheduling.k8s.io/group-name: pg, volcano.sh/resource-strategy-scoring-type: MostAllocated, volcano.sh/resource-strategy-weight: '{\"cpu\": 1}'",
                );
        assert_eq!(score("", &objects, "ns/p", "n1"), 0.25 * 100.0 * 10.0);
        let missing_weights =
            objects.replace(", volcano.sh/resource-strategy-weight: '{\"cpu\": 1}'", "");
        assert_eq!(score("", &missing_weights, "ns/p", "n1"), 0.0);
    }

    #[test]
    fn zero_weights_register_no_node_order() {
        let ssn = session(
            &conf("resource-strategy-fit", "resourceStrategyFitWeight: 0"),
            &(JOB.to_string() + &node("n1", "", "cpu: '4'")),
        );
        let plugin = build(&Arguments::new(
            [("resourceStrategyFitWeight".to_string(), Value::from(0))].into(),
        ))
        .unwrap();
        assert!(
            plugin
                .node_order(&ssn.state, TaskId(0), NodeId(0))
                .is_none()
        );
    }
}
