//! Every series a Volcano scheduler's `/metrics` serves has data in vc-scheduler's: in one of
//! two queues (the other, empty, has a capability), a job filling the cluster, a
//! higher-priority job that preempts in it, a gang that can never be placed (so it stays
//! admitted, unready and retried), an extended resource for the scalar series; first under
//! proportion, then, reloaded, under capacity (the only plugin that feeds the capacity
//! series). The series Volcano registers but never feeds must stay without data.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, ensure};
use serde_json::{Value, json};

use super::{cleaning, wait_bound};
use crate::cluster::{pod, pod_group, wait_for};
use crate::ctx::Ctx;

const NS: &str = "e2e-metrics-complete";

/// The extended resource the nodes offer and the pods ask for.
const FOO: &str = "example.com/foo";

/// Volcano's scheduler series that its code feeds (Volcano: pkg/scheduler/metrics/metrics.go,
/// job.go, queue.go; fed from pkg/scheduler/scheduler.go, framework/, actions/, plugins/ and
/// cache/).
const FED: &[&str] = &[
    // metrics.go
    "volcano_e2e_scheduling_latency_milliseconds",
    "volcano_open_session_duration_milliseconds",
    "volcano_e2e_job_scheduling_latency_milliseconds",
    "volcano_e2e_job_scheduling_duration",
    "volcano_e2e_job_scheduling_start_time",
    "volcano_e2e_job_scheduling_last_time",
    "volcano_plugin_scheduling_latency_milliseconds",
    "volcano_action_scheduling_latency_milliseconds",
    "volcano_task_scheduling_latency_milliseconds",
    "volcano_scheduling_stage_duration_milliseconds",
    "volcano_pod_preemption_victims",
    "volcano_total_preemption_attempts",
    "volcano_eviction_transactions_total",
    "volcano_unschedule_task_count",
    "volcano_unschedule_job_count",
    // job.go
    "volcano_job_share",
    "volcano_job_retry_counts",
    // queue.go
    "volcano_queue_allocated_milli_cpu",
    "volcano_queue_allocated_memory_bytes",
    "volcano_queue_allocated_scalar_resources",
    "volcano_queue_request_milli_cpu",
    "volcano_queue_request_memory_bytes",
    "volcano_queue_request_scalar_resources",
    "volcano_queue_deserved_milli_cpu",
    "volcano_queue_deserved_memory_bytes",
    "volcano_queue_deserved_scalar_resources",
    "volcano_queue_share",
    "volcano_queue_weight",
    "volcano_queue_overused",
    "volcano_queue_capacity_milli_cpu",
    "volcano_queue_capacity_memory_bytes",
    "volcano_queue_capacity_scalar_resources",
    "volcano_queue_real_capacity_milli_cpu",
    "volcano_queue_real_capacity_memory_bytes",
    "volcano_queue_real_capacity_scalar_resources",
    "volcano_queue_inqueue_milli_cpu",
    "volcano_queue_inqueue_memory_bytes",
    "volcano_queue_inqueue_scalar_resources",
];

/// Volcano's series that nothing in its scheduler feeds (metrics.go UpdatePodScheduleStatus,
/// namespace.go), so a Volcano scrape shows no sample of them either.
const NEVER_FED: &[&str] = &[
    "volcano_schedule_attempts_total",
    "volcano_namespace_share",
    "volcano_namespace_weight",
    "volcano_namespace_weighted_share",
];

/// Go's process collector on Linux (client_golang prometheus/process_collector*.go), which
/// Volcano's `/metrics` serves from the k8s legacy registry.
const PROCESS: &[&str] = &[
    "process_cpu_seconds_total",
    "process_open_fds",
    "process_max_fds",
    "process_virtual_memory_bytes",
    "process_virtual_memory_max_bytes",
    "process_resident_memory_bytes",
    "process_start_time_seconds",
    "process_network_receive_bytes_total",
    "process_network_transmit_bytes_total",
];

/// client-go's request metrics (k8s.io/component-base metrics/prometheus/restclient) that
/// every scheduler's API traffic feeds, and promhttp's scrape metrics around Volcano's handler
/// (pkg/util/util.go, PromHandler).
const CLIENT: &[&str] = &[
    "rest_client_requests_total",
    "rest_client_request_duration_seconds",
    "rest_client_request_size_bytes",
    "rest_client_response_size_bytes",
    "rest_client_rate_limiter_duration_seconds",
    "promhttp_metric_handler_requests_total",
    "promhttp_metric_handler_requests_in_flight",
];

/// The stages each staged histogram must have observed.
const STAGES: &[(&str, &str)] = &[
    ("volcano_task_scheduling_latency_milliseconds", "Watched"),
    ("volcano_task_scheduling_latency_milliseconds", "Assumed"),
    ("volcano_task_scheduling_latency_milliseconds", "PreBound"),
    ("volcano_task_scheduling_latency_milliseconds", "Bound"),
    (
        "volcano_scheduling_stage_duration_milliseconds",
        "Predicate",
    ),
    ("volcano_scheduling_stage_duration_milliseconds", "Scoring"),
    ("volcano_scheduling_stage_duration_milliseconds", "PreBind"),
    ("volcano_scheduling_stage_duration_milliseconds", "Bind"),
];

fn conf(queue_plugin: &str) -> String {
    format!(
        "actions: \"enqueue, allocate, preempt, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n  - name: drf\n    enablePreemptable: false\n  - name: predicates\n  - name: {queue_plugin}\n  - name: nodeorder\n"
    )
}

pub async fn run(ctx: &Ctx) -> Result<()> {
    cleaning(ctx, NS, "mc", body(ctx)).await
}

/// A pod asking for one cpu, 1Gi and one `FOO` (its limit too), at `priority_class`.
fn foo_pod(name: &str, group: &str, priority_class: &str) -> Value {
    let mut p = pod(NS, name, group, "1", "1Gi");
    p["spec"]["priorityClassName"] = json!(priority_class);
    let resources = &mut p["spec"]["containers"][0]["resources"];
    resources["requests"][FOO] = json!("1");
    // An extended resource cannot be overcommitted: its limit must equal its request.
    resources["limits"][FOO] = json!("1");
    p
}

fn group(name: &str, queue: &str, min_member: i32, priority_class: &str) -> Value {
    let mut g = pod_group(NS, name, queue, min_member);
    g["spec"]["priorityClassName"] = json!(priority_class);
    g
}

async fn body(ctx: &Ctx) -> Result<()> {
    let c = &ctx.cluster;
    let labels: BTreeMap<String, String> = [("e2e".to_string(), "mc".to_string())].into();
    for i in 0..2 {
        let resources = json!({"cpu": "4", "memory": "16Gi", "pods": "110", FOO: "8"});
        c.node_with(&format!("mc-{i}"), &labels, resources).await?;
    }
    let mut objects = vec![
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "mc-low"}, "value": 10}),
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "mc-high"}, "value": 1000}),
        json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
            "metadata": {"name": "mc-a"}, "spec": {"weight": 1, "reclaimable": true}}),
        json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
            "metadata": {"name": "mc-b"}, "spec": {"weight": 1, "reclaimable": true,
                "capability": {"cpu": "4", "memory": "16Gi", FOO: "4"}}}),
        group("low", "mc-a", 1, "mc-low"),
    ];
    objects.extend((0..8).map(|i| foo_pod(&format!("low-{i}"), "low", "mc-low")));
    // A gang no node can take (its pods select no node): admitted, never placed. In the
    // filled queue: in another, proportion would deserve it part of the cluster.
    let mut stuck = group("stuck", "mc-a", 2, "mc-low");
    stuck["spec"]["minResources"] = json!({"cpu": "2", "memory": "2Gi", FOO: "2"});
    objects.push(stuck);
    for i in 0..2 {
        let mut p = foo_pod(&format!("stuck-{i}"), "stuck", "mc-low");
        p["spec"]["nodeSelector"] = json!({"e2e": "nowhere"});
        objects.push(p);
    }
    c.create_all(objects).await?;
    let conf_path = ctx.write_conf("metrics-complete", &conf("proportion"))?;
    let mut s = ctx.scheduler("metrics-complete", &conf_path, &["--node-selector=e2e:mc"])?;
    wait_bound(ctx, NS, "low-", 8, Duration::from_secs(30)).await?;
    c.create_all(vec![
        group("high", "mc-a", 1, "mc-high"),
        foo_pod("high-0", "high", "mc-high"),
    ])
    .await?;
    let preempted = "volcano_eviction_transactions_total{action=\"preempt\"}";
    wait_for("a preemption", Duration::from_secs(30), || async {
        Ok(s.metric(preempted).await? >= 1.0)
    })
    .await?;
    ctx.write_conf("metrics-complete", &conf("capacity"))?;
    wait_for(
        "the capacity configuration",
        Duration::from_secs(20),
        || async { Ok(s.log_text().contains("scheduler configuration reloaded")) },
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    check(&s.http_get("/metrics").await?)?;
    s.check_alive()?;
    s.stop().await
}

/// The samples of series `name` (a histogram's `_bucket`, `_sum` and `_count` lines too):
/// (labels, value).
fn samples<'a>(text: &'a str, name: &str) -> Vec<(&'a str, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (metric, labels) = series.split_once('{').unwrap_or((series, ""));
            let base = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| metric.strip_suffix(s))
                .unwrap_or(metric);
            let labels = labels.trim_end_matches('}');
            (metric == name || base == name).then(|| (labels, value.parse().unwrap_or(f64::NAN)))
        })
        .collect()
}

fn check(text: &str) -> Result<()> {
    let mut missing: Vec<&str> = FED
        .iter()
        .chain(PROCESS)
        .chain(CLIENT)
        .copied()
        .filter(|name| samples(text, name).is_empty())
        .collect();
    for (name, stage) in STAGES {
        let count = format!("{name}_count");
        let label = format!("stage=\"{stage}\"");
        let observed = samples(text, &count)
            .iter()
            .any(|(labels, v)| labels.contains(&label) && *v > 0.0);
        if !observed {
            missing.push(stage);
        }
    }
    ensure!(missing.is_empty(), "/metrics has no data for {missing:?}");
    let fed_anyway: Vec<&str> = NEVER_FED
        .iter()
        .copied()
        .filter(|name| !samples(text, name).is_empty())
        .collect();
    ensure!(
        fed_anyway.is_empty(),
        "Volcano never feeds {fed_anyway:?}, vc-scheduler did"
    );
    for scalar in [
        "volcano_queue_allocated_scalar_resources",
        "volcano_queue_inqueue_scalar_resources",
        "volcano_queue_capacity_scalar_resources",
    ] {
        ensure!(
            samples(text, scalar)
                .iter()
                .any(|(labels, _)| labels.contains(FOO)),
            "{scalar} has no {FOO} sample"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_counts_through_its_count_line_and_comments_are_not_samples() {
        let text = "# HELP x_ms help\n# TYPE x_ms histogram\nx_ms_bucket{le=\"1\"} 2\nx_ms_count{stage=\"Bound\"} 2\nx_ms_sum 3.5\ny 1\n";
        assert_eq!(samples(text, "x_ms").len(), 3);
        assert_eq!(samples(text, "x_ms_count"), [("stage=\"Bound\"", 2.0)]);
        assert!(samples(text, "z").is_empty());
    }
}
