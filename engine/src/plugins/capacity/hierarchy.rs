//! Capacity with hierarchy: every queue is modelled under the `root` queue (`spec.parent`,
//! empty meaning root). Usage is booked on a job's queue and all its ancestors; limits flow
//! down from the root: an unset capability dimension is inherited from the parent and each
//! child's real capability is what its parent can give once the siblings' guarantees are set
//! aside.

use super::attrs::QueueAttr;
use crate::framework::SessionState;
use crate::model::{DimDefault, QueueId, Resource};
use crate::plugins::queue_usage::QueueUsage;

/// Name of the queue at the top of the hierarchy.
pub(super) const ROOT: &str = "root";

/// A hierarchy that cannot be scheduled; the plugin then refuses every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Broken {
    NoRoot,
    UnknownParent { queue: String, parent: String },
    Cycle(String),
    JobInInnerQueue { job: String, queue: String },
}

/// The queue hierarchy: attributes of every queue (indexed by id) and the root.
#[derive(Debug)]
pub(super) struct Hierarchy {
    pub attrs: Vec<Option<QueueAttr>>,
    pub root: QueueId,
}

/// The ancestors of `q`, root first. Volcano's own cycle check never fires (it only walks
/// queues it has not seen yet); tephra refuses a cycle instead of scheduling with a partial
/// ancestor list.
fn ancestors(ssn: &SessionState, q: QueueId, root: QueueId) -> Result<Vec<QueueId>, Broken> {
    let queues = &ssn.snap.queues;
    let mut chain = Vec::new();
    let mut cur = q;
    while cur != root {
        let name = &queues.parent[cur.idx()];
        let parent_name = if name.is_empty() { ROOT } else { name.as_str() };
        let parent = queues
            .id(parent_name)
            .ok_or_else(|| Broken::UnknownParent {
                queue: queues.name[cur.idx()].clone(),
                parent: parent_name.to_string(),
            })?;
        if parent == q || chain.contains(&parent) {
            return Err(Broken::Cycle(queues.name[q.idx()].clone()));
        }
        chain.push(parent);
        cur = parent;
    }
    chain.reverse();
    Ok(chain)
}

fn new_attr(ssn: &SessionState, q: QueueId) -> QueueAttr {
    let queues = &ssn.snap.queues;
    QueueAttr {
        deserved: queues.deserved[q.idx()].clone().unwrap_or_default(),
        capability: queues.capability[q.idx()].clone().unwrap_or_default(),
        guarantee: queues.guarantee[q.idx()].clone().unwrap_or_default(),
        ..Default::default()
    }
}

/// Builds the hierarchy, or says why it is broken.
pub(super) fn build(ssn: &SessionState) -> Result<Hierarchy, Broken> {
    let queues = &ssn.snap.queues;
    let root = queues.id(ROOT).ok_or(Broken::NoRoot)?;
    let mut attrs: Vec<QueueAttr> = queues.ids().map(|q| new_attr(ssn, q)).collect();
    for q in queues.ids() {
        let chain = ancestors(ssn, q, root)?;
        if let Some(&parent) = chain.last() {
            attrs[parent.idx()].children.push(q);
        }
        attrs[q.idx()].ancestors = chain;
    }
    for j in ssn.snap.jobs.ids() {
        let q = ssn.snap.jobs.queue[j.idx()];
        if !attrs[q.idx()].is_leaf() {
            return Err(Broken::JobInInnerQueue {
                job: ssn.snap.jobs.uid[j.idx()].to_string(),
                queue: queues.name[q.idx()].clone(),
            });
        }
        let usage = QueueUsage::of_job(ssn, j);
        attrs[q.idx()].usage.add(&usage);
        for a in attrs[q.idx()].ancestors.clone() {
            attrs[a.idx()].usage.add(&usage);
        }
    }
    let top = &mut attrs[root.idx()];
    if top.capability.is_empty() {
        // The root is not a user limit: jobs may ask for more than the cluster has now.
        let mut unlimited = Resource::infinite();
        for (d, _) in ssn.snap.total.scalars() {
            unlimited.set_scalar(d, i64::MAX as f64);
        }
        top.capability = unlimited;
    }
    top.real_capability = top.capability.clone();
    distribute_limits(&mut attrs, root);
    for attr in &mut attrs {
        attr.update_share();
    }
    Ok(Hierarchy {
        attrs: attrs.into_iter().map(Some).collect(),
        root,
    })
}

/// Volcano's `checkHierarchicalQueue`, parents before children: raises each child's deserved
/// to its guarantee, fills in the child's unset capability dimensions from the parent, makes
/// the root's deserved and guarantee the sums of its children's, and derives each child's
/// real capability. Misconfigurations (children asking for more than the parent) are
/// tolerated, as in Volcano, which only logs them.
fn distribute_limits(attrs: &mut [QueueAttr], root: QueueId) {
    let mut pending = vec![root];
    while let Some(p) = pending.pop() {
        let children = attrs[p.idx()].children.clone();
        let parent_capability = attrs[p.idx()].capability.clone();
        let mut total_deserved = Resource::empty();
        let mut total_guarantee = Resource::empty();
        for &c in &children {
            let child = &mut attrs[c.idx()];
            child.deserved = Resource::max_of(&child.deserved, &child.guarantee);
            total_deserved.add(&child.deserved);
            total_guarantee.add(&child.guarantee);
            if child.capability.milli_cpu <= 0.0 {
                child.capability.milli_cpu = parent_capability.milli_cpu;
            }
            if child.capability.memory <= 0.0 {
                child.capability.memory = parent_capability.memory;
            }
            for (d, v) in parent_capability.scalars() {
                if child.capability.scalar(d).is_none() {
                    child.capability.set_scalar(d, v);
                }
            }
        }
        if p == root {
            attrs[p.idx()].guarantee = total_guarantee.clone();
            attrs[p.idx()].deserved = total_deserved;
        }
        let available = attrs[p.idx()]
            .real_capability
            .exceeded_part(&total_guarantee);
        for &c in &children {
            let child = &mut attrs[c.idx()];
            let mut real = available.plus(&child.guarantee);
            real.min_dimension(&child.capability, DimDefault::Infinity);
            child.real_capability = real;
        }
        pending.extend(children);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{ALLOCATE_ONLY, session};

    const QUEUES: &str = r#"
kind: Queue
metadata: {name: root}
---
kind: Queue
metadata: {name: a}
spec: {capability: {memory: 4Gi, nvidia.com/gpu: 4}, guarantee: {resource: {cpu: 1}}, deserved: {cpu: 2}}
---
kind: Queue
metadata: {name: a1}
spec: {parent: a, capability: {memory: 2Gi}, guarantee: {resource: {cpu: 3}}}
---
kind: Queue
metadata: {name: a2}
spec: {parent: a}
---
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: 8, memory: 8Gi, nvidia.com/gpu: 8, pods: 10}}
"#;

    fn hierarchy(extra: &str) -> Result<Hierarchy, Broken> {
        let ssn = session(ALLOCATE_ONLY, &format!("{QUEUES}{extra}"));
        build(&ssn.state)
    }

    fn attr(h: &Hierarchy, q: u32) -> &QueueAttr {
        h.attrs[q as usize].as_ref().unwrap()
    }

    #[test]
    fn children_inherit_unset_capability_from_their_parent() {
        let h = hierarchy("").unwrap();
        // Queues sort by name: a=0, a1=1, a2=2, root=3.
        let a1 = attr(&h, 1);
        assert_eq!(a1.capability.memory, 2.0 * 1024.0 * 1024.0 * 1024.0);
        assert_eq!(
            a1.capability.milli_cpu,
            f64::MAX,
            "root is unlimited and a sets no cpu"
        );
        assert_eq!(
            a1.capability
                .scalar(crate::model::Dim::of("nvidia.com/gpu")),
            Some(4000.0)
        );
        assert_eq!(attr(&h, 1).ancestors, [QueueId(3), QueueId(0)]);
        assert_eq!(attr(&h, 0).children, [QueueId(1), QueueId(2)]);
    }

    #[test]
    fn real_capability_sets_sibling_guarantees_aside() {
        let h = hierarchy("").unwrap();
        let root = attr(&h, 3);
        assert_eq!(
            root.guarantee.milli_cpu, 1000.0,
            "root guarantee is the sum of its children's"
        );
        assert_eq!(
            root.deserved.milli_cpu, 2000.0,
            "root deserved is the sum of its children's"
        );
        assert_eq!(attr(&h, 0).real_capability.milli_cpu, f64::MAX);
        // a1 and a2 share a: a's real capability less a1's guarantee, plus their own.
        assert_eq!(
            attr(&h, 1).deserved.milli_cpu,
            3000.0,
            "deserved raised to the guarantee"
        );
        assert_eq!(
            attr(&h, 2).real_capability.memory,
            4.0 * 1024.0 * 1024.0 * 1024.0
        );
    }

    #[test]
    fn unknown_parent_breaks_the_hierarchy() {
        let extra = "---\nkind: Queue\nmetadata: {name: orphan}\nspec: {parent: nowhere}\n";
        assert_eq!(
            hierarchy(extra).unwrap_err(),
            Broken::UnknownParent {
                queue: "orphan".into(),
                parent: "nowhere".into()
            }
        );
    }

    #[test]
    fn parent_cycle_breaks_the_hierarchy() {
        let extra = "---\nkind: Queue\nmetadata: {name: qx}\nspec: {parent: qy}\n---\nkind: Queue\nmetadata: {name: qy}\nspec: {parent: qx}\n";
        assert!(matches!(hierarchy(extra).unwrap_err(), Broken::Cycle(_)));
    }

    #[test]
    fn job_in_an_inner_queue_breaks_the_hierarchy() {
        let extra = "---\nkind: PodGroup\nmetadata: {name: pg, namespace: ns}\nspec: {queue: a}\n";
        assert!(matches!(
            hierarchy(extra).unwrap_err(),
            Broken::JobInInnerQueue { .. }
        ));
    }

    #[test]
    fn usage_is_booked_on_the_queue_and_its_ancestors() {
        let extra = r#"---
kind: PodGroup
metadata: {name: pg, namespace: ns}
spec: {queue: a2}
status: {phase: Running}
---
kind: Pod
metadata: {name: p, namespace: ns, annotations: {scheduling.k8s.io/group-name: pg}}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: 1}}}]}
status: {phase: Running}
"#;
        let h = hierarchy(extra).unwrap();
        for q in [0, 2, 3] {
            assert_eq!(attr(&h, q).usage.allocated.milli_cpu, 1000.0, "queue {q}");
        }
        assert_eq!(attr(&h, 1).usage.allocated.milli_cpu, 0.0);
    }
}
