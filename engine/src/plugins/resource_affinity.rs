//! `resource-affinity`: the plugin of Volcano's custom-plugin guide, made real. A job names a
//! preferred node group (PodGroup annotation `volcano.sh/preferred-node-group`; Volcano's job
//! controller copies a Job's annotations onto its PodGroup); nodes carry their group in the
//! label `volcano.sh/node-group`. Matching nodes score `prefer-weight × 10` higher; with
//! `require-match` other groups are rejected. A job without the annotation is unaffected.

use crate::config::{ArgumentError, Arguments};
use crate::framework::{FitError, Plugin, SessionState, StatusCode};
use crate::model::{NodeId, TaskId};

/// PodGroup annotation naming the preferred node group.
pub const PREFERRED_GROUP_ANNOTATION: &str = "volcano.sh/preferred-node-group";
/// Node label naming the node's group.
pub const NODE_GROUP_LABEL: &str = "volcano.sh/node-group";

/// The plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceAffinity {
    prefer_weight: f64,
    require_match: bool,
}

/// Builds the plugin: `prefer-weight` (float, default 10), `require-match` (bool, default false).
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(ResourceAffinity {
        prefer_weight: args.float("prefer-weight")?.unwrap_or(10.0),
        require_match: args.bool("require-match")?.unwrap_or(false),
    }))
}

impl ResourceAffinity {
    /// The task's preferred group, read from its job's PodGroup.
    fn preferred<'a>(&self, ssn: &'a SessionState, task: TaskId) -> Option<&'a str> {
        let job = ssn.job_of(task)?;
        ssn.snap.jobs.podgroup[job.idx()]
            .metadata
            .annotations
            .get(PREFERRED_GROUP_ANNOTATION)
            .map(String::as_str)
    }

    fn matches(ssn: &SessionState, node: NodeId, group: &str) -> bool {
        ssn.snap.labels.has(node, NODE_GROUP_LABEL, group)
    }
}

impl Plugin for ResourceAffinity {
    fn name(&self) -> &str {
        "resource-affinity"
    }

    /// Node-local only without a preferred group: the group comes from the job, which the
    /// node-search signature does not include.
    fn node_local(&self, ssn: &SessionState, task: TaskId) -> bool {
        self.preferred(ssn, task).is_none()
    }

    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        match self.preferred(ssn, task) {
            Some(group) if self.require_match && !Self::matches(ssn, node, group) => {
                Err(FitError::new(
                    StatusCode::UnschedulableAndUnresolvable,
                    format!("node(s) not in preferred node group {group}"),
                ))
            }
            _ => Ok(()),
        }
    }

    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        let group = self.preferred(ssn, task)?;
        Some(Ok(if Self::matches(ssn, node, group) {
            self.prefer_weight * 10.0
        } else {
            0.0
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::harness::Harness;

    fn conf(args: &str) -> String {
        format!(
            "actions: allocate\ntiers:\n- plugins:\n  - name: resource-affinity\n    arguments: {{{args}}}\n"
        )
    }

    fn harness(args: &str, annotated: bool) -> Harness {
        let mut pg: crate::api::PodGroup = Harness::parse(
            "metadata: {name: pg, namespace: ns}\nspec: {queue: q, minMember: 1}\nstatus: {phase: Inqueue}\n",
        );
        if annotated {
            pg.metadata
                .annotations
                .insert(super::PREFERRED_GROUP_ANNOTATION.into(), "gpu".into());
        }
        Harness::new(&conf(args))
            .queue("q", 1)
            .node("cpu-1", "8", "16Gi", &[("volcano.sh/node-group", "cpu")])
            .node("gpu-1", "8", "16Gi", &[("volcano.sh/node-group", "gpu")])
            .pod_group_object(pg)
            .pod("ns", "p", "pg", "1", "1Gi")
    }

    #[test]
    fn matching_node_scores_prefer_weight_times_ten() {
        let ssn = harness("prefer-weight: 3", true).open().unwrap();
        let t = ssn.state.snap.task_id("ns/p").unwrap();
        let (cpu, gpu) = (
            ssn.state.snap.nodes.id("cpu-1").unwrap(),
            ssn.state.snap.nodes.id("gpu-1").unwrap(),
        );
        assert_eq!(ssn.node_order(t, gpu), 30.0);
        assert_eq!(ssn.node_order(t, cpu), 0.0);
    }

    #[test]
    fn default_weight_is_ten_and_other_groups_pass_without_require_match() {
        let ssn = harness("", true).open().unwrap();
        let t = ssn.state.snap.task_id("ns/p").unwrap();
        let (cpu, gpu) = (
            ssn.state.snap.nodes.id("cpu-1").unwrap(),
            ssn.state.snap.nodes.id("gpu-1").unwrap(),
        );
        assert_eq!(ssn.node_order(t, gpu), 100.0);
        assert!(ssn.predicate(t, cpu).is_ok());
    }

    #[test]
    fn require_match_rejects_other_groups() {
        let ssn = harness("require-match: true", true).open().unwrap();
        let t = ssn.state.snap.task_id("ns/p").unwrap();
        let (cpu, gpu) = (
            ssn.state.snap.nodes.id("cpu-1").unwrap(),
            ssn.state.snap.nodes.id("gpu-1").unwrap(),
        );
        assert!(ssn.predicate(t, cpu).is_err());
        assert!(ssn.predicate(t, gpu).is_ok());
    }

    #[test]
    fn no_annotation_means_no_effect() {
        let ssn = harness("require-match: true", false).open().unwrap();
        let t = ssn.state.snap.task_id("ns/p").unwrap();
        for n in ssn.state.snap.nodes.ids() {
            assert!(ssn.predicate(t, n).is_ok());
            assert_eq!(ssn.node_order(t, n), 0.0);
        }
    }

    #[test]
    fn bad_argument_is_refused() {
        let err = harness("prefer-weight: heavy", true).open().unwrap_err();
        assert!(err.to_string().contains("prefer-weight"), "{err}");
    }
}
