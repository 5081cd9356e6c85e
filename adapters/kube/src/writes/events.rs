//! core/v1 Events, recorded the way client-go's recorder does for Volcano: a repeat of the same
//! event on the same object patches the first one's `count` instead of creating another, and
//! each object may send 25 events at once, then one per five minutes (client-go's spam filter).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use super::Writer;

/// Client-go's `EventSourceObjectSpamFilter` defaults.
const SPAM_BURST: f64 = 25.0;
const SPAM_REFILL: Duration = Duration::from_secs(300);

/// The object an event is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    pub kind: &'static str,
    pub api_version: &'static str,
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

/// What the recorder decided for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recording {
    Create {
        name: String,
    },
    /// Bump the count of an earlier event.
    Patch {
        name: String,
        count: i32,
    },
    Dropped,
}

/// Correlation and spam-filter state (pure; `send` does the I/O).
#[derive(Debug)]
pub struct EventRecorder {
    component: String,
    seen: HashMap<(ObjectRef, String, String, String), (String, i32)>,
    tokens: HashMap<ObjectRef, (f64, Instant)>,
}

impl EventRecorder {
    pub fn new(component: &str) -> Self {
        EventRecorder {
            component: component.to_string(),
            seen: HashMap::new(),
            tokens: HashMap::new(),
        }
    }

    /// Decides how to record (`type_`, `reason`, `message`) on `obj` at `now`.
    pub fn decide(
        &mut self,
        obj: &ObjectRef,
        type_: &str,
        reason: &str,
        message: &str,
        now: Instant,
    ) -> Recording {
        let (tokens, last) = self.tokens.entry(obj.clone()).or_insert((SPAM_BURST, now));
        let refill = now.saturating_duration_since(*last).as_secs_f64() / SPAM_REFILL.as_secs_f64();
        *tokens = (*tokens + refill).min(SPAM_BURST);
        *last = now;
        if *tokens < 1.0 {
            return Recording::Dropped;
        }
        *tokens -= 1.0;
        let key = (
            obj.clone(),
            type_.to_string(),
            reason.to_string(),
            message.to_string(),
        );
        match self.seen.get_mut(&key) {
            Some((name, count)) => {
                *count += 1;
                Recording::Patch {
                    name: name.clone(),
                    count: *count,
                }
            }
            None => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or_default();
                let name = format!("{}.{:x}", obj.name, nanos + self.seen.len() as u128);
                self.seen.insert(key, (name.clone(), 1));
                Recording::Create { name }
            }
        }
    }

    /// Forgets objects that are gone, so the maps do not grow without bound.
    pub fn forget(&mut self, obj: &ObjectRef) {
        self.tokens.remove(obj);
        self.seen.retain(|k, _| &k.0 != obj);
    }

    /// The component events are reported by (`source.component`).
    pub fn component(&self) -> &str {
        &self.component
    }
}

/// Writes one event as `decision` says (decided by `EventRecorder::decide`).
pub async fn send(
    w: &Writer,
    component: &str,
    obj: &ObjectRef,
    (type_, reason, message): (&str, &str, &str),
    decision: Recording,
) {
    let api: Api<Event> = Api::namespaced(w.client.clone(), &obj.namespace);
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    let result = match decision {
        Recording::Dropped => return,
        Recording::Create { name } => {
            let event = json!({
                "metadata": {"name": name, "namespace": obj.namespace},
                "involvedObject": {"kind": obj.kind, "apiVersion": obj.api_version,
                    "namespace": obj.namespace, "name": obj.name, "uid": obj.uid},
                "reason": reason, "message": message, "type": type_,
                "source": {"component": component},
                "reportingComponent": component,
                "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            });
            match serde_json::from_value::<Event>(event) {
                Ok(e) => {
                    w.before_status("create events").await;
                    api.create(&PostParams::default(), &e).await.map(|_| ())
                }
                Err(e) => Err(kube::Error::SerdeError(e)),
            }
        }
        Recording::Patch { name, count } => {
            tracing::debug!(
                "event {reason} on {} {}/{} repeated: count {count}",
                obj.kind,
                obj.namespace,
                obj.name
            );
            w.before_status("patch events").await;
            let patch = json!({"count": count, "lastTimestamp": now});
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map(|_| ())
        }
    };
    if let Err(e) = result {
        tracing::debug!(
            "event {reason} on {} {}/{}: {e}",
            obj.kind,
            obj.namespace,
            obj.name
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(name: &str) -> ObjectRef {
        ObjectRef {
            kind: "PodGroup",
            api_version: "scheduling.volcano.sh/v1beta1",
            namespace: "ns".into(),
            name: name.into(),
            uid: "u".into(),
        }
    }

    #[test]
    fn a_repeated_event_patches_the_first_ones_count() {
        let mut r = EventRecorder::new("volcano");
        let t = Instant::now();
        let Recording::Create { name } = r.decide(&pg("a"), "Warning", "Unschedulable", "m", t)
        else {
            panic!()
        };
        assert_eq!(
            r.decide(&pg("a"), "Warning", "Unschedulable", "m", t),
            Recording::Patch { name, count: 2 }
        );
        assert!(matches!(
            r.decide(&pg("a"), "Warning", "Unschedulable", "other", t),
            Recording::Create { .. }
        ));
    }

    #[test]
    fn an_object_gets_25_events_then_one_per_five_minutes() {
        let mut r = EventRecorder::new("volcano");
        let t = Instant::now();
        for _ in 0..25 {
            assert_ne!(
                r.decide(&pg("a"), "Warning", "R", "m", t),
                Recording::Dropped
            );
        }
        assert_eq!(
            r.decide(&pg("a"), "Warning", "R", "m", t),
            Recording::Dropped
        );
        assert_ne!(
            r.decide(&pg("b"), "Warning", "R", "m", t),
            Recording::Dropped,
            "per object"
        );
        assert_ne!(
            r.decide(&pg("a"), "Warning", "R", "m", t + SPAM_REFILL),
            Recording::Dropped
        );
    }

    #[test]
    fn forgetting_an_object_resets_it() {
        let mut r = EventRecorder::new("volcano");
        let t = Instant::now();
        r.decide(&pg("a"), "Normal", "R", "m", t);
        r.forget(&pg("a"));
        assert!(matches!(
            r.decide(&pg("a"), "Normal", "R", "m", t),
            Recording::Create { .. }
        ));
    }
}
