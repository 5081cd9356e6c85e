//! What a case's session did, gathered in the shapes the expectations are written in.

use std::collections::BTreeMap;

use tephra_engine::actions;
use tephra_engine::framework::{Decisions, FitError, Session};
use tephra_engine::model::{NodeId, TaskId, TaskStatus};

/// Observations of one case. Hook-level probes are filled only when the case expects them,
/// since they call session hooks that change plugin state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// `(ns/pod, node)` per bind, in the order issued.
    pub binds: Vec<(String, String)>,
    /// `ns/pod` per eviction, in the order issued.
    pub evictions: Vec<String>,
    /// Per job, its Pipelined tasks as `(ns/pod, node)`.
    pub pipelined: BTreeMap<String, Vec<(String, String)>>,
    /// Per job, its non-zero task status counts.
    pub task_status_counts: BTreeMap<String, BTreeMap<String, u32>>,
    /// Bind counts per lowest-tier hyper-node, sorted.
    pub bind_counts_per_hyper_node: Vec<usize>,
    /// Per job, the PodGroup phase the job updater computed at close.
    pub pod_group_phases: BTreeMap<String, String>,
    /// `ns/pod -> node -> score`.
    pub node_order_scores: BTreeMap<String, BTreeMap<String, f64>>,
    /// `ns/pod -> node -> outcome`: `true`, or the code of the first failing status.
    pub predicate_results: BTreeMap<String, BTreeMap<String, String>>,
    /// `ns/podgroup -> JobEnqueueable`.
    pub job_enqueueable: BTreeMap<String, bool>,
    /// Distinct tasks VictimTasks named.
    pub victim_task_count: usize,
    /// Pod names in backfill's pick order.
    pub backfill_candidate_order: Vec<String>,
    /// Per bound pod, the volumes its bind binds first, `volume -> ns/claim`.
    pub volume_bindings: BTreeMap<String, BTreeMap<String, String>>,
    /// Per bound pod, the claims its bind has provisioned first, `ns/claim`.
    pub provisions: BTreeMap<String, Vec<String>>,
    /// Per bound pod, the annotations its bind sets.
    pub bind_annotations: BTreeMap<String, BTreeMap<String, String>>,
    /// Per pod with a condition set at close, the condition's message.
    pub condition_messages: BTreeMap<String, String>,
}

impl Observed {
    /// The session's node-order score of every task on every node: the per-node functions plus
    /// the batch ones, as `ssn.NodeOrderFn` sums them (a failing batch scores 0).
    pub fn probe_node_order_scores(&mut self, ssn: &Session) {
        let snap = &ssn.state.snap;
        let nodes: Vec<NodeId> = snap.nodes.ids().collect();
        for t in (0..snap.tasks.len() as u32).map(TaskId) {
            let batch = ssn.batch_node_order(t, &nodes);
            let batch_score = |i: usize| batch.as_ref().map_or(0.0, |b| b[i]);
            let scores = nodes
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let score = ssn.node_order(t, n) + batch_score(i);
                    (snap.nodes.name[n.idx()].clone(), score)
                })
                .collect();
            self.node_order_scores.insert(snap.tasks.key(t), scores);
        }
    }

    /// For every task, the session's PrePredicate, then its Predicate on every node (a failed
    /// PrePredicate fails every node with its status, as allocate skips the task).
    pub fn probe_predicate_results(&mut self, ssn: &Session) {
        let snap = &ssn.state.snap;
        let nodes: Vec<NodeId> = snap.nodes.ids().collect();
        let outcome = |r: Result<(), FitError>| match r {
            Ok(()) => "true".to_string(),
            Err(e) => e
                .statuses
                .first()
                .map_or("false".to_string(), |s| format!("{:?}", s.code)),
        };
        for t in (0..snap.tasks.len() as u32).map(TaskId) {
            let pre = ssn.pre_predicate(t);
            let results = nodes
                .iter()
                .map(|&n| {
                    let result = pre.clone().and_then(|()| ssn.predicate(t, n));
                    (snap.nodes.name[n.idx()].clone(), outcome(result))
                })
                .collect();
            self.predicate_results.insert(snap.tasks.key(t), results);
        }
    }

    /// For every job in session order: JobEnqueued first when `enqueued_first`, then the
    /// JobEnqueueable vote.
    pub fn probe_job_enqueueable(&mut self, ssn: &mut Session, enqueued_first: bool) {
        let snap = ssn.state.snap.clone();
        for j in snap.jobs.ids() {
            if enqueued_first {
                ssn.job_enqueued(j);
            }
            self.job_enqueueable
                .insert(snap.jobs.uid[j.idx()].to_string(), ssn.job_enqueueable(j));
        }
    }

    /// The distinct tasks of one VictimTasks call with no candidates.
    pub fn probe_victim_tasks(&mut self, ssn: &Session) {
        let mut victims = ssn.victim_tasks(&[]);
        victims.sort_unstable();
        victims.dedup();
        self.victim_task_count = victims.len();
    }

    /// The order in which backfill would pick best-effort tasks (it un-pipelines pipelined
    /// best-effort tasks first, hence the mutable session).
    pub fn probe_backfill_order(&mut self, ssn: &mut Session) {
        let order = actions::backfill_candidate_order(ssn);
        let names = &ssn.state.snap.tasks.name;
        self.backfill_candidate_order = order.iter().map(|t| names[t.idx()].to_string()).collect();
    }

    /// Binds, evictions, pipelined tasks and status counts once the actions ran.
    pub fn record_actions(&mut self, ssn: &Session) {
        let snap = &ssn.state.snap;
        let node_name = |n: Option<NodeId>| {
            n.map(|n| snap.nodes.name[n.idx()].clone())
                .unwrap_or_default()
        };
        self.binds = ssn
            .binds
            .iter()
            .map(|&(t, n)| (snap.tasks.key(t), node_name(Some(n))))
            .collect();
        self.evictions = ssn
            .evictions
            .iter()
            .map(|(t, _)| snap.tasks.key(*t))
            .collect();
        for j in snap.jobs.ids() {
            let uid = &snap.jobs.uid[j.idx()];
            let tasks = &snap.jobs.tasks[j.idx()];
            let pipelined: Vec<(String, String)> = tasks
                .iter()
                .filter(|&&t| ssn.state.tasks.status[t] == TaskStatus::Pipelined)
                .map(|&t| (snap.tasks.key(t), node_name(ssn.state.tasks.node[t])))
                .collect();
            if !pipelined.is_empty() {
                self.pipelined.insert(uid.to_string(), pipelined);
            }
            let counts = TaskStatus::ALL
                .iter()
                .map(|&s| (s.name().to_string(), ssn.state.job_status_count(j, s)))
                .filter(|(_, n)| *n > 0)
                .collect();
            self.task_status_counts.insert(uid.to_string(), counts);
        }
        let mut per_hyper_node: BTreeMap<_, usize> = BTreeMap::new();
        for &(_, n) in &ssn.binds {
            *per_hyper_node
                .entry(
                    snap.hyper_nodes
                        .lowest_of_node
                        .get(n.idx())
                        .copied()
                        .flatten(),
                )
                .or_default() += 1;
        }
        self.bind_counts_per_hyper_node = per_hyper_node.into_values().collect();
        self.bind_counts_per_hyper_node.sort_unstable();
    }

    /// PodGroup phases, the binds' volume work and the pods' condition messages from the closed
    /// session's decisions.
    pub fn record_close(&mut self, decisions: &Decisions) {
        for b in &decisions.binds {
            let pod = format!("{}/{}", b.namespace, b.name);
            let work = b.volumes.as_deref().cloned().unwrap_or_default();
            let volumes = work
                .volumes
                .iter()
                .map(|(pv, c)| (pv.clone(), format!("{}/{}", c.namespace, c.name)))
                .collect();
            self.volume_bindings.insert(pod.clone(), volumes);
            self.bind_annotations
                .insert(pod.clone(), b.annotations.clone());
            let claims = work
                .provisions
                .iter()
                .map(|(ns, name)| format!("{ns}/{name}"))
                .collect();
            self.provisions.insert(pod, claims);
        }
        self.condition_messages = decisions
            .pod_conditions
            .iter()
            .map(|c| (format!("{}/{}", c.namespace, c.name), c.message.to_string()))
            .collect();
        self.pod_group_phases = decisions
            .pod_groups
            .iter()
            .map(|pg| {
                (
                    format!("{}/{}", pg.namespace, pg.name),
                    pg.status.phase.to_string(),
                )
            })
            .collect();
    }
}
