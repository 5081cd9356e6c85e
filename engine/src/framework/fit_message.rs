//! Human-readable reasons why a job or task was not scheduled (Volcano's `FitError()` texts).

use std::collections::BTreeMap;

use super::SessionState;
use crate::model::{JobId, TaskStatus};

impl SessionState {
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
                fe.summary(st.snap.nodes.len())
            ));
        }
        msg
    }
}
