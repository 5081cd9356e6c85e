//! Comparing observations with a scenario's expectations, each `expect` key as one check with
//! the expected and actual values written out for people.

use std::collections::BTreeMap;
use std::fmt::Display;

use super::observe::Observed;
use super::{Expect, PredicateResult};

/// Node-order scores are equal within this.
const SCORE_TOLERANCE: f64 = 1e-8;

/// One `expect` key's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub key: &'static str,
    pub expected: String,
    pub actual: String,
    pub passed: bool,
}

impl Check {
    fn new(key: &'static str, expected: String, actual: String, passed: bool) -> Self {
        Check {
            key,
            expected,
            actual,
            passed,
        }
    }
}

fn map_text<K: Display, V: Display>(entries: impl IntoIterator<Item = (K, V)>) -> String {
    let parts: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

fn list_text<T: Display>(items: impl IntoIterator<Item = T>) -> String {
    let parts: Vec<String> = items.into_iter().map(|i| i.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// Every check the expectations ask for, in README order. `unverifiedJobAllocated` is advisory
/// and never checked.
pub fn compare(expect: &Expect, seen: &Observed) -> Vec<Check> {
    let mut checks = Vec::new();
    if let Some(want) = &expect.binds {
        let got: BTreeMap<&str, &str> = seen
            .binds
            .iter()
            .map(|(p, n)| (p.as_str(), n.as_str()))
            .collect();
        let passed = got.len() == want.len()
            && want
                .iter()
                .all(|(p, n)| got.get(p.as_str()) == Some(&n.as_str()));
        checks.push(Check::new("binds", map_text(want), map_text(&got), passed));
    }
    if let Some(want) = expect.bind_count {
        checks.push(Check::new(
            "bindCount",
            want.to_string(),
            seen.binds.len().to_string(),
            want == seen.binds.len(),
        ));
    }
    if let Some(want) = &expect.evictions {
        let (mut want, mut got) = (want.clone(), seen.evictions.clone());
        want.sort();
        got.sort();
        let passed = want == got;
        checks.push(Check::new(
            "evictions",
            list_text(want),
            list_text(got),
            passed,
        ));
    }
    if let Some(want) = expect.eviction_count {
        let got = seen.evictions.len();
        checks.push(Check::new(
            "evictionCount",
            want.to_string(),
            got.to_string(),
            want == got,
        ));
    }
    if let Some(want) = &expect.pipelined {
        checks.push(pipelined(want, seen));
    }
    if let Some(want) = &expect.pod_group_phases {
        let got = |job: &str| {
            seen.pod_group_phases
                .get(job)
                .map_or("<not in session>", String::as_str)
        };
        let passed = want.iter().all(|(job, phase)| got(job) == phase);
        checks.push(Check::new(
            "podGroupPhases",
            map_text(want),
            map_text(want.keys().map(|j| (j, got(j)))),
            passed,
        ));
    }
    if let Some(want) = &expect.task_status_counts {
        checks.push(task_status_counts(want, seen));
    }
    if let Some(want) = &expect.bind_counts_per_hyper_node {
        let got = &seen.bind_counts_per_hyper_node;
        checks.push(Check::new(
            "bindCountsPerHyperNode",
            list_text(want),
            list_text(got),
            want == got,
        ));
    }
    if let Some(want) = &expect.node_order_scores {
        checks.push(node_order_scores(want, seen));
    }
    if let Some(want) = &expect.predicate_results {
        checks.push(predicate_results(want, seen));
    }
    if let Some(want) = &expect.job_enqueueable {
        let got = |job: &str| {
            seen.job_enqueueable
                .get(job)
                .map_or("<not in session>".to_string(), bool::to_string)
        };
        let passed = want.iter().all(|(job, ok)| got(job) == ok.to_string());
        checks.push(Check::new(
            "jobEnqueueable",
            map_text(want),
            map_text(want.keys().map(|j| (j, got(j)))),
            passed,
        ));
    }
    if let Some(want) = expect.victim_task_count {
        checks.push(Check::new(
            "victimTaskCount",
            want.to_string(),
            seen.victim_task_count.to_string(),
            want == seen.victim_task_count,
        ));
    }
    if let Some(want) = &expect.volume_bindings {
        let got = |pod: &String| {
            seen.volume_bindings
                .get(pod)
                .map_or("<not bound>".to_string(), map_text)
        };
        let passed = want.iter().all(|(pod, v)| got(pod) == map_text(v));
        checks.push(Check::new(
            "volumeBindings",
            map_text(want.iter().map(|(p, v)| (p, map_text(v)))),
            map_text(want.keys().map(|p| (p, got(p)))),
            passed,
        ));
    }
    if let Some(want) = &expect.bind_annotations {
        let got = |pod: &String, keys: &BTreeMap<String, String>| {
            let Some(seen) = seen.bind_annotations.get(pod) else {
                return "<not bound>".to_string();
            };
            map_text(keys.iter().map(|(k, want)| {
                let value = match (seen.get(k), want.as_str()) {
                    (None, _) => "<unset>",
                    (Some(_), "*") => "*",
                    (Some(v), _) => v.as_str(),
                };
                (k, value)
            }))
        };
        let passed = want.iter().all(|(pod, v)| got(pod, v) == map_text(v));
        checks.push(Check::new(
            "bindAnnotations",
            map_text(want.iter().map(|(p, v)| (p, map_text(v)))),
            map_text(want.iter().map(|(p, v)| (p, got(p, v)))),
            passed,
        ));
    }
    if let Some(want) = &expect.provisions {
        let got = |pod: &String| {
            seen.provisions
                .get(pod)
                .map_or("<not bound>".to_string(), list_text)
        };
        let passed = want.iter().all(|(pod, v)| got(pod) == list_text(v));
        checks.push(Check::new(
            "provisions",
            map_text(want.iter().map(|(p, v)| (p, list_text(v)))),
            map_text(want.keys().map(|p| (p, got(p)))),
            passed,
        ));
    }
    if let Some(want) = &expect.condition_messages {
        let got = |pod: &String| {
            seen.condition_messages
                .get(pod)
                .map_or("<no condition>", String::as_str)
        };
        let passed = want.iter().all(|(pod, m)| got(pod) == m);
        checks.push(Check::new(
            "conditionMessages",
            map_text(want),
            map_text(want.keys().map(|p| (p, got(p)))),
            passed,
        ));
    }
    if let Some(want) = &expect.backfill_candidate_order {
        let got = &seen.backfill_candidate_order;
        checks.push(Check::new(
            "backfillCandidateOrder",
            list_text(want),
            list_text(got),
            want == got,
        ));
    }
    checks
}

/// Each listed job has a Pipelined task, and all of its Pipelined tasks sit on listed nodes.
fn pipelined(want: &BTreeMap<String, Vec<String>>, seen: &Observed) -> Check {
    let mut passed = true;
    let mut actual = Vec::new();
    for (job, nodes) in want {
        let tasks = seen
            .pipelined
            .get(job)
            .map(Vec::as_slice)
            .unwrap_or_default();
        passed &= !tasks.is_empty() && tasks.iter().all(|(_, n)| nodes.contains(n));
        let text = if tasks.is_empty() {
            "none pipelined".to_string()
        } else {
            list_text(tasks.iter().map(|(pod, node)| format!("{pod} on {node}")))
        };
        actual.push((job, text));
    }
    Check::new(
        "pipelined",
        map_text(want.iter().map(|(j, n)| (j, list_text(n)))),
        map_text(actual),
        passed,
    )
}

/// Each listed status count of each listed job (a missing status counts 0).
fn task_status_counts(want: &BTreeMap<String, BTreeMap<String, u32>>, seen: &Observed) -> Check {
    let mut passed = true;
    let mut actual = Vec::new();
    for (job, counts) in want {
        match seen.task_status_counts.get(job) {
            Some(got) => {
                passed &= counts
                    .iter()
                    .all(|(s, n)| got.get(s).copied().unwrap_or(0) == *n);
                actual.push((job, map_text(got)));
            }
            None => {
                passed = false;
                actual.push((job, "<not in session>".to_string()));
            }
        }
    }
    Check::new(
        "taskStatusCounts",
        map_text(want.iter().map(|(j, c)| (j, map_text(c)))),
        map_text(actual),
        passed,
    )
}

/// Each listed task x node predicate outcome: `true` passes, `false` fails with any code, a
/// code name fails with that code first.
fn predicate_results(
    want: &BTreeMap<String, BTreeMap<String, PredicateResult>>,
    seen: &Observed,
) -> Check {
    let mut passed = true;
    let mut actual = Vec::new();
    for (pod, nodes) in want {
        let mut row = Vec::new();
        for (node, result) in nodes {
            let got = seen
                .predicate_results
                .get(pod)
                .and_then(|r| r.get(node))
                .map_or("<none>", String::as_str);
            passed &= match result {
                PredicateResult::Passes(true) => got == "true",
                PredicateResult::Passes(false) => got != "true" && got != "<none>",
                PredicateResult::FailsWith(code) => got == code,
            };
            row.push((node, got));
        }
        actual.push((pod, map_text(row)));
    }
    Check::new(
        "predicateResults",
        map_text(want.iter().map(|(p, n)| (p, map_text(n)))),
        map_text(actual),
        passed,
    )
}

/// Each listed task x node score within the tolerance.
fn node_order_scores(want: &BTreeMap<String, BTreeMap<String, f64>>, seen: &Observed) -> Check {
    let mut passed = true;
    let mut actual = Vec::new();
    for (pod, nodes) in want {
        let mut row = Vec::new();
        for (node, score) in nodes {
            let got = seen
                .node_order_scores
                .get(pod)
                .and_then(|r| r.get(node))
                .copied();
            passed &= got.is_some_and(|g| (g - score).abs() <= SCORE_TOLERANCE);
            row.push((node, got.map_or("<none>".to_string(), |g| g.to_string())));
        }
        actual.push((pod, map_text(row)));
    }
    Check::new(
        "nodeOrderScores",
        map_text(want.iter().map(|(p, n)| (p, map_text(n)))),
        map_text(actual),
        passed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed_binds(binds: &[(&str, &str)]) -> Observed {
        Observed {
            binds: binds
                .iter()
                .map(|(p, n)| (p.to_string(), n.to_string()))
                .collect(),
            ..Default::default()
        }
    }

    fn map<V: Clone>(entries: &[(&str, V)]) -> BTreeMap<String, V> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn binds_must_match_exactly() {
        let expect = Expect {
            binds: Some(map(&[("ns/p1", "n1".to_string())])),
            ..Default::default()
        };
        assert!(compare(&expect, &observed_binds(&[("ns/p1", "n1")]))[0].passed);
        let extra = compare(
            &expect,
            &observed_binds(&[("ns/p1", "n1"), ("ns/p2", "n1")]),
        );
        assert!(!extra[0].passed);
        assert_eq!(extra[0].actual, "{ns/p1: n1, ns/p2: n1}");
        assert!(!compare(&expect, &observed_binds(&[("ns/p1", "n2")]))[0].passed);
    }

    #[test]
    fn empty_binds_expectation_fails_on_any_bind() {
        let expect = Expect {
            binds: Some(BTreeMap::new()),
            bind_count: Some(0),
            ..Default::default()
        };
        let checks = compare(&expect, &observed_binds(&[("ns/p", "n1")]));
        assert_eq!(checks.iter().filter(|c| !c.passed).count(), 2);
        assert_eq!(
            (checks[0].expected.as_str(), checks[1].actual.as_str()),
            ("{}", "1")
        );
    }

    #[test]
    fn evictions_are_a_multiset() {
        let expect = Expect {
            evictions: Some(vec!["a".into(), "b".into(), "a".into()]),
            ..Default::default()
        };
        let seen = |e: &[&str]| Observed {
            evictions: e.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        assert!(compare(&expect, &seen(&["a", "a", "b"]))[0].passed);
        assert!(!compare(&expect, &seen(&["a", "b"]))[0].passed);
    }

    #[test]
    fn pipelined_needs_a_task_and_only_listed_nodes() {
        let expect = Expect {
            pipelined: Some(map(&[("ns/pg", vec!["n2".to_string()])])),
            ..Default::default()
        };
        let seen = |tasks: &[(&str, &str)]| Observed {
            pipelined: [(
                "ns/pg".to_string(),
                tasks
                    .iter()
                    .map(|(p, n)| (p.to_string(), n.to_string()))
                    .collect(),
            )]
            .into(),
            ..Default::default()
        };
        assert!(compare(&expect, &seen(&[("ns/p", "n2")]))[0].passed);
        assert!(!compare(&expect, &seen(&[("ns/p", "n2"), ("ns/q", "n1")]))[0].passed);
        let none = compare(&expect, &Observed::default());
        assert!(!none[0].passed);
        assert_eq!(none[0].actual, "{ns/pg: none pipelined}");
    }

    #[test]
    fn missing_pod_group_fails_the_phase_check() {
        let expect = Expect {
            pod_group_phases: Some(map(&[("ns/pg", "Inqueue".to_string())])),
            ..Default::default()
        };
        let c = &compare(&expect, &Observed::default())[0];
        assert!(!c.passed);
        assert_eq!(c.actual, "{ns/pg: <not in session>}");
        let seen = Observed {
            pod_group_phases: map(&[("ns/pg", "Inqueue".to_string())]),
            ..Default::default()
        };
        assert!(compare(&expect, &seen)[0].passed);
    }

    #[test]
    fn status_counts_check_listed_statuses_with_absent_as_zero() {
        let want = map(&[("ns/pg", map(&[("Pending", 2), ("Allocated", 0)]))]);
        let expect = Expect {
            task_status_counts: Some(want),
            ..Default::default()
        };
        let seen = |counts: &[(&str, u32)]| Observed {
            task_status_counts: map(&[("ns/pg", map(counts))]),
            ..Default::default()
        };
        assert!(compare(&expect, &seen(&[("Pending", 2), ("Running", 1)]))[0].passed);
        assert!(!compare(&expect, &seen(&[("Pending", 1), ("Allocated", 1)]))[0].passed);
    }

    #[test]
    fn scores_match_within_tolerance() {
        let want = map(&[("ns/p", map(&[("n1", 173.076923076)]))]);
        let expect = Expect {
            node_order_scores: Some(want),
            ..Default::default()
        };
        let seen = |s: f64| Observed {
            node_order_scores: map(&[("ns/p", map(&[("n1", s)]))]),
            ..Default::default()
        };
        assert!(compare(&expect, &seen(2250.0 / 13.0))[0].passed);
        assert!(!compare(&expect, &seen(173.0769))[0].passed);
        assert!(
            !compare(&expect, &Observed::default())[0].passed,
            "a missing score fails"
        );
    }

    #[test]
    fn enqueueable_and_backfill_order_compare_exactly() {
        let expect = Expect {
            job_enqueueable: Some(map(&[("ns/pg", false)])),
            backfill_candidate_order: Some(vec!["b".into(), "a".into()]),
            ..Default::default()
        };
        let seen = Observed {
            job_enqueueable: map(&[("ns/pg", false)]),
            backfill_candidate_order: vec!["a".into(), "b".into()],
            ..Default::default()
        };
        let checks = compare(&expect, &seen);
        assert!(checks[0].passed);
        assert!(!checks[1].passed);
    }

    #[test]
    fn predicate_results_match_pass_any_failure_or_the_first_code() {
        let want: BTreeMap<String, PredicateResult> = [
            ("n1", PredicateResult::Passes(true)),
            ("n2", PredicateResult::Passes(false)),
            (
                "n3",
                PredicateResult::FailsWith("UnschedulableAndUnresolvable".into()),
            ),
        ]
        .into_iter()
        .map(|(n, r)| (n.to_string(), r))
        .collect();
        let expect = Expect {
            predicate_results: Some(map(&[("ns/p", want)])),
            ..Default::default()
        };
        let seen = |n2: &str, n3: &str| Observed {
            predicate_results: map(&[(
                "ns/p",
                map(&[
                    ("n1", "true".to_string()),
                    ("n2", n2.to_string()),
                    ("n3", n3.to_string()),
                ]),
            )]),
            ..Default::default()
        };
        assert!(
            compare(
                &expect,
                &seen("Unschedulable", "UnschedulableAndUnresolvable")
            )[0]
            .passed
        );
        assert!(!compare(&expect, &seen("true", "UnschedulableAndUnresolvable"))[0].passed);
        assert!(!compare(&expect, &seen("Unschedulable", "Unschedulable"))[0].passed);
    }

    #[test]
    fn advisory_allocations_are_not_checked() {
        let expect = Expect {
            unverified_job_allocated: Some(serde_json::json!({"pg1": {"cpu": "10"}})),
            ..Default::default()
        };
        assert!(compare(&expect, &Observed::default()).is_empty());
    }
}
