//! `nodegroup` (Volcano: pkg/scheduler/plugins/nodegroup/nodegroup.go): queues place their
//! jobs on groups of nodes (the node label `volcano.sh/nodegroup-name`) through the queue's
//! `spec.affinity`: required and preferred node-group affinity and anti-affinity filter and
//! score nodes, and the queue annotation `volcano.sh/nodegroup-resource-limits` (JSON group →
//! resource list) caps what the queue's running and allocated tasks may hold on each group.
//!
//! Arguments: `strict` (default true: a node without a group label is refused; false admits
//! it for queues without affinity) and `enablePreferredOrder` (preferred groups score by their
//! place in the list). With `enableHierarchy`, a queue without affinity inherits its nearest
//! ancestor's (the parent defaults to `root`).

use std::collections::{BTreeMap, BTreeSet};

use crate::api::ResourceList;
use crate::config::{ArgumentError, Arguments};
use crate::framework::{FitError, Plugin, SessionState, StatusCode};
use crate::model::{EPSILON, NodeId, QueueId, Resource, ResourceName, TaskId};

/// The node label naming a node's group.
pub const NODE_GROUP_LABEL: &str = "volcano.sh/nodegroup-name";
/// The queue annotation with per-group resource limits.
pub const RESOURCE_LIMITS_ANNOTATION: &str = "volcano.sh/nodegroup-resource-limits";
/// The queue hierarchy's root, every parentless queue's parent.
const ROOT_QUEUE: &str = "root";
/// Score of a required group; a preferred one adds half of it.
const BASE_SCORE: f64 = 100.0;

const AFFINITY_NOT_FOUND: &str = "node group affinity not specified";
const LABEL_NOT_FOUND: &str = "node group label not found";
const UNSATISFIED: &str = "node does not satisfy the node group affinity";
const LIMIT_INVALID: &str = "node group resource limit annotation invalid";
const LIMIT_EXCEEDED: &str = "node group resource limit exceeded";

/// A queue's node-group affinity, as sets of group names.
#[derive(Debug, Clone, Default, PartialEq)]
struct GroupAffinity {
    required: BTreeSet<String>,
    preferred: BTreeSet<String>,
    /// Place of each preferred group in the queue's list.
    preferred_index: BTreeMap<String, usize>,
    anti_required: BTreeSet<String>,
    anti_preferred: BTreeSet<String>,
}

impl GroupAffinity {
    fn is_empty(&self) -> bool {
        self.required.is_empty()
            && self.preferred.is_empty()
            && self.anti_required.is_empty()
            && self.anti_preferred.is_empty()
    }

    /// Affinity admits the group, required anti-affinity then refuses it, preferred
    /// anti-affinity admits it again (Volcano's order, kept as it is).
    fn admits(&self, group: &str) -> bool {
        let mut ok = self.required.contains(group) || self.preferred.contains(group);
        if self.anti_required.contains(group) {
            ok = false;
        }
        if self.anti_preferred.contains(group) {
            ok = true;
        }
        ok
    }

    /// 100 for a required group, plus 50 for a preferred one (or a share of 50 by its place
    /// when `by_order`); a preferred anti-affinity group scores -1.
    fn score(&self, group: &str, by_order: bool) -> f64 {
        let mut score = 0.0;
        if self.required.contains(group) {
            score += BASE_SCORE;
        }
        if by_order {
            if let Some(&i) = self.preferred_index.get(group) {
                let n = self.preferred_index.len() as f64;
                score += 0.5 * BASE_SCORE * (n - i as f64) / n;
            }
        } else if self.preferred.contains(group) {
            score += 0.5 * BASE_SCORE;
        }
        if self.anti_preferred.contains(group) {
            score = -1.0;
        }
        score
    }
}

/// One queue's limit on one group: the amounts and the names the annotation listed.
#[derive(Debug, Clone, PartialEq)]
struct GroupLimit {
    amounts: Resource,
    names: Vec<ResourceName>,
}

/// What the plugin keeps per queue.
#[derive(Debug, Clone)]
struct QueueAttr {
    affinity: Option<GroupAffinity>,
    /// `Err` when the annotation is not valid JSON of group → resource list.
    limits: Result<BTreeMap<String, GroupLimit>, String>,
    /// What the queue's allocated and running tasks hold on each group.
    allocated: BTreeMap<String, Resource>,
}

/// The plugin.
#[derive(Debug, Default)]
pub struct NodeGroup {
    strict: bool,
    preferred_order: bool,
    queues: Vec<QueueAttr>,
}

/// Builds the plugin from `strict` and `enablePreferredOrder`.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(NodeGroup {
        strict: args.bool("strict")?.unwrap_or(true),
        preferred_order: args.bool("enablePreferredOrder")?.unwrap_or(false),
        queues: Vec::new(),
    }))
}

fn affinity_of(queue: &crate::api::Queue) -> Option<GroupAffinity> {
    let spec = queue.spec.affinity.as_ref()?;
    let mut a = GroupAffinity::default();
    if let Some(terms) = &spec.node_group_affinity {
        let preferred = &terms.preferred_during_scheduling_ignored_during_execution;
        a.preferred.extend(preferred.iter().cloned());
        a.required.extend(
            terms
                .required_during_scheduling_ignored_during_execution
                .iter()
                .cloned(),
        );
        for (i, g) in preferred.iter().enumerate() {
            a.preferred_index.insert(g.clone(), i);
        }
    }
    if let Some(terms) = &spec.node_group_anti_affinity {
        a.anti_preferred.extend(
            terms
                .preferred_during_scheduling_ignored_during_execution
                .iter()
                .cloned(),
        );
        a.anti_required.extend(
            terms
                .required_during_scheduling_ignored_during_execution
                .iter()
                .cloned(),
        );
    }
    Some(a)
}

fn limits_of(queue: &crate::api::Queue) -> Result<BTreeMap<String, GroupLimit>, String> {
    let Some(raw) = queue
        .metadata
        .annotations
        .get(RESOURCE_LIMITS_ANNOTATION)
        .filter(|r| !r.is_empty())
    else {
        return Ok(BTreeMap::new());
    };
    let lists: BTreeMap<String, ResourceList> = serde_json::from_str(raw)
        .map_err(|e| format!("parse annotation {RESOURCE_LIMITS_ANNOTATION}: {e}"))?;
    Ok(lists
        .into_iter()
        .map(|(group, list)| {
            let limit = GroupLimit {
                amounts: Resource::from_list(&list),
                names: list.keys().map(|n| ResourceName::of(n)).collect(),
            };
            (group, limit)
        })
        .collect())
}

fn fit_error(reason: &'static str) -> FitError {
    FitError::new(StatusCode::UnschedulableAndUnresolvable, reason)
}

impl NodeGroup {
    /// The group of the node, if labelled.
    fn group(ssn: &SessionState, node: NodeId) -> Option<&str> {
        ssn.snap.nodes.labels[node.idx()]
            .get(NODE_GROUP_LABEL)
            .map(String::as_str)
    }

    fn queue_attr(&self, ssn: &SessionState, task: TaskId) -> Option<(QueueId, &QueueAttr)> {
        let q = ssn.queue_of_task(task)?;
        self.queues.get(q.idx()).map(|a| (q, a))
    }

    /// The queue's ancestors, nearest first; none when a parent is missing or the hierarchy
    /// loops (Volcano logs both and builds no hierarchy there).
    fn ancestors(ssn: &SessionState, q: QueueId) -> Vec<QueueId> {
        let queues = &ssn.snap.queues;
        let mut chain = Vec::new();
        let mut current = q;
        while queues.name[current.idx()] != ROOT_QUEUE {
            let parent = match queues.parent[current.idx()].as_str() {
                "" => ROOT_QUEUE,
                p => p,
            };
            let Some(p) = queues.id(parent) else {
                return chain;
            };
            if p == q || chain.contains(&p) {
                return Vec::new();
            }
            chain.push(p);
            current = p;
        }
        chain
    }

    /// Adds (`sign` 1) or takes away (-1) the task's request on its node's group, for its
    /// queue.
    fn book(&mut self, ssn: &SessionState, task: TaskId, sign: f64) {
        let Some(node) = ssn.tasks.node[task] else {
            return;
        };
        let (Some(group), Some(q)) = (Self::group(ssn, node), ssn.queue_of_task(task)) else {
            return;
        };
        let Some(attr) = self.queues.get_mut(q.idx()) else {
            return;
        };
        let request = ssn.resreq(task);
        match attr.allocated.get_mut(group) {
            Some(held) if sign < 0.0 => {
                held.sub(request);
            }
            Some(held) => {
                held.add(request);
            }
            None if sign > 0.0 => {
                attr.allocated.insert(group.to_string(), request.clone());
            }
            None => {}
        }
    }

    /// Whether the task fits the queue's limit on `group` (every limited dimension, beyond ε).
    fn within_limit(attr: &QueueAttr, ssn: &SessionState, task: TaskId, group: &str) -> bool {
        let Ok(limits) = &attr.limits else {
            return false;
        };
        let Some(limit) = limits.get(group) else {
            return true;
        };
        let mut future = attr.allocated.get(group).cloned().unwrap_or_default();
        future.add(ssn.resreq(task));
        limit.names.iter().all(|&name| {
            let (used, cap) = (future.get(name), limit.amounts.get(name));
            !(used > cap && used - cap >= EPSILON)
        })
    }
}

impl Plugin for NodeGroup {
    fn name(&self) -> &str {
        "nodegroup"
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        let queues = &ssn.snap.queues;
        self.queues = queues
            .ids()
            .map(|q| {
                let queue = &queues.object[q.idx()];
                QueueAttr {
                    affinity: affinity_of(queue),
                    limits: limits_of(queue),
                    allocated: BTreeMap::new(),
                }
            })
            .collect();
        if ssn.config.hierarchy_enabled(self.name()) {
            for q in queues.ids() {
                if self.queues[q.idx()].affinity.is_some() {
                    continue;
                }
                let inherited = Self::ancestors(ssn, q)
                    .into_iter()
                    .find_map(|a| self.queues[a.idx()].affinity.clone());
                self.queues[q.idx()].affinity = inherited;
            }
        }
        let placed: Vec<TaskId> = (0..ssn.snap.tasks.len() as u32)
            .map(TaskId)
            .filter(|t| ssn.job_of(*t).is_some() && ssn.tasks.status[t].is_allocated())
            .collect();
        for t in placed {
            self.book(ssn, t, 1.0);
        }
    }

    fn on_session_close(&mut self, _: &mut SessionState) {
        self.queues.clear();
    }

    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        let attr = self.queue_attr(ssn, task).map(|(_, a)| a);
        if attr.is_some_and(|a| a.limits.is_err()) {
            return Err(fit_error(LIMIT_INVALID));
        }
        let affinity = attr
            .and_then(|a| a.affinity.as_ref())
            .filter(|a| !a.is_empty());
        let Some(group) = Self::group(ssn, node) else {
            if !self.strict && affinity.is_none() {
                return Ok(());
            }
            return Err(fit_error(LABEL_NOT_FOUND));
        };
        let (Some(affinity), Some(attr)) = (affinity, attr) else {
            return Err(fit_error(AFFINITY_NOT_FOUND));
        };
        if !affinity.admits(group) {
            return Err(fit_error(UNSATISFIED));
        }
        if !Self::within_limit(attr, ssn, task, group) {
            return Err(fit_error(LIMIT_EXCEEDED));
        }
        Ok(())
    }

    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        let score = match (Self::group(ssn, node), self.queue_attr(ssn, task)) {
            (Some(group), Some((_, attr))) => attr
                .affinity
                .as_ref()
                .map_or(0.0, |a| a.score(group, self.preferred_order)),
            _ => 0.0,
        };
        Some(Ok(score))
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        self.book(ssn, task, 1.0);
        Ok(())
    }

    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        self.book(ssn, task, -1.0);
    }
}

#[cfg(test)]
mod tests {
    use crate::framework::Session;
    use crate::harness::Harness;
    use crate::harness::find::{node_id, task};

    fn conf(args: &str, hierarchy: bool) -> String {
        format!(
            "actions: allocate\ntiers:\n- plugins:\n  - name: nodegroup\n    enableHierarchy: {hierarchy}\n    arguments: {{{args}}}\n"
        )
    }

    fn nodes() -> String {
        ["group1", "group2", "group3"]
            .iter()
            .enumerate()
            .map(|(i, g)| {
                format!(
                    "- {{kind: Node, metadata: {{name: n{}, labels: {{volcano.sh/nodegroup-name: {g}}}}}, status: {{allocatable: {{cpu: '16', memory: 64Gi, pods: '32'}}}}}}\n",
                    i + 1
                )
            })
            .collect::<String>()
            + "- {kind: Node, metadata: {name: plain}, status: {allocatable: {cpu: '16', memory: 64Gi, pods: '32'}}}\n"
    }

    /// A queue; `metadata` and `spec` are YAML flow-map bodies.
    fn queue(name: &str, metadata: &str, spec: &str) -> String {
        format!(
            "- {{kind: Queue, metadata: {{name: {name}, {metadata}}}, spec: {{{spec}}}, status: {{state: Open}}}}\n"
        )
    }

    fn pod(name: &str, queue: &str, node: Option<&str>) -> String {
        let placed = node.map_or(String::new(), |n| format!(", nodeName: {n}"));
        let phase = if node.is_some() { "Running" } else { "Pending" };
        format!(
            "- {{kind: PodGroup, metadata: {{name: {name}, namespace: ns}}, spec: {{queue: {queue}}}, status: {{phase: Running}}}}\n- {{kind: Pod, metadata: {{name: {name}, namespace: ns, annotations: {{scheduling.k8s.io/group-name: {name}}}}}, spec: {{containers: [{{resources: {{requests: {{cpu: '2', memory: 4Gi}}}}}}]{placed}}}, status: {{phase: {phase}}}}}\n"
        )
    }

    fn session(conf: &str, objects: &str) -> Session {
        Harness::new(conf)
            .manifests(&(nodes() + objects))
            .open()
            .expect("session")
    }

    fn outcome(ssn: &Session, pod: &str, node: &str) -> String {
        match ssn.predicate(task(ssn, pod), node_id(ssn, node)) {
            Ok(()) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    const AFFINITY: &str = "affinity: {nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [group1], preferredDuringSchedulingIgnoredDuringExecution: [group2]}, nodeGroupAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [group3]}}";

    #[test]
    fn groups_the_affinity_names_pass_and_score_and_an_unlabelled_node_fails() {
        let ssn = session(
            &conf("", false),
            &(queue("q", "", AFFINITY) + &pod("p", "q", None)),
        );
        let p = task(&ssn, "ns/p");
        let scores: Vec<f64> = ["n1", "n2", "n3", "plain"]
            .iter()
            .map(|n| ssn.node_order(p, node_id(&ssn, n)))
            .collect();
        assert_eq!(scores, [100.0, 50.0, -1.0, 0.0]);
        assert_eq!(
            outcome(&ssn, "ns/p", "n3"),
            "ok",
            "anti-preferred still admits"
        );
        assert_eq!(outcome(&ssn, "ns/p", "plain"), "node group label not found");
    }

    #[test]
    fn without_affinity_labelled_nodes_fail_and_unlabelled_ones_pass_only_when_not_strict() {
        let objects = queue("q", "", "") + &pod("p", "q", None);
        let strict = session(&conf("", false), &objects);
        assert_eq!(
            outcome(&strict, "ns/p", "n1"),
            "node group affinity not specified"
        );
        assert_eq!(
            outcome(&strict, "ns/p", "plain"),
            "node group label not found"
        );
        let lenient = session(&conf("strict: false", false), &objects);
        assert_eq!(outcome(&lenient, "ns/p", "plain"), "ok");
    }

    #[test]
    fn a_queue_inherits_its_nearest_ancestors_affinity_with_the_hierarchy_on() {
        let objects = queue("root", "", AFFINITY)
            + &queue("mid", "", "parent: root")
            + &queue("leaf", "", "parent: mid")
            + &pod("p", "leaf", None);
        let on = session(&conf("", true), &objects);
        assert_eq!(outcome(&on, "ns/p", "n1"), "ok");
        let off = session(&conf("", false), &objects);
        assert_eq!(
            outcome(&off, "ns/p", "n1"),
            "node group affinity not specified"
        );
    }

    #[test]
    fn preferred_order_scores_earlier_groups_higher() {
        let spec = "affinity: {nodeGroupAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [group1, group2]}}";
        let ssn = session(
            &conf("enablePreferredOrder: true", false),
            &(queue("q", "", spec) + &pod("p", "q", None)),
        );
        let p = task(&ssn, "ns/p");
        assert_eq!(ssn.node_order(p, node_id(&ssn, "n1")), 50.0);
        assert_eq!(ssn.node_order(p, node_id(&ssn, "n2")), 25.0);
    }

    #[test]
    fn the_group_limit_counts_running_tasks_and_allocations_of_the_session() {
        let limits =
            "annotations: {volcano.sh/nodegroup-resource-limits: '{\"group1\":{\"cpu\":\"5\"}}'}";
        let spec = "affinity: {nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [group1, group2]}}";
        let objects = queue("q", limits, spec)
            + &pod("running", "q", Some("n1"))
            + &pod("a", "q", None)
            + &pod("b", "q", None);
        let mut ssn = session(&conf("", false), &objects);
        assert_eq!(outcome(&ssn, "ns/a", "n1"), "ok", "2 + 2 of 5 cpus");
        let (a, n1) = (task(&ssn, "ns/a"), node_id(&ssn, "n1"));
        let mut stmt = crate::framework::Statement::new();
        stmt.allocate(&mut ssn, a, n1).unwrap();
        assert_eq!(
            outcome(&ssn, "ns/b", "n1"),
            "node group resource limit exceeded"
        );
        assert_eq!(outcome(&ssn, "ns/b", "n2"), "ok", "no limit on group2");
        stmt.discard(&mut ssn);
        assert_eq!(
            outcome(&ssn, "ns/b", "n1"),
            "ok",
            "the allocation was taken back"
        );
    }

    #[test]
    fn an_invalid_limit_annotation_fails_every_node() {
        let limits = "annotations: {volcano.sh/nodegroup-resource-limits: 'not json'}";
        let ssn = session(
            &conf("", false),
            &(queue("q", limits, AFFINITY) + &pod("p", "q", None)),
        );
        assert_eq!(
            outcome(&ssn, "ns/p", "n1"),
            "node group resource limit annotation invalid"
        );
    }
}
