//! Feeding the metrics: what a session reported (`SessionMetrics`), a task reaching a stage,
//! a PodGroup seen, and the series dropped with a job or a queue. Volcano feeds most of these
//! from inside its session; tephra's session records the facts and this maps them.

use std::time::{SystemTime, UNIX_EPOCH};

use tephra_engine::api::Time;
use tephra_engine::framework::{EvictingAction, QueueFigures, SessionMetrics};

use super::{Metrics, QueueStat};

/// The wall clock as Unix milliseconds.
pub fn unix_millis() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or_default()
}

/// Milliseconds from `created` (whole seconds, as Kubernetes keeps it) to `now_ms`, never
/// negative (Volcano: metrics/metrics.go, Duration).
fn since(created: Time, now_ms: f64) -> f64 {
    (now_ms - created.0 as f64 * 1000.0).max(0.0)
}

/// The stages of `task_scheduling_latency_milliseconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStage {
    /// An unbound pod first seen.
    Watched,
    /// A task committed to a node at session close.
    Assumed,
    /// A bind past its pre-bind step.
    PreBound,
    /// A bind the API accepted.
    Bound,
}

impl TaskStage {
    fn label(self) -> &'static str {
        match self {
            TaskStage::Watched => "Watched",
            TaskStage::Assumed => "Assumed",
            TaskStage::PreBound => "PreBound",
            TaskStage::Bound => "Bound",
        }
    }
}

impl Metrics {
    /// Records what one session reported, at wall-clock time `now_ms`.
    pub fn record_session(&self, m: &SessionMetrics, now_ms: f64) {
        for (timings, point) in [
            (&m.plugin_open, "OnSessionOpen"),
            (&m.plugin_close, "OnSessionClose"),
        ] {
            for t in timings {
                self.plugin_scheduling_latency
                    .with_label_values(&[t.plugin.as_str(), point])
                    .observe(t.took.as_secs_f64() * 1000.0);
            }
        }
        for job in &m.jobs_assumed {
            let labels = [&*job.name, job.queue.as_str(), &*job.namespace];
            let took = since(job.created, now_ms);
            self.e2e_job_scheduling_duration
                .with_label_values(&labels)
                .set(took);
            self.e2e_job_scheduling_last_time
                .with_label_values(&labels)
                .set((now_ms / 1000.0).floor());
            for _ in 0..job.tasks {
                self.e2e_job_scheduling_latency.observe(took);
            }
        }
        self.total_preemption_attempts
            .inc_by(m.preemption_attempts as f64);
        if let Some(victims) = m.preemption_victims {
            self.pod_preemption_victims.set(victims as f64);
        }
        for (action, &count) in EvictingAction::ALL.iter().zip(&m.eviction_transactions) {
            if count > 0 {
                self.eviction_transactions
                    .with_label_values(&[action.name()])
                    .inc_by(count as f64);
            }
        }
        if let Some(gang) = &m.gang {
            for (job, unready) in &gang.unready_tasks {
                self.unschedule_task_count
                    .with_label_values(&[&**job])
                    .set(f64::from(*unready));
            }
            for job in &gang.retried {
                self.job_retry_counts.with_label_values(&[&**job]).inc();
            }
            self.unschedule_job_count.set(gang.retried.len() as f64);
        }
        for (namespace, name, share) in &m.job_shares {
            self.job_share
                .with_label_values(&[&**namespace, &**name])
                .set(*share);
        }
        for figures in &m.queues {
            self.record_queue(figures);
        }
        for (stage, timings) in [
            ("Predicate", &m.search.predicate),
            ("Scoring", &m.search.scoring),
        ] {
            let h = self.scheduling_stage_duration.with_label_values(&[stage]);
            for took in timings {
                h.observe(took.as_secs_f64() * 1000.0);
            }
        }
    }

    fn record_queue(&self, f: &QueueFigures) {
        let mut known = self.known_scalars.lock().unwrap_or_else(|p| p.into_inner());
        for (stat, r) in [
            (QueueStat::Allocated, &f.allocated),
            (QueueStat::Request, &f.request),
            (QueueStat::Inqueue, &f.inqueue),
            (QueueStat::Deserved, &f.deserved),
            (QueueStat::Capacity, &f.capacity),
            (QueueStat::RealCapacity, &f.real_capacity),
        ] {
            if let Some(r) = r {
                self.queues.set(&mut known, stat, &f.name, r);
            }
        }
        let queue = [f.name.as_str()];
        if let Some(share) = f.share {
            self.queues.share.with_label_values(&queue).set(share);
        }
        if let Some(weight) = f.weight {
            self.queues.weight.with_label_values(&queue).set(weight);
        }
        if let Some(overused) = f.overused {
            self.queues
                .overused
                .with_label_values(&queue)
                .set(f64::from(u8::from(overused)));
        }
    }

    /// A task created at `created` reached `stage` at `now_ms`.
    pub fn task_reached(&self, stage: TaskStage, created: Time, now_ms: f64) {
        self.task_scheduling_latency
            .with_label_values(&[stage.label()])
            .observe(since(created, now_ms));
    }

    /// A PodGroup added or updated: its job's scheduling start time is the PodGroup's creation
    /// (Volcano: cache/event_handlers.go, setPodGroup).
    pub fn job_seen(&self, namespace: &str, name: &str, queue: &str, created: Time) {
        self.e2e_job_scheduling_start_time
            .with_label_values(&[name, queue, namespace])
            .set(created.0 as f64);
    }

    /// A job left the cache: its series go (Volcano: metrics/job.go, DeleteJobMetrics).
    pub fn forget_job(&self, namespace: &str, name: &str, queue: &str) {
        let job = [name, queue, namespace];
        let _ = self.e2e_job_scheduling_duration.remove_label_values(&job);
        let _ = self.e2e_job_scheduling_start_time.remove_label_values(&job);
        let _ = self.e2e_job_scheduling_last_time.remove_label_values(&job);
        let _ = self.unschedule_task_count.remove_label_values(&[name]);
        let _ = self.job_share.remove_label_values(&[namespace, name]);
        let _ = self.job_retry_counts.remove_label_values(&[name]);
    }

    /// A queue was deleted: its series go.
    pub fn forget_queue(&self, name: &str) {
        let mut known = self.known_scalars.lock().unwrap_or_else(|p| p.into_inner());
        self.queues.delete(&mut known, name);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use tephra_engine::framework::{GangFigures, JobAssumed, PluginTiming, SearchTimings};
    use tephra_engine::model::{Dim, Resource};

    use super::*;

    fn sample(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    fn session() -> SessionMetrics {
        let gpu = |n: f64| {
            let mut r = Resource::cpu_mem(2000.0, 1024.0);
            r.set_scalar(Dim::of("nvidia.com/gpu"), n);
            r
        };
        SessionMetrics {
            plugin_open: vec![PluginTiming {
                plugin: "gang".into(),
                took: Duration::from_micros(300),
            }],
            plugin_close: vec![PluginTiming {
                plugin: "gang".into(),
                took: Duration::from_micros(200),
            }],
            jobs_assumed: vec![JobAssumed {
                namespace: "ns".into(),
                name: "j".into(),
                queue: "q".into(),
                created: Time(100),
                tasks: 2,
            }],
            preemption_attempts: 3,
            preemption_victims: Some(2),
            eviction_transactions: [1, 0, 0, 2],
            gang: Some(GangFigures {
                unready_tasks: vec![(Arc::from("j"), 0), (Arc::from("k"), 3)],
                retried: vec![Arc::from("k")],
            }),
            job_shares: vec![(Arc::from("ns"), Arc::from("j"), 0.25)],
            queues: vec![QueueFigures {
                allocated: Some(gpu(1000.0)),
                deserved: Some(gpu(2000.0)),
                share: Some(0.5),
                weight: Some(3.0),
                overused: Some(true),
                ..QueueFigures::named("q")
            }],
            search: SearchTimings {
                predicate: vec![Duration::from_micros(150); 3],
                scoring: vec![Duration::from_micros(250)],
            },
        }
    }

    #[test]
    fn a_sessions_report_feeds_volcanos_series() {
        let m = Metrics::new().unwrap();
        m.record_session(&session(), 103_500.0);
        let t = m.render();
        let v = |s: &str| sample(&t, s).unwrap_or_else(|| panic!("no {s} in\n{t}"));
        assert_eq!(
            v(
                "volcano_plugin_scheduling_latency_milliseconds_sum{OnSession=\"OnSessionOpen\",plugin=\"gang\"}"
            ),
            0.3
        );
        assert_eq!(
            v(
                "volcano_e2e_job_scheduling_duration{job_name=\"j\",job_namespace=\"ns\",queue=\"q\"}"
            ),
            3500.0
        );
        assert_eq!(
            v(
                "volcano_e2e_job_scheduling_last_time{job_name=\"j\",job_namespace=\"ns\",queue=\"q\"}"
            ),
            103.0
        );
        assert_eq!(
            v("volcano_e2e_job_scheduling_latency_milliseconds_count"),
            2.0
        );
        assert_eq!(v("volcano_total_preemption_attempts"), 3.0);
        assert_eq!(v("volcano_pod_preemption_victims"), 2.0);
        assert_eq!(
            v("volcano_eviction_transactions_total{action=\"preempt\"}"),
            1.0
        );
        assert_eq!(
            v("volcano_eviction_transactions_total{action=\"gangreclaim\"}"),
            2.0
        );
        assert!(
            !t.contains("action=\"reclaim\""),
            "an action never counted has no series"
        );
        assert_eq!(v("volcano_unschedule_task_count{job_id=\"j\"}"), 0.0);
        assert_eq!(v("volcano_unschedule_task_count{job_id=\"k\"}"), 3.0);
        assert_eq!(v("volcano_job_retry_counts{job_id=\"k\"}"), 1.0);
        assert_eq!(v("volcano_unschedule_job_count"), 1.0);
        assert_eq!(v("volcano_job_share{job_id=\"j\",job_ns=\"ns\"}"), 0.25);
        assert_eq!(
            v("volcano_queue_allocated_milli_cpu{queue_name=\"q\"}"),
            2000.0
        );
        assert_eq!(
            v("volcano_queue_deserved_memory_bytes{queue_name=\"q\"}"),
            1024.0
        );
        assert_eq!(
            v(
                "volcano_queue_allocated_scalar_resources{queue_name=\"q\",resource=\"nvidia.com/gpu\"}"
            ),
            1000.0
        );
        assert_eq!(v("volcano_queue_share{queue_name=\"q\"}"), 0.5);
        assert_eq!(v("volcano_queue_weight{queue_name=\"q\"}"), 3.0);
        assert_eq!(v("volcano_queue_overused{queue_name=\"q\"}"), 1.0);
        assert!(
            !t.contains("volcano_queue_request_milli_cpu{"),
            "request was not reported"
        );
        assert_eq!(
            v("volcano_scheduling_stage_duration_milliseconds_count{stage=\"Predicate\"}"),
            3.0
        );
        assert_eq!(
            v("volcano_scheduling_stage_duration_milliseconds_sum{stage=\"Scoring\"}"),
            0.25
        );
    }

    #[test]
    fn a_scalar_a_queue_no_longer_reports_drops_to_zero() {
        let m = Metrics::new().unwrap();
        m.record_session(&session(), 0.0);
        let mut later = session();
        later.queues[0].allocated = Some(Resource::cpu_mem(1.0, 1.0));
        m.record_session(&later, 0.0);
        let t = m.render();
        assert_eq!(
            sample(
                &t,
                "volcano_queue_allocated_scalar_resources{queue_name=\"q\",resource=\"nvidia.com/gpu\"}"
            ),
            Some(0.0)
        );
    }

    #[test]
    fn a_forgotten_job_or_queue_leaves_no_series() {
        let m = Metrics::new().unwrap();
        m.job_seen("ns", "j", "q", Time(100));
        m.record_session(&session(), 200_000.0);
        m.forget_job("ns", "j", "q");
        m.forget_queue("q");
        let t = m.render();
        assert!(!t.contains("job_name=\"j\""), "{t}");
        assert!(!t.contains("job_id=\"j\""), "{t}");
        assert!(!t.contains("queue_name=\"q\""), "{t}");
        assert!(t.contains("job_id=\"k\""), "other jobs stay");
    }

    #[test]
    fn a_task_stage_is_timed_from_the_pods_creation() {
        let m = Metrics::new().unwrap();
        m.task_reached(TaskStage::Watched, Time(10), 10_060.0);
        m.task_reached(TaskStage::Bound, Time(20), 10_000.0);
        let t = m.render();
        assert_eq!(
            sample(
                &t,
                "volcano_task_scheduling_latency_milliseconds_sum{stage=\"Watched\"}"
            ),
            Some(60.0)
        );
        assert_eq!(
            sample(
                &t,
                "volcano_task_scheduling_latency_milliseconds_sum{stage=\"Bound\"}"
            ),
            Some(0.0),
            "a clock behind the creation counts as no time"
        );
    }
}
