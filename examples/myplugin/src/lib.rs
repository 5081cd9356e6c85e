//! `myplugin`: the example of tephra's plugin guide (`docs/plugins.md`), Volcano's custom-plugin
//! walk-through made real. Jobs are ordered by priority; only nodes labelled `my-label` pass the
//! predicate; a node scores its cpu usage (used / allocatable) times the `weight` argument, so
//! fuller nodes are preferred.
//!
//! One source, two ways to run it: `register` links it into a tephra binary as a built-in, and
//! `cargo build --release -p myplugin` builds `libmyplugin.so` for `--plugins-dir`.

use tephra_plugin_sdk::prelude::*;
use tephra_plugin_sdk::register_builtin;

/// The name the tiers use.
pub const NAME: &str = "myplugin";

/// The label a node must carry to pass the predicate (any value), unless `label` names another.
pub const LABEL: &str = "my-label";

/// The plugin: its parsed arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct MyPlugin {
    weight: f64,
    label: String,
}

/// Builds the plugin: `weight` (a number, default 1) scales the node score; `label` (default
/// `my-label`) is the label the predicate requires.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(MyPlugin {
        weight: args.float("weight")?.unwrap_or(1.0),
        label: args.string("label")?.unwrap_or_else(|| LABEL.into()),
    }))
}

/// Links the plugin into `registry` as a built-in.
pub fn register(registry: &mut tephra_plugin_sdk::PluginRegistry) {
    register_builtin(registry, NAME, build);
}

impl Plugin for MyPlugin {
    fn name(&self) -> &str {
        NAME
    }

    /// Higher priority first.
    fn job_order(&self, ssn: &SessionView, l: JobId, r: JobId) -> Ordering {
        ssn.job_priority(r).cmp(&ssn.job_priority(l))
    }

    fn predicate(&self, ssn: &SessionView, _: TaskId, node: NodeId) -> Result<(), FitError> {
        match ssn.node_label(node, &self.label) {
            Some(_) => Ok(()),
            None => Err(FitError::new(
                StatusCode::UnschedulableAndUnresolvable,
                format!("node(s) didn't have label {}", self.label),
            )),
        }
    }

    /// `used / allocatable` cpu × `weight`; a node without allocatable cpu scores 0.
    fn node_order(
        &self,
        ssn: &SessionView,
        _: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        let allocatable = ssn.node_allocatable(node, "cpu");
        let usage = if allocatable > 0.0 {
            ssn.node_used(node, "cpu") / allocatable
        } else {
            0.0
        };
        Some(Ok(usage * self.weight))
    }
}

tephra_plugin_sdk::export_plugins!(NAME => build);

#[cfg(test)]
mod tests {
    use tephra_engine::actions;
    use tephra_engine::framework::Session;
    use tephra_engine::harness::Harness;
    use tephra_plugin_sdk::linked;

    use super::*;

    fn conf(arguments: &str) -> String {
        format!(
            "actions: allocate\ntiers:\n- plugins:\n  - name: myplugin\n    arguments: {{{arguments}}}\n"
        )
    }

    /// `plain` and `labelled` nodes of 8 cpu, `labelled` running a 2-cpu pod, and one pending
    /// 1-cpu pod.
    fn open(arguments: &str) -> Session {
        Harness::new(&conf(arguments))
            .with_plugin(NAME, linked(build))
            .queue("q", 1)
            .node("plain", "8", "16Gi", &[])
            .node("labelled", "8", "16Gi", &[(LABEL, "yes")])
            .manifests(
                "kind: PodGroup\nmetadata: {name: running, namespace: ns}\nspec: {queue: q, minMember: 1}\nstatus: {phase: Running}\n---\nkind: Pod\nmetadata: {name: r0, namespace: ns, uid: r0, annotations: {scheduling.k8s.io/group-name: running}}\nspec: {nodeName: labelled, containers: [{name: c, resources: {requests: {cpu: '2'}}}]}\nstatus: {phase: Running}\n",
            )
            .pod_group("ns", "pg", "q", 1)
            .pod("ns", "p", "pg", "1", "1Gi")
            .open()
            .expect("session opens")
    }

    fn ids(ssn: &Session) -> (TaskId, NodeId, NodeId) {
        let snap = &ssn.state.snap;
        (
            snap.task_id("ns/p").unwrap(),
            snap.nodes.id("plain").unwrap(),
            snap.nodes.id("labelled").unwrap(),
        )
    }

    #[test]
    fn only_labelled_nodes_pass_the_predicate() {
        let ssn = open("");
        let (t, plain, labelled) = ids(&ssn);
        assert!(ssn.predicate(t, labelled).is_ok());
        let err = ssn.predicate(t, plain).unwrap_err();
        assert_eq!(err.to_string(), "node(s) didn't have label my-label");
        assert!(open("label: other").predicate(t, labelled).is_err());
    }

    #[test]
    fn node_score_is_cpu_usage_times_weight() {
        let ssn = open("");
        let (t, plain, labelled) = ids(&ssn);
        assert_eq!(ssn.node_order(t, labelled), 0.25, "2 of 8 cpu, weight 1");
        assert_eq!(ssn.node_order(t, plain), 0.0);
        assert_eq!(open("weight: 4").node_order(t, labelled), 1.0);
    }

    #[test]
    fn jobs_are_ordered_by_priority() {
        let ssn = Harness::new(&conf(""))
            .with_plugin(NAME, linked(build))
            .queue("q", 1)
            .manifests(
                "kind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n---\nkind: PodGroup\nmetadata: {name: low, namespace: ns}\nspec: {queue: q}\n---\nkind: PodGroup\nmetadata: {name: high, namespace: ns}\nspec: {queue: q, priorityClassName: high}\n",
            )
            .open()
            .unwrap();
        let (high, low) = (
            ssn.state.snap.job_id("ns/high").unwrap(),
            ssn.state.snap.job_id("ns/low").unwrap(),
        );
        assert!(ssn.job_order_less(high, low));
        assert!(!ssn.job_order_less(low, high));
    }

    #[test]
    fn the_pod_goes_to_the_labelled_node() {
        let mut ssn = open("");
        actions::run_all(&mut ssn);
        let (t, _, labelled) = ids(&ssn);
        assert_eq!(ssn.binds, [(t, labelled)]);
    }

    #[test]
    fn a_bad_weight_is_refused() {
        let err = Harness::new(&conf("weight: heavy"))
            .with_plugin(NAME, linked(build))
            .open()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin myplugin: argument weight: expected a number (got \"heavy\")"
        );
    }
}
