//! `numa-aware` (Volcano: pkg/scheduler/plugins/numaaware/numaaware.go): places Guaranteed pods
//! whose CPUs the kubelet's static CPU manager will pin so that the kubelet's topology manager
//! will admit them. The node's `Numatopology` gives its policies, CPU topology and free CPUs;
//! for a pod asking for a NUMA policy (`volcano.sh/numa-topology-policy`) a node must run the
//! static CPU manager under that very topology policy, and every container must be admitted
//! by the policy with the CPUs still free there. The CPUs chosen are booked on the node when
//! the task is allocated, so later tasks of the session see them taken; nodes are scored by how
//! few NUMA nodes the task's CPUs span. At close the CPUs of the tasks still placed are left
//! for the cache, which keeps them taken until the node's Numatopology reports the pod
//! (`Snapshot::numa_held`).
//!
//! Argument: `weight` (default 1) multiplies the node score.

mod cpu_assignment;
mod cpu_manager;
mod cpu_set;
mod cpu_topology;
mod go_sort;
mod node_numa;
mod numa_mask;
mod policy;
mod qos;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard};

use crate::config::{ArgumentError, Arguments};
use crate::framework::{FitError, NumaBooking, Plugin, SessionState, StatusCode};
use crate::model::{NodeId, TaskId};
use cpu_set::CpuSet;
use node_numa::{NodeNuma, ResourceSets};
use numa_mask::NumaMask;
use policy::Policy;

/// The pod annotation naming the NUMA policy a pod asks for.
pub const NUMA_POLICY_KEY: &str = "volcano.sh/numa-topology-policy";
/// The weight argument.
pub const WEIGHT_KEY: &str = "weight";
/// The highest node score.
const MAX_NODE_SCORE: i64 = 100;

/// The plugin's session state.
#[derive(Debug, Default)]
pub struct NumaAware {
    weight: i64,
    /// Per node (by id), its NUMA view; `None` without a Numatopology.
    nodes: Vec<Option<NodeNuma>>,
    /// Per node, the sets still free this session.
    free: Vec<Option<ResourceSets>>,
    /// Per task, the sets its predicate chose on each node it passed there; kept for the
    /// session, as Volcano keeps them, and booked when the task is allocated.
    chosen: Mutex<HashMap<TaskId, BTreeMap<NodeId, ResourceSets>>>,
    /// The tasks whose chosen sets are booked, and where.
    booked: BTreeMap<TaskId, NodeId>,
}

/// Builds the plugin from `weight`.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(NumaAware {
        weight: args.int(WEIGHT_KEY)?.unwrap_or(1),
        ..NumaAware::default()
    }))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The NUMA policy the task's pod asks for, if any (`none` asks for none).
fn task_policy(ssn: &SessionState, t: TaskId) -> Option<&str> {
    ssn.snap.tasks.pod[t.idx()]
        .metadata
        .annotations
        .get(NUMA_POLICY_KEY)
        .map(String::as_str)
        .filter(|p| !p.is_empty() && *p != "none")
}

/// Whether the plugin places the task on a node: `Ok(true)` yes, `Ok(false)` it stays out of
/// the way, `Err` the node is refused (Volcano: numaaware.go, filterNodeByPolicy).
fn applies(
    policy: Option<&str>,
    numa: Option<&NodeNuma>,
    free: Option<&ResourceSets>,
) -> Result<bool, String> {
    let Some(policy) = policy else {
        return Ok(numa.is_some_and(|n| {
            n.cpu_manager_policy == "static"
                && !n.topology_policy.is_empty()
                && n.topology_policy != "none"
        }));
    };
    let numa = numa.ok_or("numa info is empty")?;
    if numa.cpu_manager_policy != "static" {
        return Err("cpu manager policy isn't static".into());
    }
    if policy != numa.topology_policy {
        return Err(format!(
            "task topology policy[{policy}] is different with node[{}]",
            numa.topology_policy
        ));
    }
    if free.and_then(|f| f.get("cpu")).is_none_or(CpuSet::is_empty) {
        return Err("cpu allocatable map is empty".into());
    }
    Ok(true)
}

impl NumaAware {
    /// Books (`take`) or gives back the sets the task's predicate chose on its node.
    fn book(&mut self, ssn: &SessionState, task: TaskId, take: bool) {
        let Some(node) = ssn.tasks.node[task] else {
            return;
        };
        let chosen = self.chosen.get_mut().unwrap_or_else(|e| e.into_inner());
        let Some(sets) = chosen.get(&task).and_then(|c| c.get(&node)) else {
            return;
        };
        if take {
            self.booked.insert(task, node);
        } else {
            self.booked.remove(&task);
        }
        let Some(free) = self.free[node.idx()].as_mut() else {
            return;
        };
        for (name, set) in sets {
            if let Some(f) = free.get_mut(name) {
                if take {
                    f.retain(|c| !set.contains(c));
                } else {
                    f.extend(set);
                }
            }
        }
    }
}

impl Plugin for NumaAware {
    fn name(&self) -> &str {
        "numa-aware"
    }

    /// Reads every node's Numatopology (by the node's name), less what pods it does not
    /// report yet still hold (Volcano: pkg/scheduler/api/node_info.go,
    /// RefreshNumaSchedulerInfoByCrd).
    fn on_session_open(&mut self, ssn: &SessionState) {
        let by_name: BTreeMap<&str, NodeNuma> = ssn
            .snap
            .numatopologies
            .iter()
            .map(|t| (t.metadata.name.as_str(), NodeNuma::from_object(t)))
            .collect();
        self.nodes = ssn
            .snap
            .nodes
            .name
            .iter()
            .map(|n| by_name.get(n.as_str()).cloned())
            .collect();
        let held = &ssn.snap.numa_held;
        self.free = self
            .nodes
            .iter()
            .zip(&ssn.snap.nodes.name)
            .map(|(numa, name)| {
                let mut free = numa.as_ref()?.allocatable.clone();
                for (resource, taken) in held.get(name.as_str()).into_iter().flatten() {
                    if let Some(f) = free.get_mut(resource) {
                        f.retain(|c| !taken.contains(c));
                    }
                }
                Some(free)
            })
            .collect();
    }

    /// Leaves the sets of the tasks still placed for the cache (Volcano: numaaware.go,
    /// OnSessionClose).
    fn on_session_close(&mut self, ssn: &mut SessionState) {
        let chosen = self.chosen.get_mut().unwrap_or_else(|e| e.into_inner());
        let tasks = &ssn.snap.tasks;
        let bookings: Vec<NumaBooking> = self
            .booked
            .iter()
            .filter_map(|(&t, &n)| {
                Some(NumaBooking {
                    namespace: tasks.namespace[t.idx()].clone(),
                    name: tasks.name[t.idx()].clone(),
                    uid: tasks.uid[t.idx()].clone(),
                    node: ssn.snap.nodes.name[n.idx()].clone(),
                    sets: chosen.get(&t)?.get(&n)?.clone(),
                })
            })
            .collect();
        ssn.numa_bookings.extend(bookings);
    }

    /// Guaranteed pods only: the node must suit the pod's policy, and the node's policy must
    /// admit every container with the CPUs left by the ones before it; the CPUs chosen are
    /// remembered for the score and for booking at allocation.
    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        let pod = &ssn.snap.tasks.pod[task.idx()];
        if !qos::is_guaranteed(pod) {
            return Ok(());
        }
        let (numa, free) = (
            self.nodes[node.idx()].as_ref(),
            self.free[node.idx()].as_ref(),
        );
        match applies(task_policy(ssn, task), numa, free) {
            Err(reason) => return Err(FitError::new(StatusCode::Error, reason)),
            Ok(false) => return Ok(()),
            Ok(true) => {}
        }
        let (Some(numa), Some(free)) = (numa, free) else {
            return Ok(());
        };
        let mut left = free.clone();
        let policy = Policy::named(&numa.topology_policy);
        let numa_nodes = numa.numa_nodes();
        let mut cpus = CpuSet::new();
        for container in &pod.spec.containers {
            let hints = cpu_manager::hints(container, numa, left.get("cpu"));
            let (best, admitted) = policy.admit(&numa_nodes, &[hints]);
            if !admitted {
                return Err(FitError::new(
                    StatusCode::UnschedulableAndUnresolvable,
                    format!("container {} cannot be assigned by numa", container.name),
                ));
            }
            let taken = cpu_manager::allocate(container, &best, numa, left.get("cpu"));
            let rest = left.entry("cpu".into()).or_default();
            rest.retain(|c| !taken.contains(c));
            cpus.extend(taken);
        }
        lock(&self.chosen)
            .entry(task)
            .or_default()
            .insert(node, ResourceSets::from([("cpu".into(), cpus)]));
        Ok(())
    }

    /// For a pod with a NUMA policy the plugin placed: fewer NUMA nodes spanned scores higher,
    /// 100 for the fewest, × `weight` (Volcano: numaaware.go, batchNodeOrderFn).
    fn batch_node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Option<Result<Vec<f64>, String>> {
        task_policy(ssn, task)?;
        let chosen = lock(&self.chosen);
        let on = chosen.get(&task)?;
        let spans: Vec<i64> = nodes
            .iter()
            .map(|n| {
                let Some(cpus) = on.get(n).and_then(|s| s.get("cpu")) else {
                    return 0;
                };
                let details = self.nodes[n.idx()].as_ref().map(|n| &n.topology.details);
                let numa_of = |c: i32| details.map_or(0, |d| d.numa_of(c));
                i64::from(NumaMask::of(cpus.iter().map(|&c| numa_of(c))).count())
            })
            .collect();
        let most = spans.iter().copied().max().unwrap_or(0);
        let scores = spans
            .iter()
            .map(|&s| {
                let fewer = if most == 0 {
                    MAX_NODE_SCORE
                } else {
                    MAX_NODE_SCORE - MAX_NODE_SCORE * s / most
                };
                (fewer * self.weight) as f64
            })
            .collect();
        Some(Ok(scores))
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        self.book(ssn, task, true);
        Ok(())
    }

    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        self.book(ssn, task, false);
    }
}

#[cfg(test)]
mod tests {
    use crate::framework::{Session, Statement, StatusCode};
    use crate::harness::find::{node_id, task};
    use crate::harness::objects::{JOB, node};
    use crate::harness::session;

    const CONF: &str = "actions: allocate\ntiers:\n- plugins:\n  - name: numa-aware\n";

    /// A Numatopology for `name`: two NUMA nodes (one socket each) of four single-thread
    /// cores, CPUs 0-3 and 4-7, under the static CPU manager and `policy`, `free` allocatable.
    fn numatopology(name: &str, policy: &str, free: &str) -> String {
        let cpus: Vec<String> = (0..8)
            .map(|c| format!("'{c}': {{numa: {}, socket: {}, core: {c}}}", c / 4, c / 4))
            .collect();
        format!(
            "- {{kind: Numatopology, metadata: {{name: {name}}}, spec: {{policies: {{CPUManagerPolicy: static, TopologyManagerPolicy: {policy}}}, numares: {{cpu: {{allocatable: '{free}', capacity: 8}}}}, cpuDetail: {{{}}}}}}}\n",
            cpus.join(", ")
        )
    }

    /// A Guaranteed pending pod of `cpus` whole CPUs asking for `policy`.
    fn pod(name: &str, cpus: u32, policy: &str) -> String {
        format!(
            "- {{kind: Pod, metadata: {{name: {name}, namespace: ns, uid: {name}, annotations: {{scheduling.k8s.io/group-name: pg, volcano.sh/numa-topology-policy: {policy}}}}}, spec: {{containers: [{{name: c, resources: {{requests: {{cpu: '{cpus}', memory: 1Gi}}, limits: {{cpu: '{cpus}', memory: 1Gi}}}}}}]}}, status: {{phase: Pending}}}}\n"
        )
    }

    fn open(objects: &str) -> Session {
        let nodes = node("n1", "", "cpu: '8', memory: 16Gi, pods: '10'")
            + &node("n2", "", "cpu: '8', memory: 16Gi, pods: '10'");
        session(CONF, &format!("{JOB}{nodes}{objects}"))
    }

    #[test]
    fn single_numa_node_admits_what_one_numa_node_holds_and_refuses_more() {
        let ssn = open(
            &(numatopology("n1", "single-numa-node", "0-7")
                + &pod("four", 4, "single-numa-node")
                + &pod("five", 5, "single-numa-node")),
        );
        let n1 = node_id(&ssn, "n1");
        assert!(ssn.predicate(task(&ssn, "ns/four"), n1).is_ok());
        let e = ssn.predicate(task(&ssn, "ns/five"), n1).unwrap_err();
        assert_eq!(e.to_string(), "container c cannot be assigned by numa");
        assert!(e.has_any(&[StatusCode::UnschedulableAndUnresolvable]));
    }

    #[test]
    fn a_policy_the_node_does_not_run_or_a_node_without_topology_is_refused() {
        let ssn = open(&(numatopology("n1", "best-effort", "0-7") + &pod("p", 2, "restricted")));
        let p = task(&ssn, "ns/p");
        let e = ssn.predicate(p, node_id(&ssn, "n1")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "task topology policy[restricted] is different with node[best-effort]"
        );
        let e = ssn.predicate(p, node_id(&ssn, "n2")).unwrap_err();
        assert_eq!(e.to_string(), "numa info is empty");
    }

    #[test]
    fn allocated_cpus_are_booked_for_the_next_task() {
        let mut ssn = open(
            &(numatopology("n1", "single-numa-node", "0-7")
                + &pod("a", 4, "single-numa-node")
                + &pod("b", 4, "single-numa-node")
                + &pod("c", 4, "single-numa-node")),
        );
        let n1 = node_id(&ssn, "n1");
        let (a, b, c) = (task(&ssn, "ns/a"), task(&ssn, "ns/b"), task(&ssn, "ns/c"));
        for t in [a, b] {
            assert!(ssn.predicate(t, n1).is_ok());
            Statement::new().allocate(&mut ssn, t, n1).unwrap();
        }
        assert!(ssn.predicate(c, n1).is_err(), "both NUMA nodes are taken");
    }

    #[test]
    fn close_leaves_the_booked_cpus_of_placed_tasks_for_the_cache() {
        let mut ssn = open(
            &(numatopology("n1", "single-numa-node", "0-7")
                + &pod("a", 4, "single-numa-node")
                + &pod("b", 4, "single-numa-node")),
        );
        let n1 = node_id(&ssn, "n1");
        let (a, b) = (task(&ssn, "ns/a"), task(&ssn, "ns/b"));
        let mut stmt = Statement::new();
        for t in [a, b] {
            assert!(ssn.predicate(t, n1).is_ok());
            stmt.allocate(&mut ssn, t, n1).unwrap();
        }
        stmt.discard(&mut ssn);
        Statement::new().allocate(&mut ssn, a, n1).unwrap();
        let bookings = ssn.close().numa_bookings;
        assert_eq!(bookings.len(), 1, "b was taken back");
        assert_eq!((&*bookings[0].name, &*bookings[0].node), ("a", "n1"));
        assert_eq!(bookings[0].sets["cpu"], [0, 1, 2, 3].into());
    }

    #[test]
    fn fewer_numa_nodes_spanned_score_higher() {
        let ssn = open(
            &(numatopology("n1", "best-effort", "3-4")
                + &numatopology("n2", "best-effort", "0-7")
                + &pod("p", 2, "best-effort")),
        );
        let p = task(&ssn, "ns/p");
        let nodes = [node_id(&ssn, "n1"), node_id(&ssn, "n2")];
        for n in nodes {
            assert!(ssn.predicate(p, n).is_ok());
        }
        let scores = ssn.batch_node_order(p, &nodes).unwrap();
        // Spans 2 and 1, reversed against the widest: 100 - 100 × span / 2.
        assert_eq!(scores.as_slice(), [0.0, 50.0]);
    }
}
