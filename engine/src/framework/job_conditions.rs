//! A job's PodGroup conditions as a session leaves them, with whether they are still the
//! PodGroup's own apart from transition times and IDs, worked out while they are built.
//!
//! Close writes a PodGroup's status only when it changed. Comparing every job's new conditions
//! with its PodGroup's afterwards would read each PodGroup's conditions a second time, after
//! gang just read them to build the new ones; PodGroups updated over many cycles lie scattered
//! over the heap, so the comparison is made during that first read.

use crate::api::PodGroupCondition;
use crate::model::JobId;

/// Job `job`'s conditions (`SessionState::job_conditions_with`).
#[derive(Debug, Clone, PartialEq)]
pub struct JobConditions {
    job: JobId,
    list: Vec<PodGroupCondition>,
    /// `list` equals the PodGroup's conditions by position, transition time and ID aside.
    unchanged: bool,
}

impl JobConditions {
    /// `UpdatePodGroupCondition` on `base`: `c` in place of the first condition of its type, or
    /// appended. `unchanged` says whether the result equals `base` (transition fields aside).
    pub(super) fn with(job: JobId, base: &[PodGroupCondition], c: PodGroupCondition) -> Self {
        let mut list = Vec::with_capacity(base.len() + 1);
        let mut c = Some(c);
        let mut unchanged = true;
        for x in base {
            match c.take_if(|c| c.type_ == x.type_) {
                Some(c) => {
                    unchanged = same_condition(&c, x);
                    list.push(c);
                }
                None => list.push(x.clone()),
            }
        }
        if let Some(c) = c {
            unchanged = false;
            list.push(c);
        }
        JobConditions {
            job,
            list,
            unchanged,
        }
    }

    /// The PodGroup's own conditions, for a job the session set none on.
    pub(super) fn of_pod_group(job: JobId, conditions: &[PodGroupCondition]) -> Self {
        JobConditions {
            job,
            list: conditions.to_vec(),
            unchanged: true,
        }
    }

    /// Compares with the PodGroup's `conditions` after all: for a list built on conditions that
    /// were no longer the PodGroup's, which may have come back to them.
    pub(super) fn compared_with(mut self, conditions: &[PodGroupCondition]) -> Self {
        self.unchanged = self.list.len() == conditions.len()
            && self
                .list
                .iter()
                .zip(conditions)
                .all(|(a, b)| same_condition(a, b));
        self
    }

    /// The job they are for.
    pub fn job(&self) -> JobId {
        self.job
    }

    /// The conditions, in order.
    pub fn list(&self) -> &[PodGroupCondition] {
        &self.list
    }

    /// True when they equal the PodGroup's by position, transition time and ID aside.
    pub fn unchanged(&self) -> bool {
        self.unchanged
    }

    /// The conditions, for the PodGroup status.
    pub fn into_list(self) -> Vec<PodGroupCondition> {
        self.list
    }
}

/// Equal conditions, transition time and ID aside.
fn same_condition(a: &PodGroupCondition, b: &PodGroupCondition) -> bool {
    same_text(&a.type_, &b.type_)
        && same_text(&a.status, &b.status)
        && same_text(&a.reason, &b.reason)
        && same_text(&a.message, &b.message)
}

/// Equal texts; the very same one (a constant the session wrote last time too, or two empty
/// strings) without comparing bytes.
fn same_text(a: &str, b: &str) -> bool {
    (a.len() == b.len() && std::ptr::eq(a.as_ptr(), b.as_ptr())) || a == b
}
