//! Volcano's Prometheus metrics (spec §8): subsystem `volcano`, no namespace, the same names,
//! types, labels and buckets. Buckets are Go's `ExponentialBucketsRange` tables written out
//! (computed with Go's `math.Pow`, so every `le` label matches the Go scheduler's).

use prometheus::{
    CounterVec, Encoder, Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, IntCounter, Opts,
    Registry, TextEncoder,
};
use tephra_engine::framework::SetAside;

/// ExponentialBucketsRange(1, 5000, 20).
const E2E: [f64; 20] = [
    1.0,
    1.5656065579430964,
    2.45112389427443,
    3.8374956432070686,
    6.008008345083047,
    9.406177265238869,
    14.726372811633231,
    23.055705848607904,
    36.09616427458753,
    56.51239150488555,
    88.47617074509654,
    138.51887314021627,
    216.86605618721043,
    339.5269197619527,
    531.5655721775325,
    832.2225457779193,
    1302.933075338009,
    2039.8805673101535,
    3193.65039360146,
    4999.999999999997,
];
/// ExponentialBucketsRange(100, 120000, 30).
const JOB: [f64; 30] = [
    100.0,
    127.6964028795552,
    163.06371308377672,
    208.22649600982146,
    265.8977452466826,
    339.54185601785707,
    433.582736405282,
    553.6695578962887,
    707.0161092726969,
    902.8341393202192,
    1152.886719880512,
    1472.1948705635073,
    1879.9398930869224,
    2400.6156197697555,
    3065.4997934107178,
    3914.532966465682,
    4998.717787711021,
    6383.182805007454,
    8151.09483122081,
    10408.654894770323,
    13291.477888768455,
    16972.739153488765,
    21673.57736913502,
    27676.378675702752,
    35341.74001619669,
    45130.13071572749,
    57629.55353882527,
    73590.86686462727,
    93972.88983401153,
    119999.99999999991,
];
/// ExponentialBucketsRange(0.1, 100, 15).
const PLUGIN: [f64; 15] = [
    0.1,
    0.16378937069540644,
    0.2682695795279726,
    0.4393970560760792,
    0.7196856730011522,
    1.1787686347935875,
    1.9306977288832508,
    3.1622776601683804,
    5.1794746792312125,
    8.483428982440724,
    13.894954943731381,
    22.758459260747898,
    37.27593720314942,
    61.054022965853314,
    100.00000000000006,
];
/// ExponentialBucketsRange(1, 2000, 20).
const ACTION: [f64; 20] = [
    1.0,
    1.4918955578206108,
    2.2257523554448713,
    3.3205900518969647,
    4.953973547768393,
    7.390811129476477,
    11.026318292757086,
    16.45011528008044,
    24.541853911988955,
    36.6138828319787,
    54.624089151593346,
    81.49343595525913,
    121.57969509318953,
    181.38420703071378,
    270.60629272793585,
    403.71632603911144,
    602.3025934374076,
    898.5725636131018,
    1340.5764160338647,
    1999.9999999999977,
];
/// ExponentialBucketsRange(50, 60000, 30).
const TASK: [f64; 30] = [
    50.0,
    63.8482014397776,
    81.53185654188836,
    104.11324800491073,
    132.9488726233413,
    169.77092800892854,
    216.791368202641,
    276.83477894814433,
    353.50805463634845,
    451.4170696601096,
    576.443359940256,
    736.0974352817536,
    939.9699465434612,
    1200.3078098848778,
    1532.7498967053589,
    1957.266483232841,
    2499.3588938555104,
    3191.591402503727,
    4075.547415610405,
    5204.327447385162,
    6645.738944384228,
    8486.369576744382,
    10836.78868456751,
    13838.189337851376,
    17670.870008098344,
    22565.065357863747,
    28814.776769412634,
    36795.433432313635,
    46986.44491700576,
    59999.999999999956,
];
/// ExponentialBucketsRange(0.1, 500, 20).
const STAGE: [f64; 20] = [
    0.1,
    0.15656065579430967,
    0.245112389427443,
    0.3837495643207069,
    0.6008008345083047,
    0.9406177265238869,
    1.4726372811633233,
    2.3055705848607904,
    3.609616427458753,
    5.651239150488555,
    8.847617074509655,
    13.851887314021628,
    21.686605618721046,
    33.95269197619527,
    53.15655721775326,
    83.22225457779194,
    130.2933075338009,
    203.98805673101538,
    319.36503936014606,
    499.9999999999998,
];

/// The metrics the scheduler updates.
#[derive(Debug, Clone)]
pub struct Metrics {
    pub registry: Registry,
    pub e2e_scheduling_latency: Histogram,
    pub open_session_duration: Histogram,
    pub e2e_job_scheduling_latency: Histogram,
    pub plugin_scheduling_latency: HistogramVec,
    pub action_scheduling_latency: HistogramVec,
    pub task_scheduling_latency: HistogramVec,
    pub scheduling_stage_duration: HistogramVec,
    pub unschedule_task_count: GaugeVec,
    pub unschedule_job_count: Gauge,
    pub queue_allocated_milli_cpu: GaugeVec,
    pub queue_allocated_memory_bytes: GaugeVec,
    pub total_preemption_attempts: IntCounter,
    pub api_writes: CounterVec,
    /// `tephra_config_problems`: one series at 1 per part of the installed configuration that
    /// is not running; see `show_config_problems`.
    pub config_problems: GaugeVec,
}

fn histogram(name: &str, help: &str, buckets: &[f64]) -> HistogramOpts {
    HistogramOpts::new(name, help)
        .subsystem("volcano")
        .buckets(buckets.to_vec())
}

fn opts(name: &str, help: &str) -> Opts {
    Opts::new(name, help).subsystem("volcano")
}

impl Metrics {
    /// Registers every Volcano scheduler metric (those tephra does not update stay at zero
    /// or without series, as in a Volcano run that never takes those paths).
    pub fn new() -> Result<Metrics, prometheus::Error> {
        let r = Registry::new();
        let h = |o: HistogramOpts| -> Result<Histogram, prometheus::Error> {
            let m = Histogram::with_opts(o)?;
            r.register(Box::new(m.clone()))?;
            Ok(m)
        };
        let hv = |o: HistogramOpts, labels: &[&str]| -> Result<HistogramVec, prometheus::Error> {
            let m = HistogramVec::new(o, labels)?;
            r.register(Box::new(m.clone()))?;
            Ok(m)
        };
        let gv = |o: Opts, labels: &[&str]| -> Result<GaugeVec, prometheus::Error> {
            let m = GaugeVec::new(o, labels)?;
            r.register(Box::new(m.clone()))?;
            Ok(m)
        };
        let job = ["job_name", "queue", "job_namespace"];
        let m = Metrics {
            e2e_scheduling_latency: h(histogram(
                "e2e_scheduling_latency_milliseconds",
                "E2e scheduling latency in milliseconds (scheduling algorithm + binding)",
                &E2E,
            ))?,
            open_session_duration: h(histogram(
                "open_session_duration_milliseconds",
                "Open session duration in milliseconds",
                &E2E,
            ))?,
            e2e_job_scheduling_latency: h(histogram(
                "e2e_job_scheduling_latency_milliseconds",
                "E2e job scheduling latency in milliseconds",
                &JOB,
            ))?,
            plugin_scheduling_latency: hv(
                histogram(
                    "plugin_scheduling_latency_milliseconds",
                    "Plugin scheduling latency in milliseconds",
                    &PLUGIN,
                ),
                &["plugin", "OnSession"],
            )?,
            action_scheduling_latency: hv(
                histogram(
                    "action_scheduling_latency_milliseconds",
                    "Action scheduling latency in milliseconds",
                    &ACTION,
                ),
                &["action"],
            )?,
            task_scheduling_latency: hv(
                histogram(
                    "task_scheduling_latency_milliseconds",
                    "Task scheduling latency in milliseconds",
                    &TASK,
                ),
                &["stage"],
            )?,
            scheduling_stage_duration: hv(
                histogram(
                    "scheduling_stage_duration_milliseconds",
                    "Scheduling stage duration in milliseconds",
                    &STAGE,
                ),
                &["stage"],
            )?,
            unschedule_task_count: gv(
                opts(
                    "unschedule_task_count",
                    "Number of tasks could not be scheduled",
                ),
                &["job_id"],
            )?,
            unschedule_job_count: {
                let g = Gauge::with_opts(opts(
                    "unschedule_job_count",
                    "Number of jobs could not be scheduled",
                ))?;
                r.register(Box::new(g.clone()))?;
                g
            },
            queue_allocated_milli_cpu: gv(
                opts(
                    "queue_allocated_milli_cpu",
                    "Allocated CPU count for one queue",
                ),
                &["queue_name"],
            )?,
            queue_allocated_memory_bytes: gv(
                opts(
                    "queue_allocated_memory_bytes",
                    "Allocated memory for one queue",
                ),
                &["queue_name"],
            )?,
            total_preemption_attempts: {
                let c = IntCounter::with_opts(opts(
                    "total_preemption_attempts",
                    "Total preemption attempts in the cluster till now",
                ))?;
                r.register(Box::new(c.clone()))?;
                c
            },
            api_writes: {
                let c = CounterVec::new(
                    Opts::new("tephra_api_writes_total", "API writes by verb and resource"),
                    &["verb", "resource"],
                )?;
                r.register(Box::new(c.clone()))?;
                c
            },
            config_problems: gv(
                Opts::new(
                    "tephra_config_problems",
                    "Parts of the installed scheduler configuration that do not run (1 each): \
                     kind unknown_plugin, argument (a wrongly typed plugin argument, its default \
                     used) or unknown_action_configuration",
                ),
                &["kind", "plugin", "argument", "action"],
            )?,
            registry: r.clone(),
        };
        for (name, help) in [
            ("e2e_job_scheduling_duration", "E2E job scheduling duration"),
            (
                "e2e_job_scheduling_start_time",
                "E2E job scheduling start time",
            ),
            (
                "e2e_job_scheduling_last_time",
                "E2E job scheduling last time",
            ),
        ] {
            gv(opts(name, help), &job)?;
        }
        for (name, help, labels) in [
            (
                "schedule_attempts_total",
                "Number of attempts to schedule pods",
                &["result"][..],
            ),
            (
                "eviction_transactions_total",
                "Number of eviction transactions",
                &["action"][..],
            ),
            (
                "job_retry_counts",
                "Number of retry counts for one job",
                &["job_id"][..],
            ),
        ] {
            let c = CounterVec::new(opts(name, help), labels)?;
            r.register(Box::new(c))?;
        }
        let pv = Gauge::with_opts(opts(
            "pod_preemption_victims",
            "Number of selected preemption victims",
        ))?;
        r.register(Box::new(pv))?;
        gv(
            opts("job_share", "Share for one job"),
            &["job_ns", "job_id"],
        )?;
        for stat in [
            "allocated",
            "request",
            "deserved",
            "inqueue",
            "capacity",
            "real_capacity",
        ] {
            if stat != "allocated" {
                gv(
                    opts(&format!("queue_{stat}_milli_cpu"), "Queue CPU"),
                    &["queue_name"],
                )?;
                gv(
                    opts(&format!("queue_{stat}_memory_bytes"), "Queue memory"),
                    &["queue_name"],
                )?;
            }
            gv(
                opts(
                    &format!("queue_{stat}_scalar_resources"),
                    "Queue scalar resources",
                ),
                &["queue_name", "resource"],
            )?;
        }
        for name in ["queue_share", "queue_weight", "queue_overused"] {
            gv(opts(name, "Queue"), &["queue_name"])?;
        }
        for name in [
            "namespace_share",
            "namespace_weight",
            "namespace_weighted_share",
        ] {
            gv(opts(name, "Namespace"), &["namespace_name"])?;
        }
        Ok(m)
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

#[cfg(test)]
mod tests {
    use super::*;

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
        m.total_preemption_attempts.inc_by(0);
        let text = m.render();
        assert!(
            text.contains("# TYPE volcano_e2e_scheduling_latency_milliseconds histogram"),
            "{text}"
        );
        assert!(text.contains("volcano_action_scheduling_latency_milliseconds_bucket{action=\"allocate\",le=\"1.4918955578206108\"} 1"));
        assert!(text.contains("volcano_plugin_scheduling_latency_milliseconds_count{OnSession=\"OnSessionOpen\",plugin=\"gang\"} 1"));
        assert!(text.contains("# TYPE volcano_total_preemption_attempts counter"));
        assert!(text.contains(
            "volcano_e2e_scheduling_latency_milliseconds_bucket{le=\"4999.999999999997\"} 1"
        ));
    }

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
