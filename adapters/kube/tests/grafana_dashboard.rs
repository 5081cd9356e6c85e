//! deploy/grafana/tephra-scheduler.json queries only series vc-scheduler exports: every metric
//! name in its PromQL is a series `Metrics` registers (`Metrics::series_names`), and it imports as Volcano's does, through a
//! `${DS_PROMETHEUS}` data source input.

use std::path::Path;

use serde_json::Value;
use tephra_kube::metrics::Metrics;

const DASHBOARD: &str = "../../deploy/grafana/tephra-scheduler.json";
const DATASOURCE: &str = "${DS_PROMETHEUS}";

fn dashboard() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DASHBOARD);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every panel, those inside rows included.
fn panels(d: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for p in d["panels"].as_array().expect("panels") {
        out.push(p);
        out.extend(p["panels"].as_array().into_iter().flatten());
    }
    out
}

/// PromQL words that take a parenthesised list of label names.
const LABEL_LIST_KEYWORDS: [&str; 6] = [
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];
const OPERATOR_KEYWORDS: [&str; 5] = ["and", "or", "unless", "bool", "offset"];
/// Aggregation operators, which may be followed by `by (…)` before their parenthesis.
const AGGREGATIONS: [&str; 12] = [
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
];

/// The metric names an expression selects: its identifiers that are not function names, label
/// names, keywords, numbers, strings, label matchers (`{…}`) or ranges (`[…]`).
fn metric_names(expr: &str) -> Vec<String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut names = Vec::new();
    let mut i = 0;
    let skip_to = |i: usize, close: char| {
        let mut j = i;
        while j < chars.len() && chars[j] != close {
            if chars[j] == '"' {
                j += 1;
                while j < chars.len() && chars[j] != '"' {
                    j += if chars[j] == '\\' { 2 } else { 1 };
                }
            }
            j += 1;
        }
        j + 1
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            i = skip_to(i + 1, '}');
        } else if c == '[' {
            i = skip_to(i + 1, ']');
        } else if c == '"' {
            i = skip_to(i + 1, '"');
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || "_:".contains(chars[i])) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mut next = i;
            while next < chars.len() && chars[next].is_whitespace() {
                next += 1;
            }
            let called = chars.get(next) == Some(&'(');
            if LABEL_LIST_KEYWORDS.contains(&word.as_str()) {
                if called {
                    i = skip_to(next + 1, ')');
                }
            } else if !called
                && !OPERATOR_KEYWORDS.contains(&word.as_str())
                && !AGGREGATIONS.contains(&word.as_str())
            {
                names.push(word);
            }
        } else {
            i += 1;
        }
    }
    names
}

/// `name` is a series `exported` lists.
fn is_exported(name: &str, exported: &[String]) -> bool {
    exported.iter().any(|e| e == name)
}

/// Every PromQL expression of the dashboard: the panels' targets and the variables' queries
/// (`label_values(METRIC, LABEL)` read as its metric).
fn expressions(d: &Value) -> Vec<String> {
    let mut out: Vec<String> = panels(d)
        .iter()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .map(|t| {
            t["expr"]
                .as_str()
                .expect("a target has an expr")
                .to_string()
        })
        .collect();
    for v in d["templating"]["list"].as_array().into_iter().flatten() {
        let query = v["definition"]
            .as_str()
            .expect("a variable has a definition");
        let inner = query
            .strip_prefix("label_values(")
            .and_then(|q| q.split_once(','))
            .map(|(metric, _)| metric.trim().to_string())
            .unwrap_or_else(|| {
                panic!("variable query {query:?} is not label_values(METRIC, LABEL)")
            });
        out.push(inner);
    }
    out
}

#[test]
fn every_queried_metric_is_one_vc_scheduler_exports() {
    let exported = Metrics::new().unwrap().series_names().to_vec();
    let d = dashboard();
    let mut queried: Vec<String> = expressions(&d)
        .iter()
        .flat_map(|e| metric_names(e))
        .collect();
    queried.sort();
    queried.dedup();
    let unknown: Vec<&String> = queried
        .iter()
        .filter(|n| !is_exported(n, &exported))
        .collect();
    assert!(
        unknown.is_empty(),
        "not exported by vc-scheduler: {unknown:?}"
    );
    for wanted in [
        "volcano_e2e_scheduling_latency_milliseconds_bucket",
        "volcano_action_scheduling_latency_milliseconds_bucket",
        "volcano_plugin_scheduling_latency_milliseconds_bucket",
        "volcano_pod_preemption_victims",
        "volcano_queue_allocated_milli_cpu",
        "rest_client_requests_total",
        "tephra_api_writes_total",
    ] {
        assert!(
            queried.iter().any(|q| q == wanted),
            "{wanted} not charted: {queried:?}"
        );
    }
}

#[test]
fn the_dashboard_imports_through_a_prometheus_datasource_input() {
    let d = dashboard();
    let input = &d["__inputs"][0];
    assert_eq!(
        (input["name"].as_str(), input["pluginId"].as_str()),
        (Some("DS_PROMETHEUS"), Some("prometheus"))
    );
    let mut ids = Vec::new();
    for p in panels(&d) {
        ids.push(p["id"].as_u64().expect("a panel has an id"));
        if p["type"] == "row" {
            continue;
        }
        let title = p["title"].as_str().unwrap_or("?");
        assert_eq!(p["datasource"]["uid"], DATASOURCE, "panel {title}");
        for t in p["targets"].as_array().expect("targets") {
            assert_eq!(t["datasource"]["uid"], DATASOURCE, "panel {title}");
        }
    }
    let count = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), count, "panel ids are unique");
}

#[test]
fn names_are_read_past_functions_labels_and_ranges() {
    let expr = r#"histogram_quantile(0.99, sum by (verb, le) (rate(a_bucket{job=~"$job", x="y}"}[$__rate_interval]))) / on (x) b_total offset 5m"#;
    assert_eq!(metric_names(expr), ["a_bucket", "b_total"]);
    let exported = Metrics::new().unwrap().series_names().to_vec();
    assert!(is_exported(
        "volcano_e2e_scheduling_latency_milliseconds_count",
        &exported
    ));
    assert!(
        is_exported("volcano_schedule_attempts_total", &exported),
        "registered, never fed"
    );
    assert!(!is_exported(
        "volcano_update_snapshot_duration_milliseconds_bucket",
        &exported
    ));
    assert!(!is_exported(
        "volcano_pod_preemption_victims_bucket",
        &exported
    ));
}
