//! Conformance scenario files (`tests/conformance/README.md`): objects, a scheduler
//! configuration and expected outcomes, run in one session and checked.

mod check;
mod conf;
mod discover;
mod expect;
mod node_metrics;
mod observe;
mod run;

use std::path::Path;

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use tephra_cache::Sharding;
use tephra_engine::api::{ClusterObject, Time};
use tephra_engine::snapshot::ShardingMode;

use crate::InputError;
use crate::manifest::{self, Decoded};
pub use check::Check;
pub use conf::parse_scenario_conf;
pub use discover::find_scenario_files;
pub use expect::{Expect, PredicateResult};
pub use run::{DEFAULT_NOW, run_scenario, run_scenario_under, scenario_conf};

use node_metrics::{RawNodeMetrics, node_metrics_objects};

/// A loaded scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file it came from, for messages.
    pub path: String,
    pub name: String,
    pub origin: String,
    /// The configuration text; `None` when the file has none.
    pub scheduler_conf: Option<String>,
    /// When the session opens (`DEFAULT_NOW` when the file does not say).
    pub now: Time,
    pub objects: Vec<ClusterObject>,
    /// The scheduler's sharding flags (`sharding: {mode, name}`; no sharding when absent).
    pub sharding: Sharding,
    /// Objects of kinds tephra does not watch, one line each.
    pub skipped: Vec<String>,
    pub expect: Expect,
    pub notes: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawScenario {
    #[serde(default)]
    name: String,
    #[serde(default)]
    origin: String,
    #[serde(default)]
    scheduler_conf: Option<String>,
    #[serde(default)]
    now: Option<String>,
    #[serde(default)]
    objects: Vec<Value>,
    #[serde(default)]
    node_metrics: BTreeMap<String, RawNodeMetrics>,
    #[serde(default)]
    sharding: Option<RawSharding>,
    #[serde(default)]
    expect: Expect,
    #[serde(default)]
    notes: String,
}

/// `sharding`: the values of `--scheduler-sharding-mode` and `--scheduler-sharding-name`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSharding {
    mode: String,
    #[serde(default = "default_shard_name")]
    name: String,
}

/// Volcano's `--scheduler-sharding-name` default.
fn default_shard_name() -> String {
    "volcano".into()
}

/// True when a document is a scenario rather than a manifest: no `kind`, and a scenario key.
pub fn is_scenario(doc: &Value) -> bool {
    doc.is_object()
        && doc.get("kind").is_none()
        && ["objects", "schedulerConf", "expect"]
            .iter()
            .any(|k| doc.get(k).is_some())
}

/// Loads the scenario file at `path`.
pub fn load_scenario(path: &Path) -> Result<Scenario, InputError> {
    let origin = path.display().to_string();
    let mut docs = manifest::parse_documents(&manifest::read_text(path)?, &origin)?;
    match (docs.pop(), docs.is_empty()) {
        (Some(doc), true) if is_scenario(&doc) => parse_scenario(doc, &origin),
        _ => Err(InputError::new(
            origin,
            "not a scenario file: expected one document with `objects`, `schedulerConf` and `expect`",
        )),
    }
}

/// Builds a scenario from its document; `path` names it in errors.
pub fn parse_scenario(doc: Value, path: &str) -> Result<Scenario, InputError> {
    let raw: RawScenario = serde_json::from_value(doc.clone()).map_err(|e| {
        let err = InputError::new(path, e);
        match manifest::failing_field::<RawScenario>(&doc) {
            Some(field) => err.field(field),
            None => err,
        }
    })?;
    let now = match &raw.now {
        Some(text) => Time::parse(text).map_err(|e| InputError::new(path, e).field("now"))?,
        None => DEFAULT_NOW,
    };
    let mut objects = Vec::new();
    let mut skipped = Vec::new();
    let mut names = manifest::UniqueNames::default();
    for (i, value) in raw.objects.into_iter().enumerate() {
        let location = format!("objects[{i}]");
        match manifest::decode(&value, None, path, &location)? {
            Decoded::Object(o) => {
                names
                    .admit(&o, &format!("{path}: {location}"))
                    .map_err(|e| {
                        InputError::new(path, e)
                            .at(&location)
                            .object(manifest::describe_object(&o))
                    })?;
                objects.push(o);
            }
            Decoded::Skipped(what) => skipped.push(format!("{path}: {location}: skipped {what}")),
        }
    }
    objects.extend(node_metrics_objects(&raw.node_metrics, now, path)?);
    let sharding = match raw.sharding {
        Some(s) => Sharding {
            mode: ShardingMode::parse(&s.mode)
                .map_err(|e| InputError::new(path, e).field("sharding.mode"))?,
            name: s.name,
        },
        None => Sharding::default(),
    };
    Ok(Scenario {
        path: path.to_string(),
        name: raw.name,
        origin: raw.origin,
        scheduler_conf: raw.scheduler_conf,
        now,
        objects,
        sharding,
        skipped,
        expect: raw.expect,
        notes: raw.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scenario_is_told_apart_from_a_manifest() {
        assert!(is_scenario(&json!({"name": "x", "objects": []})));
        assert!(!is_scenario(&json!({"kind": "Pod", "objects": []})));
        assert!(!is_scenario(&json!({"name": "x"})));
    }

    #[test]
    fn objects_and_expectations_are_read() {
        let doc = json!({
            "name": "two pods",
            "schedulerConf": "actions: allocate\n",
            "objects": [{"kind": "Node", "metadata": {"name": "n1"}}, {"kind": "Secret", "metadata": {"name": "s"}}],
            "expect": {"binds": {"ns/p": "n1"}, "bindCount": 1},
        });
        let s = parse_scenario(doc, "case.yaml").unwrap();
        assert_eq!(s.objects.len(), 1);
        assert_eq!(s.skipped, ["case.yaml: objects[1]: skipped Secret s"]);
        assert_eq!(s.expect.bind_count, Some(1));
    }

    #[test]
    fn two_queues_of_one_name_in_a_scenario_are_refused() {
        let q = json!({"kind": "Queue", "metadata": {"name": "q"}});
        let doc = json!({"objects": [q.clone(), q]});
        assert_eq!(
            parse_scenario(doc, "case.yaml").unwrap_err().to_string(),
            "case.yaml: objects[1]: Queue q: duplicate name: case.yaml: objects[0] already has this Queue (names are unique per kind and namespace, as in a cluster)"
        );
    }

    #[test]
    fn the_clock_is_the_stated_now_or_the_default_and_metrics_age_counts_back_from_it() {
        let doc = json!({
            "now": "2025-06-01T08:30:00Z",
            "objects": [],
            "nodeMetrics": {"n1": {"cpuUsageAvg": {"10m": 40}, "metricsAge": "1m"}},
        });
        let s = parse_scenario(doc, "case.yaml").unwrap();
        assert_eq!(s.now, Time::parse("2025-06-01T08:30:00Z").unwrap());
        match &s.objects[..] {
            [ClusterObject::NodeMetrics(m)] => assert_eq!(
                m.averages.as_ref().unwrap().metrics_time.as_deref(),
                Some("2025-06-01T08:29:00Z")
            ),
            other => panic!("{other:?}"),
        }
        let plain = parse_scenario(json!({"objects": []}), "case.yaml").unwrap();
        assert_eq!(plain.now, DEFAULT_NOW);
        let e = parse_scenario(json!({"now": "noon"}), "case.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("case.yaml: field now:"), "{e}");
    }

    #[test]
    fn sharding_flags_are_read_with_volcanos_default_name_and_a_bad_mode_is_named() {
        let doc = json!({"objects": [], "sharding": {"mode": "soft"}});
        let s = parse_scenario(doc, "case.yaml").unwrap();
        assert_eq!(s.sharding.mode, ShardingMode::Soft);
        assert_eq!(s.sharding.name, "volcano");
        let plain = parse_scenario(json!({"objects": []}), "case.yaml").unwrap();
        assert_eq!(plain.sharding.mode, ShardingMode::None);
        let e = parse_scenario(json!({"sharding": {"mode": "firm"}}), "case.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("case.yaml: field sharding.mode:"), "{e}");
    }

    #[test]
    fn misspelt_expectation_is_refused_by_field() {
        let e = parse_scenario(json!({"objects": [], "expect": {"bindz": {}}}), "case.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("case.yaml: field expect.bindz: unknown field `bindz`"),
            "{e}"
        );
    }

    #[test]
    fn bad_object_is_named_by_index() {
        let doc = json!({"objects": [{"kind": "Node", "metadata": {"name": "n1"}, "spec": {"unschedulable": "maybe"}}]});
        let e = parse_scenario(doc, "case.yaml").unwrap_err().to_string();
        assert!(
            e.starts_with("case.yaml: objects[0]: Node n1: field spec.unschedulable: invalid type"),
            "{e}"
        );
    }

    #[test]
    fn a_manifest_is_not_a_scenario_file() {
        let dir =
            crate::test_dir::TestDir::new(&[("m.yaml", "kind: Node\nmetadata: {name: n1}\n")]);
        let e = load_scenario(&dir.join("m.yaml")).unwrap_err().to_string();
        assert!(e.contains("not a scenario file"), "{e}");
    }
}
