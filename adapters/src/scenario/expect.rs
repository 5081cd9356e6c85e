//! The `expect` block of a scenario file (README "expect keys"). Unknown keys are refused so a
//! misspelt expectation cannot pass by never being checked.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// One expected predicate outcome: passes (`true`), fails (`false`), or fails with its first
/// failing status carrying the named code.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum PredicateResult {
    Passes(bool),
    FailsWith(String),
}

impl std::fmt::Display for PredicateResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PredicateResult::Passes(b) => write!(f, "{b}"),
            PredicateResult::FailsWith(code) => f.write_str(code),
        }
    }
}

/// Checked outcomes; an absent key is not checked.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expect {
    /// Exact map `ns/pod -> node` of every bind.
    pub binds: Option<BTreeMap<String, String>>,
    /// Exact number of binds.
    pub bind_count: Option<usize>,
    /// Exact multiset of evicted `ns/pod`.
    pub evictions: Option<Vec<String>>,
    /// Exact number of evictions.
    pub eviction_count: Option<usize>,
    /// `ns/podgroup -> nodes`: at least one Pipelined task, each on a listed node.
    pub pipelined: Option<BTreeMap<String, Vec<String>>>,
    /// `ns/podgroup -> phase` after the job status updater ran.
    pub pod_group_phases: Option<BTreeMap<String, String>>,
    /// `ns/podgroup -> {TaskStatus: n}` after the actions, before close.
    pub task_status_counts: Option<BTreeMap<String, BTreeMap<String, u32>>>,
    /// Sorted bind counts per lowest-tier hyper-node.
    pub bind_counts_per_hyper_node: Option<Vec<usize>>,
    /// `ns/pod -> node -> score` of the session's node-order functions (no action runs).
    pub node_order_scores: Option<BTreeMap<String, BTreeMap<String, f64>>>,
    /// `ns/pod -> node -> result` of the session's predicate, after its PrePredicate (no action
    /// runs).
    pub predicate_results: Option<BTreeMap<String, BTreeMap<String, PredicateResult>>>,
    /// `ns/podgroup -> JobEnqueueable`, after JobEnqueued on that job unless the notes say the
    /// test did not call it (no action runs).
    pub job_enqueueable: Option<BTreeMap<String, bool>>,
    /// Distinct tasks the session's VictimTasks hook names when asked once with no candidates
    /// (no action runs).
    pub victim_task_count: Option<usize>,
    /// Pod names in the order backfill would pick them.
    pub backfill_candidate_order: Option<Vec<String>>,
    /// `ns/pod -> {volume: ns/claim}`: exactly the volumes each listed pod's bind binds to its
    /// claims first (an empty map: none; a pod not bound: never equal).
    pub volume_bindings: Option<BTreeMap<String, BTreeMap<String, String>>>,
    /// `ns/pod -> [ns/claim]`: exactly the claims each listed pod's bind has provisioned on its
    /// node first.
    pub provisions: Option<BTreeMap<String, Vec<String>>>,
    /// `ns/pod -> {annotation: value}`: annotations each listed pod's bind sets (only the listed
    /// keys are compared; the value `*` asks only that the key be set, for timestamps).
    pub bind_annotations: Option<BTreeMap<String, BTreeMap<String, String>>>,
    /// `ns/pod -> message` of the condition close sets on the pod (why it was not placed).
    pub condition_messages: Option<BTreeMap<String, String>>,
    /// Advisory only: the Go assertion behind it never checked anything, so neither does tephra.
    pub unverified_job_allocated: Option<Value>,
}
