//! Status writes, made off the cycle's critical path by two background tasks: one for PodGroups
//! (a full update: the CRD has no status subresource), queue `status.allocated` (status
//! subresource) and `PodScheduled` pod conditions (pods/status update), one for events. Each
//! object write is computed against the object as the API last sent it; an unchanged object is
//! not rewritten, and one decided against the version the writer's own earlier write replaced
//! names that write's answer (`versions`).

use futures::StreamExt;
use kube::api::{DynamicObject, PostParams};
use serde::Deserialize;
use serde_json::{Value, json};
use tephra_cache::ObjectKind;
use tephra_engine::api::{PodGroupStatus, ResourceList};
use tephra_engine::framework::PodConditionUpdate;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::quantity::go_list;
use super::versions::{Key, ReplacedVersions};
use super::{EventRecorder, ObjectRef, Recording, STATUS_HOLD_MAX, Writer, is_status};
use crate::watch::api_resource;

/// Writes in flight at once inside one group, in each of the two tasks.
const CONCURRENCY: usize = 16;

/// One event to record.
#[derive(Debug, Clone)]
pub struct EventWrite {
    pub object: ObjectRef,
    pub type_: &'static str,
    pub reason: String,
    pub message: String,
}

/// The status writes of one cycle: whole objects to send back, and events.
#[derive(Debug, Default)]
pub struct StatusBatch {
    /// The cycle that decided these writes; answers carry it back.
    pub seq: u64,
    pub pod_groups: Vec<Value>,
    pub queues: Vec<Value>,
    pub pods: Vec<Value>,
    pub events: Vec<EventWrite>,
    /// Objects that are gone: the event recorder forgets them.
    pub gone: Vec<ObjectRef>,
}

impl StatusBatch {
    pub fn is_empty(&self) -> bool {
        self.pod_groups.is_empty()
            && self.queues.is_empty()
            && self.pods.is_empty()
            && self.events.is_empty()
            && self.gone.is_empty()
    }
}

/// Drops `null` members, which a structural schema would refuse or prune.
fn without_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// The PodGroup (`raw`, as the API holds it) to send back with `status`, or `None` when the API
/// already holds it.
pub fn pod_group_write(raw: Value, status: &PodGroupStatus) -> Option<Value> {
    let held = raw
        .get("status")
        .and_then(|s| PodGroupStatus::deserialize(s).ok())
        .unwrap_or_default();
    if &held == status {
        return None;
    }
    let mut object = raw;
    object["status"] = without_nulls(serde_json::to_value(status).ok()?);
    Some(object)
}

/// The Queue to send back with `status.allocated` (in Volcano's quantity forms), or `None`
/// when the API already holds the same amounts.
pub fn queue_write(raw: Value, allocated: &ResourceList) -> Option<Value> {
    let held = raw
        .pointer("/status/allocated")
        .and_then(|s| ResourceList::deserialize(s).ok())
        .unwrap_or_default();
    let wanted = go_list(allocated);
    if go_list(&held) == wanted {
        return None;
    }
    let mut object = raw;
    if !object.get("status").is_some_and(Value::is_object) {
        object["status"] = json!({});
    }
    object["status"]["allocated"] = serde_json::to_value(wanted).ok()?;
    Some(object)
}

/// The pod to send back with the `PodScheduled=False` condition of `c` (and the nominated
/// node), or `None` when status, reason and message are already there (Volcano's
/// `taskUnschedulable`). The transition time changes only when the status does.
pub fn pod_condition_write(mut raw: Value, c: &PodConditionUpdate, now: &str) -> Option<Value> {
    let nominated_held = raw
        .pointer("/status/nominatedNodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    let nominate = c
        .nominated_node
        .as_deref()
        .filter(|n| !n.is_empty() && *n != nominated_held);
    // Taken out of the object, which is ours: it is sent back with them put in again.
    let mut conditions = match raw.pointer_mut("/status/conditions") {
        Some(Value::Array(held)) => std::mem::take(held),
        _ => Vec::new(),
    };
    let old = conditions.iter().position(|x| x["type"] == "PodScheduled");
    let same = old.is_some_and(|i| {
        let o = &conditions[i];
        o["status"] == "False" && o["reason"] == c.reason && o["message"] == *c.message
    });
    if same && nominate.is_none() {
        return None;
    }
    let transition = match old {
        Some(i) if conditions[i]["status"] == "False" => {
            conditions[i]["lastTransitionTime"].clone()
        }
        _ => json!(now),
    };
    let condition = json!({"type": "PodScheduled", "status": "False", "reason": c.reason,
        "message": &*c.message, "lastTransitionTime": transition});
    match old {
        Some(i) => conditions[i] = condition,
        None => conditions.push(condition),
    }
    let mut object = raw;
    if !object.get("status").is_some_and(Value::is_object) {
        object["status"] = json!({});
    }
    object["status"]["conditions"] = Value::Array(conditions);
    if let Some(n) = nominate {
        object["status"]["nominatedNodeName"] = json!(n);
    }
    Some(object)
}

fn name_of(v: &Value) -> (String, String) {
    let s = |k: &str| {
        v.pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    (s("namespace"), s("name"))
}

/// The outcome of one object write: the object as the API server answered (its new
/// resourceVersion included), or `None` when the write failed.
#[derive(Debug)]
pub struct Written {
    pub kind: ObjectKind,
    pub namespace: String,
    pub name: String,
    /// The cycle whose decision was written.
    pub seq: u64,
    pub object: Option<Value>,
}

/// The background status writer.
#[derive(Debug)]
pub struct StatusWriter {
    tx: mpsc::UnboundedSender<StatusBatch>,
}

impl StatusWriter {
    /// Starts the writer's tasks; every object it writes comes back, as the API answered the
    /// write, on the returned receiver.
    pub fn spawn(w: Writer, component: &str) -> (StatusWriter, mpsc::UnboundedReceiver<Written>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        tokio::spawn(run(w.clone(), rx, done_tx, events_tx));
        tokio::spawn(run_events(w, EventRecorder::new(component), events_rx));
        (StatusWriter { tx }, done_rx)
    }

    /// Queues a batch; returns at once.
    pub fn send(&self, batch: StatusBatch) {
        if !batch.is_empty() && self.tx.send(batch).is_err() {
            tracing::error!("status writer stopped; status writes are lost");
        }
    }
}

/// One object to write, and the cycle that decided it.
#[derive(Debug)]
struct ObjectWrite {
    kind: ObjectKind,
    object: Value,
    seq: u64,
}

/// Merges queued batches: the latest version of each object wins, every event is kept.
fn coalesce(batches: Vec<StatusBatch>) -> (Vec<ObjectWrite>, Vec<EventWrite>, Vec<ObjectRef>) {
    let (mut objects, mut events, mut gone) = (Vec::<ObjectWrite>::new(), Vec::new(), Vec::new());
    for b in batches {
        let lists = [
            (ObjectKind::PodGroup, b.pod_groups),
            (ObjectKind::Queue, b.queues),
            (ObjectKind::Pod, b.pods),
        ];
        for (kind, list) in lists {
            for object in list {
                let key = name_of(&object);
                objects.retain(|x| x.kind != kind || name_of(&x.object) != key);
                objects.push(ObjectWrite {
                    kind,
                    object,
                    seq: b.seq,
                });
            }
        }
        events.extend(b.events);
        gone.extend(b.gone);
    }
    (objects, events, gone)
}

/// What a write is counted as.
fn what(kind: ObjectKind) -> &'static str {
    match kind {
        ObjectKind::PodGroup => "update podgroups",
        ObjectKind::Queue => "update queues/status",
        _ => "update pods/status",
    }
}

/// Events to record, and the objects gone since the last ones (whose recorder state goes).
type EventGroup = (Vec<EventWrite>, Vec<ObjectRef>);

async fn run(
    w: Writer,
    mut rx: mpsc::UnboundedReceiver<StatusBatch>,
    done: mpsc::UnboundedSender<Written>,
    events: mpsc::UnboundedSender<EventGroup>,
) {
    let mut versions = ReplacedVersions::default();
    while let Some(first) = rx.recv().await {
        let mut batches = vec![first];
        while let Ok(more) = rx.try_recv() {
            batches.push(more);
        }
        let (objects, new_events, gone) = coalesce(batches);
        // Events go to their own writer at once, so a PodGroup's status never waits behind the
        // events of the batches before it (Volcano's event broadcaster records apart from its
        // job updater too).
        let _ = events.send((new_events, gone.clone()));
        let w = held(&w);
        let versions_ref = &versions;
        let written: Vec<(Key, Value, Value)> = futures::stream::iter(objects)
            .map(|o| {
                let (w, done) = (w.clone(), done.clone());
                async move {
                    let (namespace, name) = name_of(&o.object);
                    let key = (o.kind, namespace.clone(), name.clone());
                    let sent = versions_ref.rebase(&key, o.object);
                    let object = write_object(&w, o.kind, &sent, what(o.kind)).await;
                    let _ = done.send(Written {
                        kind: o.kind,
                        namespace,
                        name,
                        seq: o.seq,
                        object: object.clone(),
                    });
                    object.map(|answer| (key, sent, answer))
                }
            })
            .buffer_unordered(CONCURRENCY)
            .filter_map(|x| async move { x })
            .collect()
            .await;
        for (key, sent, answer) in written {
            versions.written(key, &sent, &answer);
        }
        for g in &gone {
            if let Some(kind) = kind_of(g) {
                versions.forget(&(kind, g.namespace.clone(), g.name.clone()));
            }
        }
    }
}

/// Records the events of the batches, in the order they came, as the recorder decides (new,
/// a repeat counted on an earlier one, or dropped).
async fn run_events(
    w: Writer,
    mut recorder: EventRecorder,
    mut rx: mpsc::UnboundedReceiver<EventGroup>,
) {
    while let Some((mut events, mut gone)) = rx.recv().await {
        while let Ok((more, more_gone)) = rx.try_recv() {
            events.extend(more);
            gone.extend(more_gone);
        }
        let w = held(&w);
        let now = std::time::Instant::now();
        let planned: Vec<(&EventWrite, Recording)> = events
            .iter()
            .map(|e| {
                (
                    e,
                    recorder.decide(&e.object, e.type_, &e.reason, &e.message, now),
                )
            })
            .filter(|(_, d)| *d != Recording::Dropped)
            .collect();
        let component = recorder.component().to_string();
        futures::stream::iter(planned)
            .for_each_concurrent(CONCURRENCY, |(e, decision)| {
                let (w, component) = (w.clone(), component.clone());
                async move {
                    let what = (e.type_, e.reason.as_str(), e.message.as_str());
                    super::events::send(&w, &component, &e.object, what, decision).await
                }
            })
            .await;
        for g in &gone {
            recorder.forget(g);
        }
    }
}

/// `w` for a group of writes that waits for binds once, from when it formed, so that its last
/// write waits no longer than its first; batches that come meanwhile gather into the next group
/// (where the latest version of an object wins).
fn held(w: &Writer) -> Writer {
    Writer {
        status_hold_until: Some(Instant::now() + STATUS_HOLD_MAX),
        ..w.clone()
    }
}

/// The kind of a gone object the writer may have written.
fn kind_of(gone: &ObjectRef) -> Option<ObjectKind> {
    match gone.kind {
        "Pod" => Some(ObjectKind::Pod),
        "PodGroup" => Some(ObjectKind::PodGroup),
        _ => None,
    }
}

/// `object` with its `apiVersion` and `kind` (list items arrive without them).
fn typed(kind: ObjectKind, object: &Value) -> Value {
    let ar = api_resource(kind);
    let mut o = object.clone();
    o["apiVersion"] = json!(ar.api_version);
    o["kind"] = json!(ar.kind);
    o
}

/// Writes one object; returns the API's answer on success.
async fn write_object(
    w: &Writer,
    kind: ObjectKind,
    object: &Value,
    what: &'static str,
) -> Option<Value> {
    let (namespace, name) = name_of(object);
    let Ok(dynamic) = serde_json::from_value::<DynamicObject>(typed(kind, object)) else {
        tracing::warn!("{kind} {namespace}/{name}: cannot encode the status write");
        return None;
    };
    w.before_status(what).await;
    let api = w.api(&api_resource(kind), &namespace);
    let pp = PostParams::default();
    let result = match kind {
        ObjectKind::PodGroup => api.replace(&name, &pp, &dynamic).await,
        _ => api.replace_status(&name, &pp, &dynamic).await,
    };
    match result {
        Ok(written) => return serde_json::to_value(written).ok(),
        Err(e) if is_status(&e, 409) || is_status(&e, 404) => {
            tracing::debug!("{what} {namespace}/{name}: {e}; the next cycle decides again");
        }
        Err(e) => tracing::warn!("{what} {namespace}/{name}: {e}"),
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::model::Quantity;

    fn cond(reason: &'static str, message: &str, nominated: Option<&str>) -> PodConditionUpdate {
        PodConditionUpdate {
            namespace: "ns".into(),
            name: "p".into(),
            reason,
            message: message.into(),
            nominated_node: nominated.map(str::to_string),
        }
    }

    #[test]
    fn an_unchanged_pod_group_status_is_not_rewritten() {
        let raw = json!({"metadata": {"name": "pg"}, "spec": {"minMember": 2}, "status": {"phase": "Running", "running": 2}});
        let same = PodGroupStatus {
            phase: "Running".into(),
            running: 2,
            ..Default::default()
        };
        assert!(pod_group_write(raw.clone(), &same).is_none());
        let inqueue = PodGroupStatus {
            phase: "Inqueue".into(),
            ..Default::default()
        };
        let w = pod_group_write(raw.clone(), &inqueue).unwrap();
        assert_eq!(w["status"]["phase"], "Inqueue");
        assert_eq!(w["spec"]["minMember"], 2, "the whole object is sent back");
    }

    #[test]
    fn queue_allocated_is_written_only_when_different() {
        let raw = json!({"metadata": {"name": "q"}, "status": {"state": "Open", "allocated": {"cpu": "2"}}});
        let two: ResourceList = [("cpu".to_string(), Quantity::parse("2").unwrap())].into();
        assert!(queue_write(raw.clone(), &two).is_none());
        let same_in_milli: ResourceList =
            [("cpu".to_string(), Quantity::parse("2000m").unwrap())].into();
        assert!(queue_write(raw.clone(), &same_in_milli).is_none());
        let three: ResourceList = [("cpu".to_string(), Quantity::parse("3000m").unwrap())].into();
        let w = queue_write(raw.clone(), &three).unwrap();
        assert_eq!(w["status"]["allocated"]["cpu"], "3");
        assert_eq!(w["status"]["state"], "Open");
    }

    #[test]
    fn same_condition_is_not_rewritten_and_transition_time_is_kept() {
        let raw = json!({"metadata": {"name": "p"}, "status": {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m1", "lastTransitionTime": "T0"}]}});
        assert!(
            pod_condition_write(raw.clone(), &cond("Unschedulable", "m1", None), "T1").is_none()
        );
        let w = pod_condition_write(raw.clone(), &cond("Unschedulable", "m2", None), "T1").unwrap();
        let c = &w["status"]["conditions"][0];
        assert_eq!(
            (c["message"].as_str(), c["lastTransitionTime"].as_str()),
            (Some("m2"), Some("T0"))
        );
        assert_eq!(w["status"]["conditions"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn nominated_node_is_written_but_never_cleared() {
        let raw = json!({"metadata": {"name": "p"}, "status": {"nominatedNodeName": "n1", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m"}]}});
        assert!(pod_condition_write(raw.clone(), &cond("Unschedulable", "m", None), "T").is_none());
        assert!(
            pod_condition_write(raw.clone(), &cond("Unschedulable", "m", Some("n1")), "T")
                .is_none()
        );
        let w =
            pod_condition_write(raw.clone(), &cond("Unschedulable", "m", Some("n2")), "T").unwrap();
        assert_eq!(w["status"]["nominatedNodeName"], "n2");
    }

    #[test]
    fn a_pod_without_status_gets_the_condition() {
        let w = pod_condition_write(
            json!({"metadata": {"name": "p"}}),
            &cond("Unschedulable", "m", None),
            "T",
        )
        .unwrap();
        assert_eq!(w["status"]["conditions"][0]["lastTransitionTime"], "T");
    }

    #[test]
    fn writes_carry_api_version_and_kind() {
        let o = typed(ObjectKind::PodGroup, &json!({"metadata": {"name": "pg"}}));
        assert_eq!(o["apiVersion"], "scheduling.volcano.sh/v1beta1");
        assert_eq!(o["kind"], "PodGroup");
    }

    #[test]
    fn coalescing_keeps_the_latest_object_and_every_event() {
        let pg = |phase: &str| json!({"metadata": {"name": "pg", "namespace": "ns"}, "status": {"phase": phase}});
        let ev = EventWrite {
            object: ObjectRef {
                kind: "Pod",
                api_version: "v1",
                namespace: "ns".into(),
                name: "p".into(),
                uid: String::new(),
            },
            type_: "Normal",
            reason: "Scheduled".into(),
            message: String::new(),
        };
        let a = StatusBatch {
            seq: 1,
            pod_groups: vec![pg("Inqueue")],
            events: vec![ev.clone()],
            ..Default::default()
        };
        let b = StatusBatch {
            seq: 2,
            pod_groups: vec![pg("Running")],
            events: vec![ev],
            ..Default::default()
        };
        let (objects, events, _) = coalesce(vec![a, b]);
        assert_eq!(objects.len(), 1);
        assert_eq!(objects[0].object["status"]["phase"], "Running");
        assert_eq!(
            objects[0].seq, 2,
            "the answer names the cycle whose version was written"
        );
        assert_eq!(events.len(), 2);
    }
}
