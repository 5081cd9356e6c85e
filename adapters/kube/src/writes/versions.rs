//! The versions the status writer's own writes replaced, so that a write decided against one of
//! them goes on top of that write instead of failing.
//!
//! Status writes run behind the cycles. A cycle can decide a PodGroup's next status while the
//! previous cycle's write of it is still on its way, against the version that write replaces
//! (the API's answer has not come back yet). Sent as it is, the update fails with 409 Conflict
//! and a later cycle writes it again: one write more than the decisions need, per PodGroup
//! caught so. Volcano never has two writes of one object apart like this: it updates the
//! PodGroup inside the session's close and waits for the answer (Volcano:
//! pkg/scheduler/framework/job_updater.go, updateJob). As the earlier write succeeded on that
//! version, nothing else changed the object between the two, so the version its answer carries
//! is the one the later write must name.

use std::collections::HashMap;

use serde_json::Value;
use tephra_cache::ObjectKind;

/// An object the writer writes.
pub type Key = (ObjectKind, String, String);

/// Per object, the writer's last successful write: the resourceVersion it replaced and the one
/// it made.
#[derive(Debug, Default)]
pub struct ReplacedVersions {
    last: HashMap<Key, (String, String)>,
}

fn resource_version(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
}

impl ReplacedVersions {
    /// `object` as it must be sent: naming the version our last write of it made when it was
    /// decided against the version that write replaced.
    pub fn rebase(&self, key: &Key, mut object: Value) -> Value {
        if let Some((replaced, made)) = self.last.get(key)
            && resource_version(&object) == Some(replaced.as_str())
        {
            object["metadata"]["resourceVersion"] = Value::String(made.clone());
        }
        object
    }

    /// Our write of `sent` succeeded and the API answered `answer`.
    pub fn written(&mut self, key: Key, sent: &Value, answer: &Value) {
        if let (Some(replaced), Some(made)) = (resource_version(sent), resource_version(answer)) {
            self.last
                .insert(key, (replaced.to_string(), made.to_string()));
        }
    }

    /// The object is gone.
    pub fn forget(&mut self, key: &Key) {
        self.last.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pg(rv: &str, phase: &str) -> Value {
        json!({"metadata": {"name": "pg", "namespace": "ns", "resourceVersion": rv},
            "status": {"phase": phase}})
    }

    fn key() -> Key {
        (ObjectKind::PodGroup, "ns".into(), "pg".into())
    }

    #[test]
    fn a_write_decided_against_the_version_our_write_replaced_names_its_answer() {
        let mut v = ReplacedVersions::default();
        v.written(key(), &pg("10", "Inqueue"), &pg("11", "Inqueue"));
        let next = v.rebase(&key(), pg("10", "Running"));
        assert_eq!(next["metadata"]["resourceVersion"], "11");
        assert_eq!(
            next["status"]["phase"], "Running",
            "only the version changes"
        );
    }

    #[test]
    fn a_write_against_any_other_version_is_sent_as_decided() {
        let mut v = ReplacedVersions::default();
        v.written(key(), &pg("10", "Inqueue"), &pg("11", "Inqueue"));
        assert_eq!(
            v.rebase(&key(), pg("12", "Running"))["metadata"]["resourceVersion"],
            "12",
            "someone else wrote after us: a conflict must stay a conflict"
        );
        let other = (ObjectKind::PodGroup, "ns".to_string(), "other".to_string());
        assert_eq!(
            v.rebase(&other, pg("10", "Running"))["metadata"]["resourceVersion"],
            "10"
        );
    }

    #[test]
    fn a_forgotten_object_is_sent_as_decided() {
        let mut v = ReplacedVersions::default();
        v.written(key(), &pg("10", "Inqueue"), &pg("11", "Inqueue"));
        v.forget(&key());
        assert_eq!(
            v.rebase(&key(), pg("10", "Running"))["metadata"]["resourceVersion"],
            "10"
        );
    }
}
