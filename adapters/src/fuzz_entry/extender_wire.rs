//! `extender_wire`: an extender's answer body, decoded as each verb's response and read back
//! into the session's values as the plugin reads it.

use tephra_engine::framework::Session;
use tephra_engine::harness::Harness;
use tephra_engine::model::{NodeId, TaskId};

use crate::plugins::extender::answers::{fit_of, scores_of, victims_of, vote};
use crate::plugins::extender::wire::{
    EventResponse, OverusedResponse, PredicateResponse, PrioritizeResponse, ReadyResponse,
    VictimsResponse, VoteResponse, decode,
};

thread_local! {
    /// Two nodes and three tasks, for the answers that name them.
    static SESSION: Session = Harness::new("actions: allocate\ntiers: []\n")
        .queue("q", 1)
        .node("n1", "4", "8Gi", &[])
        .node("n2", "8", "16Gi", &[])
        .pod_group("ns", "pg", "q", 1)
        .pod("ns", "p0", "pg", "1", "1Gi")
        .pod("ns", "p1", "pg", "1", "1Gi")
        .pod("ns", "p2", "pg", "1", "1Gi")
        .open()
        .expect("the fixed session opens");
}

/// Decodes the bytes as every response and reads each decoded answer back.
pub fn extender_wire(body: &[u8]) {
    SESSION.with(|ssn| {
        let state = &ssn.state;
        let nodes: Vec<NodeId> = state.snap.nodes.ids().collect();
        let tasks: Vec<TaskId> = (0..state.snap.tasks.len() as u32).map(TaskId).collect();
        if let Ok(r) = decode::<PredicateResponse>("predicate", body) {
            let _ = fit_of(r);
        }
        if let Ok(r) = decode::<PrioritizeResponse>("prioritize", body) {
            let _ = scores_of(r, state, &nodes);
        }
        if let Ok(r) = decode::<VictimsResponse>("preemptable", body) {
            let _ = victims_of(r, state, &tasks);
        }
        if let Ok(r) = decode::<VoteResponse>("jobEnqueueable", body) {
            let _ = vote(r.status);
        }
        let _ = decode::<OverusedResponse>("queueOverused", body);
        let _ = decode::<ReadyResponse>("jobReady", body);
        let _ = decode::<EventResponse>("allocateFunc", body);
    });
}
