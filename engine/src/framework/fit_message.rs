//! Human-readable reasons why a job or task was not scheduled (Volcano's `FitError()` texts).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use super::{FitErrors, NodeFailures, SessionState};
use crate::model::{JobId, TaskId, TaskStatus};

/// Summaries of fit errors whose per-node map is shared (all tasks of a class that fit nowhere
/// share one), so each is written once. An entry keeps its map alive, so the map's address
/// cannot be reused by another map while it is a key.
#[derive(Debug, Default)]
pub struct SummaryCache(Mutex<HashMap<SummaryKey, Summary>>);

/// The map version's address, the hyper-node and the message of a `FitErrors`.
type SummaryKey = (usize, Option<String>, String);

/// The map version (kept alive) and its summary.
type Summary = (NodeFailures, String);

impl SummaryCache {
    fn summary(&self, fe: &FitErrors, total: usize) -> String {
        let key = (
            fe.nodes.version_address(),
            fe.hyper_node.clone(),
            fe.message.clone(),
        );
        let mut cache = self.0.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .entry(key)
            .or_insert_with(|| (fe.nodes.clone(), fe.summary(total)))
            .1
            .clone()
    }
}

impl SessionState {
    /// The per-task reason: its fit errors, else the job fit error.
    pub fn task_fit_message(&self, j: JobId, t: TaskId) -> String {
        match self.job_fit_errors[j.idx()].get(&t) {
            Some(fe) => self.fit_summaries.summary(fe, self.snap.nodes.len()),
            None => self.job_fit_error(j),
        }
    }

    /// Volcano's `JobInfo.FitError()`: readiness, a status histogram and the first reason.
    pub fn job_fit_error(&self, j: JobId) -> String {
        let st = self;
        let mut hist: BTreeMap<String, i32> = BTreeMap::new();
        for s in TaskStatus::ALL {
            let c = st.job_status_count(j, s);
            if c > 0 {
                *hist.entry(s.name().to_string()).or_default() += c as i32;
            }
        }
        hist.insert("minAvailable".into(), st.snap.jobs.min_available[j.idx()]);
        let mut parts: Vec<String> = hist.iter().map(|(k, v)| format!("{v} {k}")).collect();
        parts.sort();
        let ready = if st.job_is_ready(j) {
            "pod group is ready"
        } else {
            "pod group is not ready"
        };
        let mut msg = format!("{ready}, {}", parts.join(", "));
        if !st.job_fit_message[j.idx()].is_empty() {
            msg.push_str(&format!(
                ". Origin reason is: {}",
                st.job_fit_message[j.idx()]
            ));
        } else if let Some((t, fe)) = st.job_fit_errors[j.idx()].iter().next() {
            msg.push_str(&format!(
                ". Origin reason is {}: {}",
                st.snap.tasks.name[t.idx()],
                st.fit_summaries.summary(fe, st.snap.nodes.len())
            ));
        }
        msg
    }
}
