//! The `sra` part of `resource-strategy-fit` (Volcano: pkg/scheduler/plugins/
//! resource-strategy-fit/sra.go): keep nodes with scarce resources for the tasks that need
//! them. A node scores higher the fewer of the listed scarce resources it has, weighted:
//! `(1 - Σ weight of the listed resources the node has / Σ weights) × 100 × sra.weight`; a
//! node lacking any resource the task requests scores 0.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{arg_error, int_of};
use crate::config::{ArgumentError, Arguments};
use crate::framework::SessionState;
use crate::model::{NodeId, ResourceName, TaskId};

/// `sra: {enable, resources, weight, resourceWeight}`; disabled, its weight is 0.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sra {
    pub weight: i64,
    resources: BTreeMap<ResourceName, i64>,
    weight_sum: i64,
}

/// A field of a configuration table, its key matched regardless of case as Volcano's
/// argument decoder matches it.
pub(super) fn field<'a>(table: &'a Value, key: &str) -> Option<&'a Value> {
    table
        .as_object()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v)
        .filter(|v| !v.is_null())
}

/// A boolean field (`enable`); absent is false.
pub(super) fn enabled(table: &Value, section: &str) -> Result<bool, ArgumentError> {
    match field(table, "enable") {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(arg_error(section, v, "enable must be a boolean")),
    }
}

/// The comma-separated `resources` list, trimmed, empty names dropped.
pub(super) fn resource_list(table: &Value, section: &str) -> Result<Vec<String>, ArgumentError> {
    match field(table, "resources") {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(s
            .split(',')
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_string)
            .collect()),
        Some(v) => Err(arg_error(
            section,
            v,
            "resources must be a comma-separated string",
        )),
    }
}

impl Sra {
    /// Reads the `sra` argument; resource weights default to 1 and a negative one is 1.
    pub fn from_args(args: &Arguments) -> Result<Sra, ArgumentError> {
        let Some(table) = args.raw("sra") else {
            return Ok(Sra::default());
        };
        if !table.is_object() {
            return Err(arg_error("sra", table, "expected a map"));
        }
        if !enabled(table, "sra")? {
            return Ok(Sra::default());
        }
        let weight = match field(table, "weight") {
            None => 0,
            Some(v) => int_of(v).ok_or_else(|| arg_error("sra", v, "weight must be a number"))?,
        };
        let per_resource = field(table, "resourceWeight");
        let mut sra = Sra {
            weight,
            ..Sra::default()
        };
        for name in resource_list(table, "sra")? {
            let w = match per_resource.and_then(|t| t.get(&name)) {
                None => 1,
                Some(v) => int_of(v)
                    .ok_or_else(|| arg_error("sra", v, "a resource weight must be a number"))?,
            };
            let w = if w < 0 { 1 } else { w };
            sra.resources.insert(ResourceName::of(&name), w);
            sra.weight_sum += w;
        }
        Ok(sra)
    }

    /// The node's score for `task` (Volcano: sra.go, sraScore).
    pub fn score(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> f64 {
        let allocatable = &ssn.snap.nodes.allocatable[node.idx()];
        if ssn
            .resreq(task)
            .resource_names()
            .any(|name| allocatable.get(name) == 0.0)
        {
            return 0.0;
        }
        let mut score: f64 = self
            .resources
            .iter()
            .filter(|(name, _)| allocatable.get(**name) > 0.0)
            .map(|(_, w)| *w as f64)
            .sum();
        if self.weight_sum > 0 {
            score = 1.0 - score / self.weight_sum as f64;
        }
        score * 100.0 * self.weight as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::find::{node_id, task};
    use crate::harness::objects::{JOB, node, pod};
    use crate::harness::{conf, session};

    const ARGS: &str = "resourceStrategyFitWeight: 0, sra: {enable: true, resources: 'nvidia.com/t4, nvidia.com/a10', weight: 5, resourceWeight: {nvidia.com/t4: 2, nvidia.com/a10: 3}}";

    #[test]
    fn nodes_without_the_scarce_resources_score_highest() {
        let objects = JOB.to_string()
            + &node("plain", "", "cpu: '8', memory: 8Gi, pods: '10'")
            + &node(
                "t4",
                "",
                "cpu: '8', memory: 8Gi, pods: '10', nvidia.com/t4: '4'",
            )
            + &node(
                "both",
                "",
                "cpu: '8', memory: 8Gi, pods: '10', nvidia.com/t4: '4', nvidia.com/a10: '4'",
            )
            + &pod(
                "p",
                "",
                "containers: [{resources: {requests: {cpu: '1', memory: 1Gi}}}]",
            );
        let ssn = session(&conf("resource-strategy-fit", ARGS), &objects);
        let p = task(&ssn, "ns/p");
        let s = |n| ssn.node_order(p, node_id(&ssn, n));
        assert_eq!((s("plain"), s("t4"), s("both")), (500.0, 300.0, 0.0));
    }

    #[test]
    fn a_node_lacking_a_requested_resource_scores_zero() {
        let objects = JOB.to_string()
            + &node("plain", "", "cpu: '8', memory: 8Gi, pods: '10'")
            + &pod(
                "p",
                "",
                "containers: [{resources: {requests: {cpu: '1', nvidia.com/t4: '1'}}}]",
            );
        let ssn = session(&conf("resource-strategy-fit", ARGS), &objects);
        assert_eq!(
            ssn.node_order(task(&ssn, "ns/p"), node_id(&ssn, "plain")),
            0.0
        );
    }

    #[test]
    fn disabled_sra_has_no_weight() {
        let args = Arguments::new(
            [(
                "sra".to_string(),
                serde_json::json!({"enable": false, "weight": 5, "resources": "x/y"}),
            )]
            .into(),
        );
        assert_eq!(Sra::from_args(&args).unwrap().weight, 0);
    }
}
