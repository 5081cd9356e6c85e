//! A job's task topology as its PodGroup annotations state it (Volcano:
//! pkg/scheduler/plugins/task-topology/topology.go, readTopologyFromPgAnnotations).

use std::collections::BTreeSet;

use crate::api::{Pod, StringMap};

/// Groups of task names to keep together: `a,b;c` is `[[a, b], [c]]`.
pub const AFFINITY_ANNOTATION: &str = "volcano.sh/task-topology-affinity";
/// Groups of task names to keep apart, written as the affinity.
pub const ANTI_AFFINITY_ANNOTATION: &str = "volcano.sh/task-topology-anti-affinity";
/// Task names in the order their tasks should be placed: `a,b`.
pub const TASK_ORDER_ANNOTATION: &str = "volcano.sh/task-topology-task-order";
/// The pod annotation (and, for the role check, label) naming the job task a pod belongs to.
pub const TASK_SPEC_KEY: &str = "volcano.sh/task-spec";

/// A job's affinity, anti-affinity and task order, as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskTopology {
    pub affinity: Vec<Vec<String>>,
    pub anti_affinity: Vec<Vec<String>>,
    pub task_order: Vec<String>,
}

/// The task name the plugin buckets a pod by: its `volcano.sh/task-spec` annotation only
/// (Volcano: util.go, getTaskName).
pub fn task_name(pod: &Pod) -> &str {
    pod.metadata
        .annotations
        .get(TASK_SPEC_KEY)
        .map_or("", String::as_str)
}

/// The pod's role as the job's task list knows it: the non-empty annotation, else the
/// non-empty label (Volcano: pkg/scheduler/api/job_info.go, getTaskRole).
fn task_role(pod: &Pod) -> &str {
    let meta = &pod.metadata;
    [&meta.annotations, &meta.labels]
        .into_iter()
        .filter_map(|m| m.get(TASK_SPEC_KEY))
        .find(|v| !v.is_empty())
        .map_or("", String::as_str)
}

/// Refuses a group naming a task no pod of the job plays, or one task twice; empty names are
/// passed over (Volcano: topology.go, affinityCheck).
fn check_groups(roles: &BTreeSet<&str>, groups: &[Vec<String>]) -> Result<(), String> {
    for group in groups {
        let mut seen = BTreeSet::new();
        for name in group.iter().filter(|n| !n.is_empty()) {
            if !roles.contains(name.as_str()) {
                return Err(format!("task {name} does not exist in the job"));
            }
            if !seen.insert(name.as_str()) {
                return Err(format!("task {name} is duplicate in the job"));
            }
        }
    }
    Ok(())
}

/// `a,b;c` as groups of names.
fn split_groups(text: &str) -> Vec<Vec<String>> {
    text.split(';')
        .map(|g| g.split(',').map(str::to_string).collect())
        .collect()
}

/// Reads the job's topology from its PodGroup's annotations; `Ok(None)` when it has none of
/// them, `Err` when one names a task the job lacks or repeats one (Volcano skips such a job).
pub fn read_topology<'a>(
    annotations: &StringMap,
    pods: impl Iterator<Item = &'a Pod>,
) -> Result<Option<TaskTopology>, String> {
    let affinity = annotations.get(AFFINITY_ANNOTATION);
    let anti_affinity = annotations.get(ANTI_AFFINITY_ANNOTATION);
    let task_order = annotations.get(TASK_ORDER_ANNOTATION);
    if affinity.is_none() && anti_affinity.is_none() && task_order.is_none() {
        return Ok(None);
    }
    let roles: BTreeSet<&str> = pods.map(task_role).collect();
    let mut topology = TaskTopology::default();
    if let Some(text) = affinity {
        topology.affinity = split_groups(text);
        check_groups(&roles, &topology.affinity)?;
    }
    if let Some(text) = anti_affinity {
        topology.anti_affinity = split_groups(text);
        check_groups(&roles, &topology.anti_affinity)?;
    }
    if let Some(text) = task_order {
        topology.task_order = text.split(',').map(str::to_string).collect();
        check_groups(&roles, std::slice::from_ref(&topology.task_order))?;
    }
    Ok(Some(topology))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(role: &str) -> Pod {
        let mut p = Pod::default();
        p.metadata
            .annotations
            .insert(TASK_SPEC_KEY.into(), role.into());
        p
    }

    fn read(pairs: &[(&str, &str)]) -> Result<Option<TaskTopology>, String> {
        let ann: StringMap = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let pods = [pod("ps"), pod("worker")];
        read_topology(&ann, pods.iter())
    }

    #[test]
    fn groups_split_on_semicolons_and_commas() {
        let t = read(&[(AFFINITY_ANNOTATION, "ps,worker;worker")])
            .unwrap()
            .unwrap();
        assert_eq!(t.affinity, [vec!["ps", "worker"], vec!["worker"]]);
        assert!(t.anti_affinity.is_empty());
    }

    #[test]
    fn a_job_without_the_annotations_has_no_topology() {
        assert_eq!(read(&[]).unwrap(), None);
    }

    #[test]
    fn unknown_or_repeated_tasks_are_refused() {
        assert!(read(&[(ANTI_AFFINITY_ANNOTATION, "ps,chief")]).is_err());
        assert!(read(&[(TASK_ORDER_ANNOTATION, "ps,ps")]).is_err());
        assert!(read(&[(TASK_ORDER_ANNOTATION, "worker,,ps")]).is_ok());
    }
}
