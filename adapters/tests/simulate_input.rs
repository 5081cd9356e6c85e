//! `tephra simulate` on input as a user brings it: a large `kubectl get -o yaml` dump, pods of
//! other schedulers, limits without requests, and values the API server would refuse.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `tephra simulate` on `files` (name, text) written to a fresh directory.
fn simulate(name: &str, files: &[(&str, String)], args: &[&str]) -> Output {
    let dir = std::env::temp_dir().join(format!("tephra-sim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|(file, text)| {
            let p = dir.join(file);
            std::fs::write(&p, text).unwrap();
            p
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_tephra"))
        .arg("simulate")
        .args(&paths)
        .args(args)
        .output()
        .expect("the tephra binary runs");
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const CLUSTER: &str = "kind: Queue\nmetadata: {name: default}\nspec: {weight: 1}\n---\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n";

/// A pod as `kubectl get -o yaml` prints it, about 300 YAML nodes.
fn kubectl_pod(out: &mut String, i: usize) {
    write!(
        out,
        "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p-{i}\n    namespace: ns\n    uid: u-{i}\n    labels: {{app: web, tier: front, pod-template-hash: abc}}\n  spec:\n    schedulerName: default-scheduler\n    nodeName: n1\n    containers:\n    - name: c\n      image: registry.example/web:1\n      resources: {{requests: {{cpu: 1m, memory: 1Mi}}}}\n      env:\n"
    )
    .unwrap();
    for e in 0..40 {
        writeln!(out, "      - {{name: VAR_{e}, value: v{e}}}").unwrap();
    }
    out.push_str("    tolerations:\n");
    for t in 0..10 {
        writeln!(
            out,
            "    - {{key: k{t}, operator: Exists, effect: NoExecute, tolerationSeconds: 300}}"
        )
        .unwrap();
    }
    out.push_str("  status:\n    phase: Running\n    conditions:\n");
    for c in ["Initialized", "Ready", "ContainersReady", "PodScheduled"] {
        writeln!(out, "    - {{type: {c}, status: 'True', lastProbeTime: null, lastTransitionTime: '2025-01-01T00:00:00Z'}}").unwrap();
    }
}

#[test]
fn a_kubectl_yaml_dump_of_a_thousand_pods_loads() {
    let mut dump = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..1_000 {
        kubectl_pod(&mut dump, i);
    }
    let o = simulate(
        "dump",
        &[("c.yaml", CLUSTER.into()), ("pods.yaml", dump)],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn more_than_1024_documents_load() {
    let pods: String = (0..1_100)
        .map(|i| format!("---\nkind: Pod\nmetadata: {{name: p-{i}, namespace: ns}}\nspec: {{nodeName: n1}}\nstatus: {{phase: Running}}\n"))
        .collect();
    let o = simulate(
        "docs",
        &[("c.yaml", CLUSTER.into()), ("pods.yaml", pods)],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// A pending gang of one in the default queue, with the given container resources.
fn pending_pod(name: &str, scheduler: &str, resources: &str) -> String {
    format!(
        "---\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{minMember: 1, queue: default}}\n---\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, annotations: {{scheduling.k8s.io/group-name: {name}}}}}\nspec: {{schedulerName: {scheduler}, containers: [{{name: c, resources: {resources}}}]}}\nstatus: {{phase: Pending}}\n"
    )
}

#[test]
fn a_negative_memory_request_is_refused_on_one_line_naming_pod_and_field() {
    let pods = pending_pod("p", "volcano", "{requests: {memory: -1Gi}}");
    let o = simulate(
        "negative",
        &[("c.yaml", CLUSTER.into()), ("p.yaml", pods)],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(
        e.contains("p.yaml: document 1: Pod ns/p: field spec.containers[0].resources.requests.memory: must not be negative: -1Gi"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn pods_of_another_scheduler_wait_unless_it_is_named() {
    let pods = pending_pod("theirs", "default-scheduler", "{requests: {cpu: '1'}}");
    let files = [("c.yaml", CLUSTER.to_string()), ("p.yaml", pods)];
    let o = simulate("theirs", &files, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("placed: none"),
        "{}",
        text(&o.stdout)
    );
    assert!(
        text(&o.stderr).contains("1 pending pods name schedulerName \"default-scheduler\", not volcano (--scheduler-name), and are left to it: ns/theirs"),
        "{}",
        text(&o.stderr)
    );
    let o = simulate("named", &files, &["--scheduler-name", "default-scheduler"]);
    assert!(
        text(&o.stdout).contains("ns/theirs -> n1"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn limits_without_requests_are_requested_as_the_api_server_defaults_them() {
    let pods = pending_pod("a", "volcano", "{limits: {cpu: '3'}}")
        + &pending_pod("b", "volcano", "{limits: {cpu: '3'}}");
    let o = simulate(
        "limits",
        &[("c.yaml", CLUSTER.into()), ("p.yaml", pods)],
        &[],
    );
    let out = text(&o.stdout);
    assert_eq!(
        out.matches(" -> n1").count(),
        1,
        "one 3-cpu pod fits 4 cpus:\n{out}"
    );
    assert!(
        out.contains("  waiting:\n    ns/"),
        "the other waits:\n{out}"
    );
}
