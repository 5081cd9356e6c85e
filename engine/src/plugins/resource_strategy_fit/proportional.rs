//! The `proportional` part of `resource-strategy-fit` (Volcano: pkg/scheduler/plugins/
//! resource-strategy-fit/proportional.go): a task that asks for none of the listed scarce
//! resources may not leave a node with less idle cpu and memory than the node's idle scarce
//! resources need, `idle × resourceProportion.<name>.cpu` millicores and
//! `idle × resourceProportion.<name>.memory` megabytes (per thousandth of the resource), so
//! the tasks that do need them can still run there.

use std::collections::BTreeMap;

use super::arg_error;
use super::sra::{enabled, field, resource_list};
use crate::config::{ArgumentError, Arguments};
use crate::framework::{FitError, SessionState, StatusCode};
use crate::model::{Dim, NodeId, TaskId};

/// Cpu and memory held back per unit of one scarce resource.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rates {
    cpu: f64,
    memory: f64,
}

/// The listed resources and their rates.
#[derive(Debug, Clone, PartialEq)]
pub struct Proportional {
    resources: BTreeMap<Dim, Rates>,
}

impl Proportional {
    /// Reads `proportional: {enable, resources, resourceProportion}`; `None` when disabled.
    /// A rate defaults to 1 and a negative one is 1.
    pub fn from_args(args: &Arguments) -> Result<Option<Proportional>, ArgumentError> {
        let Some(table) = args.raw("proportional") else {
            return Ok(None);
        };
        if !table.is_object() {
            return Err(arg_error("proportional", table, "expected a map"));
        }
        if !enabled(table, "proportional")? {
            return Ok(None);
        }
        let rates = field(table, "resourceProportion");
        let rate = |key: String| -> Result<f64, ArgumentError> {
            match rates.and_then(|t| t.get(&key)) {
                None => Ok(1.0),
                Some(v) => v
                    .as_f64()
                    .map(|r| if r < 0.0 { 1.0 } else { r })
                    .ok_or_else(|| arg_error("proportional", v, "a proportion must be a number")),
            }
        };
        let mut resources = BTreeMap::new();
        for name in resource_list(table, "proportional")? {
            let r = Rates {
                cpu: rate(format!("{name}.cpu"))?,
                memory: rate(format!("{name}.memory"))?,
            };
            resources.insert(Dim::of(&name), r);
        }
        Ok(Some(Proportional { resources }))
    }

    /// The predicate (Volcano: proportional.go, checkNodeResourceIsProportional); listed
    /// resources are checked in name order.
    pub fn check(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        let request = ssn.resreq(task);
        if self
            .resources
            .keys()
            .any(|d| request.scalar(*d).is_some_and(|v| v > 0.0))
        {
            return Ok(());
        }
        let idle = &ssn.nodes.idle[node];
        for (d, rates) in &self.resources {
            let Some(value) = idle.scalar(*d) else {
                continue;
            };
            let cpu_reserved = value * rates.cpu;
            let memory_reserved = value * rates.memory * 1000.0 * 1000.0;
            if idle.milli_cpu - request.milli_cpu < cpu_reserved
                || idle.memory - request.memory < memory_reserved
            {
                return Err(FitError::new(
                    StatusCode::UnschedulableAndUnresolvable,
                    format!("proportional of resource {d} check failed"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::harness::find::{node_id, task};
    use crate::harness::objects::{JOB, node, pod};
    use crate::harness::{conf, session};

    const ARGS: &str = "proportional: {enable: true, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8}}";

    #[test]
    fn a_cpu_task_may_not_eat_into_what_the_idle_gpus_need() {
        // 2 idle GPUs hold back 8 cpus and 16 GB.
        let objects = JOB.to_string()
            + &node("n1", "", "cpu: '10', memory: 64Gi, nvidia.com/gpu: '2'")
            + &pod(
                "small",
                "",
                "containers: [{resources: {requests: {cpu: '2'}}}]",
            )
            + &pod(
                "big",
                "",
                "containers: [{resources: {requests: {cpu: '3'}}}]",
            )
            + &pod(
                "gpu",
                "",
                "containers: [{resources: {requests: {cpu: '9', nvidia.com/gpu: '1'}}}]",
            );
        let ssn = session(&conf("resource-strategy-fit", ARGS), &objects);
        let n1 = node_id(&ssn, "n1");
        assert!(ssn.predicate(task(&ssn, "ns/small"), n1).is_ok());
        let err = ssn.predicate(task(&ssn, "ns/big"), n1).unwrap_err();
        assert_eq!(
            err.to_string(),
            "proportional of resource nvidia.com/gpu check failed"
        );
        assert!(
            ssn.predicate(task(&ssn, "ns/gpu"), n1).is_ok(),
            "it asks for a GPU"
        );
    }
}
