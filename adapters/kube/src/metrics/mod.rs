//! Volcano's Prometheus metrics (Volcano: pkg/scheduler/metrics/metrics.go, job.go,
//! namespace.go, queue.go): subsystem `volcano`, no namespace, the same names, types, help,
//! labels and buckets; beside them the process metrics Go's process collector exports and
//! client-go's request metrics, which a Volcano scheduler's `/metrics` also serves.

mod buckets;
mod cycle_phases;
mod feed;
mod process;
mod queue;
mod rest_client;

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use prometheus::{
    Counter, CounterVec, Encoder, Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, Opts,
    Registry, TextEncoder,
};

use tephra_engine::framework::SetAside;

pub use cycle_phases::CyclePhases;
pub use feed::{TaskStage, unix_millis};
pub use queue::{QueueSeries, QueueStat};
pub use rest_client::RestClientMetrics;

use buckets::{ACTION, E2E, JOB, PLUGIN, STAGE, TASK};

/// Every metric the scheduler updates, registered in `registry`.
#[derive(Debug, Clone)]
pub struct Metrics {
    pub registry: Registry,
    pub e2e_scheduling_latency: Histogram,
    pub open_session_duration: Histogram,
    pub e2e_job_scheduling_latency: Histogram,
    pub e2e_job_scheduling_duration: GaugeVec,
    pub e2e_job_scheduling_start_time: GaugeVec,
    pub e2e_job_scheduling_last_time: GaugeVec,
    pub plugin_scheduling_latency: HistogramVec,
    pub action_scheduling_latency: HistogramVec,
    pub task_scheduling_latency: HistogramVec,
    pub scheduling_stage_duration: HistogramVec,
    /// Registered, never fed: Volcano's scheduler does not call `UpdatePodScheduleStatus`.
    pub schedule_attempts: CounterVec,
    pub pod_preemption_victims: Gauge,
    pub total_preemption_attempts: Counter,
    pub eviction_transactions: CounterVec,
    pub unschedule_task_count: GaugeVec,
    pub unschedule_job_count: Gauge,
    pub job_share: GaugeVec,
    pub job_retry_counts: CounterVec,
    /// Registered, never fed: no Volcano plugin calls the namespace updates.
    pub namespace_share: GaugeVec,
    pub namespace_weight: GaugeVec,
    pub namespace_weighted_share: GaugeVec,
    pub queues: QueueSeries,
    /// client-go's `rest_client_*` request metrics.
    pub rest_client: RestClientMetrics,
    /// `tephra_api_writes_total{verb, resource}`, an export of our own.
    pub api_writes: CounterVec,
    /// `tephra_config_problems`: one series at 1 per part of the installed configuration that
    /// is not running; see `show_config_problems`.
    pub config_problems: GaugeVec,
    /// Scrapes served, by HTTP code, and in flight (Go's promhttp.InstrumentMetricHandler,
    /// which Volcano's `/metrics` handler is wrapped in).
    scrapes: CounterVec,
    scrapes_in_flight: Gauge,
    /// Per queue series and queue, the scalar resources it has reported (Volcano sets a
    /// scalar a later update lacks to 0 rather than dropping it).
    known_scalars: Arc<Mutex<queue::KnownScalars>>,
    /// The name of every series registered, sorted.
    series_names: Arc<[String]>,
}

fn histogram(name: &str, help: &str, buckets: &[f64]) -> HistogramOpts {
    HistogramOpts::new(name, help)
        .subsystem("volcano")
        .buckets(buckets.to_vec())
}

fn opts(name: &str, help: &str) -> Opts {
    Opts::new(name, help).subsystem("volcano")
}

/// Registers metrics in one registry, each as it is made, and notes their series' names.
struct Registrar {
    registry: Registry,
    names: RefCell<Vec<String>>,
}

impl Registrar {
    fn register(&self, c: Box<dyn prometheus::core::Collector>) -> Result<(), prometheus::Error> {
        let names = c
            .desc()
            .iter()
            .map(|d| d.fq_name.clone())
            .collect::<Vec<_>>();
        self.registry.register(c)?;
        self.names.borrow_mut().extend(names);
        Ok(())
    }

    fn add<M: prometheus::core::Collector + Clone + 'static>(
        &self,
        m: Result<M, prometheus::Error>,
    ) -> Result<M, prometheus::Error> {
        let m = m?;
        self.register(Box::new(m.clone()))?;
        Ok(m)
    }

    fn histogram(&self, o: HistogramOpts) -> Result<Histogram, prometheus::Error> {
        self.note_histogram_series(self.add(Histogram::with_opts(o)))
    }

    fn histograms(&self, o: HistogramOpts, l: &[&str]) -> Result<HistogramVec, prometheus::Error> {
        self.note_histogram_series(self.add(HistogramVec::new(o, l)))
    }

    /// A histogram is scraped as its `_bucket`, `_sum` and `_count` series.
    fn note_histogram_series<M: prometheus::core::Collector>(
        &self,
        m: Result<M, prometheus::Error>,
    ) -> Result<M, prometheus::Error> {
        let m = m?;
        let mut names = self.names.borrow_mut();
        for desc in m.desc() {
            for suffix in ["_bucket", "_sum", "_count"] {
                names.push(format!("{}{suffix}", desc.fq_name));
            }
        }
        Ok(m)
    }

    fn gauge(&self, o: Opts) -> Result<Gauge, prometheus::Error> {
        self.add(Gauge::with_opts(o))
    }

    fn gauges(&self, o: Opts, labels: &[&str]) -> Result<GaugeVec, prometheus::Error> {
        self.add(GaugeVec::new(o, labels))
    }

    fn counters(&self, o: Opts, labels: &[&str]) -> Result<CounterVec, prometheus::Error> {
        self.add(CounterVec::new(o, labels))
    }
}

impl Metrics {
    /// Registers every Volcano scheduler metric, the process metrics and the API client's
    /// request metrics.
    pub fn new() -> Result<Metrics, prometheus::Error> {
        let r = Registrar {
            registry: Registry::new(),
            names: RefCell::default(),
        };
        r.register(Box::new(process::ProcessCollector::new()?))?;
        let job = ["job_name", "queue", "job_namespace"];
        let mut m = Metrics {
            e2e_scheduling_latency: r.histogram(histogram(
                "e2e_scheduling_latency_milliseconds",
                "Duration of a single scheduling session execution in milliseconds. It covers the entire cycle from session open, action executions to session close.",
                &E2E,
            ))?,
            open_session_duration: r.histogram(histogram(
                "open_session_duration_milliseconds",
                "Duration of opening a scheduling session in milliseconds, including cache snapshot and session initialization.",
                &E2E,
            ))?,
            e2e_job_scheduling_latency: r.histogram(histogram(
                "e2e_job_scheduling_latency_milliseconds",
                "End-to-end job scheduling latency in milliseconds (histogram of per-job duration from creation to last task assumed)",
                &JOB,
            ))?,
            e2e_job_scheduling_duration: r.gauges(
                opts(
                    "e2e_job_scheduling_duration",
                    "Per-job duration from job creation to last task assumed in scheduler cache, in milliseconds",
                ),
                &job,
            )?,
            e2e_job_scheduling_start_time: r.gauges(
                opts(
                    "e2e_job_scheduling_start_time",
                    "E2E job scheduling start time",
                ),
                &job,
            )?,
            e2e_job_scheduling_last_time: r.gauges(
                opts(
                    "e2e_job_scheduling_last_time",
                    "E2E job scheduling last time",
                ),
                &job,
            )?,
            plugin_scheduling_latency: r.histograms(
                histogram(
                    "plugin_scheduling_latency_milliseconds",
                    "Plugin scheduling latency in milliseconds",
                    &PLUGIN,
                ),
                &["plugin", "OnSession"],
            )?,
            action_scheduling_latency: r.histograms(
                histogram(
                    "action_scheduling_latency_milliseconds",
                    "Action scheduling latency in milliseconds",
                    &ACTION,
                ),
                &["action"],
            )?,
            task_scheduling_latency: r.histograms(
                histogram(
                    "task_scheduling_latency_milliseconds",
                    "Task scheduling latency from creation to various stages in milliseconds",
                    &TASK,
                ),
                &["stage"],
            )?,
            scheduling_stage_duration: r.histograms(
                histogram(
                    "scheduling_stage_duration_milliseconds",
                    "Duration of per-task scheduling stages (Predicate, Scoring, PreBind, Bind) in milliseconds",
                    &STAGE,
                ),
                &["stage"],
            )?,
            schedule_attempts: r.counters(
                opts(
                    "schedule_attempts_total",
                    "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
                ),
                &["result"],
            )?,
            pod_preemption_victims: r.gauge(opts(
                "pod_preemption_victims",
                "Number of selected preemption victims",
            ))?,
            total_preemption_attempts: r.add(Counter::with_opts(opts(
                "total_preemption_attempts",
                "Total preemption attempts in the cluster till now",
            )))?,
            eviction_transactions: r.counters(
                opts(
                    "eviction_transactions_total",
                    "Total number of committed eviction transactions, by action",
                ),
                &["action"],
            )?,
            unschedule_task_count: r.gauges(
                opts(
                    "unschedule_task_count",
                    "Number of tasks could not be scheduled",
                ),
                &["job_id"],
            )?,
            unschedule_job_count: r.gauge(opts(
                "unschedule_job_count",
                "Number of jobs could not be scheduled",
            ))?,
            job_share: r.gauges(
                opts("job_share", "Share for one job"),
                &["job_ns", "job_id"],
            )?,
            job_retry_counts: r.counters(
                opts("job_retry_counts", "Number of retry counts for one job"),
                &["job_id"],
            )?,
            namespace_share: r.gauges(
                opts("namespace_share", "Share for one namespace"),
                &["namespace_name"],
            )?,
            namespace_weight: r.gauges(
                opts("namespace_weight", "Weight for one namespace"),
                &["namespace_name"],
            )?,
            namespace_weighted_share: r.gauges(
                opts(
                    "namespace_weighted_share",
                    "Weighted share for one namespace",
                ),
                &["namespace_name"],
            )?,
            queues: QueueSeries::register(&r)?,
            rest_client: RestClientMetrics::register(&r)?,
            api_writes: r.counters(
                Opts::new("tephra_api_writes_total", "API writes by verb and resource"),
                &["verb", "resource"],
            )?,
            config_problems: r.gauges(
                Opts::new(
                    "tephra_config_problems",
                    "Parts of the installed scheduler configuration that do not run (1 each): \
                     kind unknown_plugin, argument (a wrongly typed plugin argument, its default \
                     used) or unknown_action_configuration",
                ),
                &["kind", "plugin", "argument", "action"],
            )?,
            scrapes: r.counters(
                Opts::new(
                    "promhttp_metric_handler_requests_total",
                    "Total number of scrapes by HTTP status code.",
                ),
                &["code"],
            )?,
            scrapes_in_flight: r.gauge(Opts::new(
                "promhttp_metric_handler_requests_in_flight",
                "Current number of scrapes being served.",
            ))?,
            known_scalars: Arc::default(),
            registry: r.registry.clone(),
            series_names: Arc::default(),
        };
        let mut names = r.names.into_inner();
        names.sort();
        m.series_names = names.into();
        for code in ["200", "500", "503"] {
            m.scrapes.with_label_values(&[code]);
        }
        Ok(m)
    }

    /// The name of every series a scrape may hold, sorted, fed yet or not (a histogram's
    /// family name and its `_bucket`, `_sum` and `_count`): what a dashboard over this
    /// scheduler may query (`deploy/grafana/`).
    pub fn series_names(&self) -> &[String] {
        &self.series_names
    }

    /// Serves one scrape: the exposition, the scrape counted once served, as promhttp
    /// counts it.
    pub fn scrape(&self) -> String {
        self.scrapes_in_flight.inc();
        let text = self.render();
        self.scrapes_in_flight.dec();
        self.scrapes.with_label_values(&["200"]).inc();
        text
    }

    /// Shows what the configuration just installed set aside, replacing what the one before
    /// it had: a series per part, labelled with its kind and the plugin, argument or action
    /// it names (the other labels empty).
    pub fn show_config_problems(&self, set_aside: &[SetAside]) {
        self.config_problems.reset();
        for part in set_aside {
            let (plugin, argument, action) = match part {
                SetAside::UnknownPlugin { plugin, .. } => (plugin.as_str(), "", ""),
                SetAside::Argument { plugin, error } => (plugin.as_str(), error.key.as_str(), ""),
                SetAside::UnknownActionConfiguration { action, .. } => ("", "", action.as_str()),
                SetAside::ActionArgument { action, error, .. } => {
                    ("", error.key.as_str(), action.as_str())
                }
            };
            self.config_problems
                .with_label_values(&[part.kind(), plugin, argument, action])
                .set(1.0);
        }
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::warn!("encoding metrics: {e}");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

/// A duration in milliseconds, the unit of Volcano's latency series.
pub fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_problems_name_each_part_set_aside_and_a_new_load_replaces_them() {
        let m = Metrics::new().unwrap();
        let unknown = SetAside::UnknownPlugin {
            plugin: "nosuch".into(),
            tier: 0,
        };
        let argument = SetAside::Argument {
            plugin: "binpack".into(),
            error: tephra_engine::config::ArgumentError {
                key: "binpack.weight".into(),
                value: "\"heavy\"".into(),
                reason: "expected an integer".into(),
            },
        };
        m.show_config_problems(&[unknown.clone(), argument]);
        let text = m.render();
        assert!(
            text.contains("# TYPE tephra_config_problems gauge"),
            "{text}"
        );
        assert!(text.contains(
            "tephra_config_problems{action=\"\",argument=\"\",kind=\"unknown_plugin\",plugin=\"nosuch\"} 1"
        ), "{text}");
        assert!(text.contains(
            "tephra_config_problems{action=\"\",argument=\"binpack.weight\",kind=\"argument\",plugin=\"binpack\"} 1"
        ), "{text}");
        m.show_config_problems(&[]);
        assert!(!m.render().contains("tephra_config_problems{"));
    }

    #[test]
    fn names_types_and_labels_are_volcanos() {
        let m = Metrics::new().unwrap();
        m.e2e_scheduling_latency.observe(3.0);
        m.action_scheduling_latency
            .with_label_values(&["allocate"])
            .observe(1.0);
        m.plugin_scheduling_latency
            .with_label_values(&["gang", "OnSessionOpen"])
            .observe(0.2);
        let text = m.render();
        assert!(
            text.contains("# TYPE volcano_e2e_scheduling_latency_milliseconds histogram"),
            "{text}"
        );
        assert!(text.contains("volcano_action_scheduling_latency_milliseconds_bucket{action=\"allocate\",le=\"1.4918955578206108\"} 1"));
        assert!(text.contains("volcano_plugin_scheduling_latency_milliseconds_count{OnSession=\"OnSessionOpen\",plugin=\"gang\"} 1"));
        assert!(text.contains("# TYPE volcano_total_preemption_attempts counter"));
        assert!(text.contains("volcano_total_preemption_attempts 0"));
        assert!(text.contains(
            "volcano_e2e_scheduling_latency_milliseconds_bucket{le=\"4999.999999999997\"} 1"
        ));
    }

    #[test]
    fn a_scrape_is_counted_once_served() {
        let m = Metrics::new().unwrap();
        let first = m.scrape();
        assert!(first.contains("promhttp_metric_handler_requests_total{code=\"200\"} 0"));
        assert!(first.contains("promhttp_metric_handler_requests_in_flight 1"));
        assert!(first.contains("promhttp_metric_handler_requests_total{code=\"503\"} 0"));
        let second = m.scrape();
        assert!(second.contains("promhttp_metric_handler_requests_total{code=\"200\"} 1"));
    }

    #[test]
    fn series_volcano_never_feeds_have_no_sample() {
        let text = Metrics::new().unwrap().render();
        for name in [
            "volcano_schedule_attempts_total",
            "volcano_namespace_share",
            "volcano_namespace_weight",
            "volcano_namespace_weighted_share",
        ] {
            assert!(!text.contains(name), "{name} in\n{text}");
        }
    }

    #[test]
    fn bucket_tables_are_geometric_from_min_to_max() {
        for (t, min, max) in [
            (&E2E[..], 1.0, 5000.0),
            (&JOB[..], 100.0, 120000.0),
            (&PLUGIN[..], 0.1, 100.0),
            (&ACTION[..], 1.0, 2000.0),
            (&TASK[..], 50.0, 60000.0),
            (&STAGE[..], 0.1, 500.0),
        ] {
            assert_eq!(t[0], min);
            assert!((t[t.len() - 1] - max).abs() < 1e-9 * max);
            let g = t[1] / t[0];
            assert!(t.windows(2).all(|w| ((w[1] / w[0]) - g).abs() < 1e-9));
        }
    }
}
