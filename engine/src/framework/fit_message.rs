//! Human-readable reasons why a job or task was not scheduled (Volcano's `FitError()` texts).

use std::fmt::Write;
use std::ops::Range;

use smallvec::SmallVec;

use super::SessionState;
use crate::model::{JobId, TaskStatus};

impl SessionState {
    /// Volcano's `JobInfo.FitError()`: readiness, a status histogram and the first reason.
    /// Volcano's first reason is that of whichever failed task its task map yields first; here
    /// it is the first failed task in task order, whatever ids the tasks have.
    /// Close asks for it once per unready job and a contended cycle has thousands, so the
    /// histogram's parts are written into one buffer rather than a string each.
    pub fn job_fit_error(&self, j: JobId) -> String {
        let st = self;
        // "<count> <name>" per status the job has, and minAvailable; Volcano sorts them as text.
        let mut parts = String::with_capacity(128);
        let mut ranges: SmallVec<[Range<usize>; 12]> = SmallVec::new();
        let mut part = |count: i32, name: &str| {
            let start = parts.len();
            let _ = write!(parts, "{count} {name}");
            ranges.push(start..parts.len());
        };
        for s in TaskStatus::ALL {
            let c = st.job_status_count(j, s);
            if c > 0 {
                part(c as i32, s.name());
            }
        }
        part(st.snap.jobs.min_available[j.idx()], "minAvailable");
        ranges.sort_by(|a, b| parts[a.clone()].cmp(&parts[b.clone()]));
        let ready = if st.job_is_ready(j) {
            "pod group is ready"
        } else {
            "pod group is not ready"
        };
        let mut msg = String::with_capacity(ready.len() + parts.len() + 2 * ranges.len() + 64);
        msg.push_str(ready);
        for r in &ranges {
            msg.push_str(", ");
            msg.push_str(&parts[r.clone()]);
        }
        if !st.jobs.fit_message[j].is_empty() {
            let _ = write!(msg, ". Origin reason is: {}", st.jobs.fit_message[j]);
        } else if let Some((t, fe)) = st.jobs.fit_errors[j]
            .iter()
            .min_by(|(l, _), (r, _)| st.snap.tasks.order_within_job(**l, **r))
        {
            let _ = write!(
                msg,
                ". Origin reason is {}: {}",
                st.snap.tasks.name[t.idx()],
                fe.summary(st.snap.nodes.len())
            );
        }
        msg
    }
}

#[cfg(test)]
mod tests {
    use crate::harness::objects::{node, pod, running_pod};
    use crate::harness::session;
    use crate::model::JobId;

    #[test]
    fn the_job_fit_error_sorts_its_histogram_as_text_not_by_status_or_count() {
        let mut objects = String::from(
            "- {kind: Queue, metadata: {name: q}}\n- {kind: PodGroup, metadata: {name: pg, namespace: ns}, spec: {queue: q, minMember: 12}}\n",
        );
        objects += &node("n1", "", "cpu: 100, memory: 100Gi, pods: 110");
        for i in 0..10 {
            objects += &running_pod(&format!("r{i}"), "n1", "", "");
        }
        objects += &pod("p0", "", "");
        objects += &pod("p1", "", "");
        // Pods without requests are best-effort: pending, they count as ready.
        let ssn = session(
            "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n",
            &objects,
        );
        assert_eq!(
            ssn.state.job_fit_error(JobId(0)),
            "pod group is ready, 10 Running, 12 minAvailable, 2 Pending"
        );
    }
}
