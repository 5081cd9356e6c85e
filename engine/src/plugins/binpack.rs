//! The `binpack` plugin (Volcano: pkg/scheduler/plugins/binpack/binpack.go): favour nodes that the task fills up, per resource
//! `(request + used) / allocatable`, weighted and averaged, × 100 × `binpack.weight`. A node the
//! task would overflow in any weighted resource scores 0. With `binpack.weight: 0` the plugin
//! registers no node-order function.

use std::collections::BTreeMap;

use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, SessionState};
use crate::model::{NodeId, ResourceName, TaskId};

/// The plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct Binpack {
    weight: i64,
    resources: BTreeMap<ResourceName, i64>,
}

/// A weight argument; negative means 1.
fn resource_weight(args: &Arguments, key: &str) -> Result<i64, ArgumentError> {
    Ok(args.int(key)?.filter(|w| *w >= 0).unwrap_or(1))
}

/// Builds the plugin.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Binpack::from_args(args)?))
}

impl Binpack {
    /// Reads `binpack.weight`, `binpack.cpu`, `binpack.memory`, and the comma list
    /// `binpack.resources` with a `binpack.resources.<name>` weight each.
    pub fn from_args(args: &Arguments) -> Result<Binpack, ArgumentError> {
        let weight = args.int("binpack.weight")?.unwrap_or(1);
        let mut resources = BTreeMap::new();
        for name in args
            .string("binpack.resources")?
            .unwrap_or_default()
            .split(',')
        {
            let name = name.trim();
            if !name.is_empty() {
                resources.insert(
                    ResourceName::of(name),
                    resource_weight(args, &format!("binpack.resources.{name}"))?,
                );
            }
        }
        resources.insert(ResourceName::Cpu, resource_weight(args, "binpack.cpu")?);
        resources.insert(
            ResourceName::Memory,
            resource_weight(args, "binpack.memory")?,
        );
        Ok(Binpack { weight, resources })
    }

    fn score(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> f64 {
        let request = ssn.resreq(task);
        let allocatable = &ssn.snap.nodes.allocatable[node.idx()];
        let used = &ssn.nodes.used[node];
        let mut score = 0.0;
        let mut weights = 0;
        for name in request.resource_names() {
            let req = request.get(name);
            let Some(&weight) = self.resources.get(&name) else {
                continue;
            };
            if req == 0.0 {
                continue;
            }
            let capacity = allocatable.get(name);
            let after = req + used.get(name);
            if capacity != 0.0 && weight != 0 {
                if after > capacity {
                    return 0.0;
                }
                score += after * weight as f64 / capacity;
            }
            weights += weight;
        }
        if weights > 0 {
            score /= weights as f64;
        }
        score * (100 * self.weight) as f64
    }
}

impl Plugin for Binpack {
    fn name(&self) -> &str {
        "binpack"
    }

    /// Its node score reads only the node's own accounting.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        (self.weight != 0).then(|| Ok(self.score(ssn, task, node)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::find::{node_id, task};
    use crate::harness::objects::{JOB, node, pod};
    use crate::harness::{conf, session};

    /// binpack/node-score-1 and -2: n1 runs p1, n3 runs p2 (both Bound), p3 and p4 pending.
    fn cluster() -> String {
        [
            JOB.to_string(),
            node("n1", "", "cpu: '2', memory: 4Gi, pods: '10'"),
            node("n2", "", "cpu: '4', memory: 16Gi, pods: '10', nvidia.com/gpu: '4'"),
            node("n3", "", "cpu: '2', memory: 4Gi, pods: '10', example.com/foo: '16'"),
            pod("p1", "", "nodeName: n1, containers: [{resources: {requests: {cpu: '1', memory: 1Gi}}}]"),
            pod("p2", "", "nodeName: n3, containers: [{resources: {requests: {cpu: '1.5', memory: 0Gi}}}]"),
            pod("p3", "", "containers: [{resources: {requests: {cpu: '2', memory: 10Gi, nvidia.com/gpu: '2'}}}]"),
            pod("p4", "", "containers: [{resources: {requests: {cpu: '3', memory: 4Gi, example.com/foo: '3'}}}]"),
        ]
        .concat()
    }

    fn assert_scores(arguments: &str, expected: &[(&str, [f64; 3])]) {
        let ssn = session(&conf("binpack", arguments), &cluster());
        for (p, scores) in expected {
            let t = task(&ssn, &format!("ns/{p}"));
            for (n, want) in ["n1", "n2", "n3"].iter().zip(scores) {
                let got = ssn.node_order(t, node_id(&ssn, n))
                    + ssn.batch_node_order(t, &[node_id(&ssn, n)]).unwrap()[0];
                assert!(
                    (got - want).abs() < 1e-8,
                    "{p} on {n}: got {got}, want {want}"
                );
            }
        }
    }

    #[test]
    fn conformance_node_score_1_weights_every_configured_resource() {
        assert_scores(
            "binpack.weight: 10, binpack.cpu: 2, binpack.memory: 3, binpack.resources: 'nvidia.com/gpu, example.com/foo', binpack.resources.nvidia.com/gpu: 7, binpack.resources.example.com/foo: 8",
            &[
                ("p1", [700.0, 137.5, 0.0]),
                ("p2", [0.0, 375.0, 0.0]),
                ("p3", [0.0, 531.25, 0.0]),
                ("p4", [0.0, 173.076923076, 0.0]),
            ],
        );
    }

    #[test]
    fn conformance_node_score_2_skips_unconfigured_resources() {
        assert_scores(
            "binpack.weight: 1, binpack.cpu: 1, binpack.memory: 1, binpack.resources: nvidia.com/gpu, binpack.resources.nvidia.com/gpu: 23",
            &[
                ("p1", [75.0, 15.625, 0.0]),
                ("p2", [0.0, 37.5, 0.0]),
                ("p3", [0.0, 50.5, 0.0]),
                ("p4", [0.0, 50.0, 0.0]),
            ],
        );
    }

    #[test]
    fn zero_weight_registers_no_node_order() {
        let ssn = session(&conf("binpack", "binpack.weight: 0"), &cluster());
        assert_eq!(
            ssn.node_order(task(&ssn, "ns/p3"), node_id(&ssn, "n2")),
            0.0
        );
        let p = Binpack {
            weight: 0,
            resources: BTreeMap::new(),
        };
        assert!(
            p.node_order(&ssn.state, task(&ssn, "ns/p3"), node_id(&ssn, "n2"))
                .is_none()
        );
    }

    #[test]
    fn negative_resource_weights_mean_one() {
        let args = Arguments(
            serde_saphyr::from_str(
                "binpack.cpu: -3\nbinpack.resources: ' x/y ,'\nbinpack.resources.x/y: -1\n",
            )
            .unwrap(),
        );
        let want = [
            (ResourceName::Cpu, 1),
            (ResourceName::Memory, 1),
            (ResourceName::of("x/y"), 1),
        ];
        assert_eq!(
            Binpack::from_args(&args).unwrap(),
            Binpack {
                weight: 1,
                resources: want.into()
            }
        );
    }

    #[test]
    fn cpu_and_memory_weights_override_the_resource_list() {
        let args = Arguments(
            serde_saphyr::from_str(
                "binpack.cpu: 4\nbinpack.resources: cpu\nbinpack.resources.cpu: 9\n",
            )
            .unwrap(),
        );
        assert_eq!(
            Binpack::from_args(&args).unwrap().resources[&ResourceName::Cpu],
            4
        );
    }

    #[test]
    fn malformed_arguments_are_refused() {
        let bad = Arguments(serde_saphyr::from_str("binpack.weight: heavy\n").unwrap());
        assert_eq!(Binpack::from_args(&bad).unwrap_err().key, "binpack.weight");
        let list = Arguments(serde_saphyr::from_str("binpack.resources: [a]\n").unwrap());
        assert_eq!(
            Binpack::from_args(&list).unwrap_err().key,
            "binpack.resources"
        );
    }
}
