//! Broken manifests, objects and scenario files give one-line errors that name the culprit,
//! never a panic.

use tephra_adapters::manifest::parse_manifest;
use tephra_adapters::scenario::parse_scenario;

/// `(input, text the error must contain)`.
const BROKEN_MANIFESTS: &[(&str, &str)] = &[
    ("kind: Pod\nmetadata: [\n", "m.yaml: line 2"),
    ("{\"kind\": \"Pod\",", "m.yaml: invalid JSON"),
    (
        "- just\n- a list\n",
        "m.yaml: document 0: expected an object",
    ),
    ("42\n", "m.yaml: document 0: expected an object"),
    ("metadata: {name: p}\n", "m.yaml: document 0: no `kind`"),
    (
        "kind: [Pod]\n",
        "m.yaml: document 0: `kind` must be a string",
    ),
    ("kind: Pod\n", "Pod (unnamed): field metadata.name: missing"),
    (
        "kind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{resources: {requests: {cpu: lots}}}]}\n",
        "Pod ns/p: field spec.containers[0].resources.requests.cpu: quantities must match",
    ),
    (
        "kind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: [1]}}\n",
        "Node n: field status.allocatable.cpu",
    ),
    (
        "kind: Queue\nmetadata: {name: q}\nspec: {weight: 1.5}\n",
        "Queue q: field spec.weight",
    ),
    (
        "kind: PodGroup\nmetadata: {name: pg}\nspec: {minMember: three}\n",
        "PodGroup pg: field spec.minMember",
    ),
    (
        "kind: Pod\nmetadata: {name: p, creationTimestamp: yesterday}\n",
        "field metadata.creationTimestamp",
    ),
    (
        "kind: HyperNode\nmetadata: {name: h}\nspec: {tier: top}\n",
        "HyperNode h: field spec.tier",
    ),
    (
        "kind: PriorityClass\nmetadata: {name: pc}\nvalue: high\n",
        "PriorityClass pc: field value",
    ),
    (
        "kind: Node\nmetadata: {name: n}\nspec: {taints: {key: a}}\n",
        "Node n: field spec.taints",
    ),
    (
        "kind: Node\nmetadata: {name: ok}\n---\nkind: Pod\nmetadata: {name: p, labels: 3}\n",
        "m.yaml: document 1: Pod",
    ),
    (
        "kind: List\nitems: {a: 1}\n",
        "m.yaml: document 0: List: field items: must be a sequence",
    ),
    (
        "kind: List\nitems: [{kind: Node}]\n",
        "m.yaml: document 0 items[0]: Node (unnamed)",
    ),
    ("kind: Pod\n\tmetadata: {}\n", "m.yaml: "),
    (
        "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n",
        "m.yaml: document 0: no `kind`",
    ),
    (
        "kind: Pod\nmetadata: {name: p}\n---\n\u{0}\u{1}\u{2}\n",
        "m.yaml: ",
    ),
];

#[test]
fn broken_manifests_are_refused_with_a_located_one_line_error() {
    for (input, expected) in BROKEN_MANIFESTS {
        let e = match parse_manifest(input, "m.yaml") {
            Ok(m) => panic!("accepted {input:?} as {:?}", m.objects),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains(expected),
            "error for {input:?} is {e:?}, expected it to contain {expected:?}"
        );
        assert!(!e.contains('\n'), "error for {input:?} spans lines: {e:?}");
    }
}

#[test]
fn deeply_nested_input_is_refused_not_overflowed() {
    for depth in [100, 100_000] {
        let yaml = format!(
            "kind: Pod\nmetadata: {{name: p}}\nspec: {{nodeSelector: {}{}}}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(parse_manifest(&yaml, "m.yaml").is_err());
        let json = format!(
            "{{\"kind\": \"Pod\", \"spec\": {}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(parse_manifest(&json, "m.json").is_err());
    }
}

/// Scenario documents (as JSON text) and what their error must contain.
const BROKEN_SCENARIOS: &[(&str, &str)] = &[
    (
        r#"{"objects": 5}"#,
        "case.yaml: field objects: invalid type",
    ),
    (
        r#"{"objects": [], "expect": {"binds": [1]}}"#,
        "case.yaml: field expect.binds: invalid type",
    ),
    (
        r#"{"objects": [], "expect": {"bindz": {}}}"#,
        "case.yaml: field expect.bindz: unknown field",
    ),
    (
        r#"{"objects": [], "schedulerConf": ["a"]}"#,
        "case.yaml: field schedulerConf: invalid type",
    ),
    (
        r#"{"objects": [{"kind": "Pod"}]}"#,
        "case.yaml: objects[0]: Pod (unnamed): field metadata.name: missing",
    ),
    (
        r#"{"objects": [{"metadata": {"name": "x"}}]}"#,
        "case.yaml: objects[0]: no `kind`",
    ),
    (
        r#"{"objects": [], "expect": {"nodeOrderScores": {"ns/p": {"n1": "high"}}}}"#,
        "field expect.nodeOrderScores",
    ),
];

#[test]
fn broken_scenarios_are_refused_with_a_located_one_line_error() {
    for (input, expected) in BROKEN_SCENARIOS {
        let doc: serde_json::Value = serde_json::from_str(input).expect("test input is JSON");
        let e = match parse_scenario(doc, "case.yaml") {
            Ok(s) => panic!("accepted {input} as {s:?}"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains(expected),
            "error for {input} is {e:?}, expected it to contain {expected:?}"
        );
        assert!(!e.contains('\n'), "error for {input} spans lines: {e:?}");
    }
}
