//! `pdb` (Volcano: pkg/scheduler/plugins/pdb/pdb.go): never pick victims that would break a PodDisruptionBudget. Used as a
//! Preemptable / Reclaimable filter and as a VictimTasks provider (which, unioned within a
//! tier, nominates every task that does not break a budget).

use crate::config::{ArgumentError, Arguments};
use crate::framework::{Plugin, SessionState};
use crate::model::TaskId;
use crate::selector::Selector;

/// The plugin (no arguments).
#[derive(Debug, Default)]
pub struct Pdb;

/// Builds the plugin.
pub fn build(_: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(Pdb))
}

/// The tasks whose disruption keeps every matching budget at or above zero, walking `tasks`
/// in order and spending each budget's `disruptionsAllowed`. Pods without labels match no
/// budget and are not returned, as in Volcano.
fn within_budgets(ssn: &SessionState, tasks: &[TaskId]) -> Vec<TaskId> {
    let pdbs = &ssn.snap.pdbs;
    let mut allowed: Vec<i32> = pdbs.iter().map(|p| p.status.disruptions_allowed).collect();
    let mut victims = Vec::new();
    for &t in tasks {
        let pod = &ssn.snap.tasks.pod[t.idx()];
        if pod.metadata.labels.is_empty() {
            continue;
        }
        let mut violated = false;
        for (i, pdb) in pdbs.iter().enumerate() {
            // A nil, empty or invalid selector matches nothing.
            let Ok(sel) = Selector::from_label_selector(pdb.spec.selector.as_ref()) else {
                continue;
            };
            if pdb.metadata.namespace != pod.metadata.namespace
                || sel.is_empty()
                || !sel.matches(&pod.metadata.labels)
                || pdb.status.disrupted_pods.contains_key(&pod.metadata.name)
            {
                continue;
            }
            allowed[i] -= 1;
            if allowed[i] < 0 {
                violated = true;
            }
        }
        if !violated {
            victims.push(t);
        }
    }
    victims
}

impl Plugin for Pdb {
    fn name(&self) -> &str {
        "pdb"
    }

    /// No predicate or node score: node search never depends on it.
    fn node_local(&self, _: &SessionState, _: TaskId) -> bool {
        true
    }

    fn preemptable(
        &self,
        ssn: &SessionState,
        _: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(within_budgets(ssn, candidates))
    }

    fn reclaimable(
        &self,
        ssn: &SessionState,
        _: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        Some(within_budgets(ssn, candidates))
    }

    fn victim_tasks(&self, ssn: &SessionState, tasks: &[TaskId]) -> Option<Vec<TaskId>> {
        Some(within_budgets(ssn, tasks))
    }
}

#[cfg(test)]
mod tests {
    use crate::harness::Harness;

    const CONF: &str = "actions: shuffle\ntiers:\n- plugins:\n  - name: pdb\n";

    fn manifests(allowed: i32) -> String {
        let pod = |n: &str, labels: &str| {
            format!(
                "---\nkind: Pod\nmetadata: {{name: {n}, namespace: ns, labels: {{{labels}}}, annotations: {{scheduling.k8s.io/group-name: pg}}}}\nspec: {{nodeName: n1, containers: [{{name: c, resources: {{requests: {{cpu: '1'}}}}}}]}}\nstatus: {{phase: Running}}\n"
            )
        };
        format!(
            "---\nkind: Queue\nmetadata: {{name: q}}\n---\nkind: Node\nmetadata: {{name: n1}}\nstatus: {{allocatable: {{cpu: '8', pods: '10'}}}}\n---\nkind: PodGroup\nmetadata: {{name: pg, namespace: ns}}\nspec: {{queue: q, minMember: 0}}\nstatus: {{phase: Running}}\n{}{}{}",
            pod("a", "app: web"),
            pod("b", "app: web"),
            pod("c", ""),
        ) + &format!(
            "---\nkind: PodDisruptionBudget\nmetadata: {{name: web, namespace: ns}}\nspec: {{selector: {{matchLabels: {{app: web}}}}}}\nstatus: {{disruptionsAllowed: {allowed}}}\n"
        )
    }

    fn victims(allowed: i32) -> Vec<String> {
        let mut h = Harness::new(CONF);
        h = h.manifests(&manifests(allowed));
        let ssn = h.open().unwrap();
        let s = &ssn.state.snap;
        let all: Vec<_> = ["ns/a", "ns/b", "ns/c"]
            .iter()
            .map(|k| s.task_id(k).unwrap())
            .collect();
        ssn.victim_tasks(&all)
            .into_iter()
            .map(|t| s.tasks.key(t))
            .collect()
    }

    #[test]
    fn budget_is_spent_in_task_order() {
        assert_eq!(victims(1), ["ns/a"]);
        assert_eq!(victims(2), ["ns/a", "ns/b"]);
    }

    #[test]
    fn no_budget_no_victims_and_unlabelled_pods_are_never_nominated() {
        assert!(victims(0).is_empty());
    }
}
