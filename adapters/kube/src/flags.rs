//! `vc-scheduler`'s command line: every flag of Volcano's `cmd/scheduler` (Volcano: cmd/scheduler/app/options/options.go) in Go
//! pflag forms, plus the klog flags the chart may pass. Unknown flags are refused by name; bare
//! positional arguments (the chart's literal `2>&1`) are accepted and ignored, as pflag does.

use std::time::Duration;

use clap::{ArgAction, Parser};
use tephra_cache::Sharding;
use tephra_engine::framework::NodeSampling;
use tephra_engine::snapshot::ShardingMode;

use crate::feature_gates::FeatureGates;
use crate::tls::TlsFiles;

/// A Go duration (`1s`, `.5s`, `1m30s`) as a `Duration`; negative values are refused.
pub fn go_duration(s: &str) -> Result<Duration, String> {
    let secs = tephra_engine::model::parse_go_duration(s).map_err(|e| e.to_string())?;
    Duration::try_from_secs_f64(secs)
        .map_err(|_| format!("invalid duration {s:?}: must not be negative"))
}

/// Go's `strconv.ParseBool`, which pflag uses for `--flag=value` booleans.
pub fn go_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(format!("invalid boolean {s:?}")),
    }
}

/// The flags of Volcano's scheduler, with Volcano's defaults.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "vc-scheduler",
    about = "tephra: a drop-in replacement for Volcano's batch scheduler",
    version,
    disable_version_flag = true,
    args_override_self = true
)]
pub struct Flags {
    /// API server URL (overrides the kubeconfig).
    #[arg(long, default_value = "")]
    pub master: String,
    /// Path to a kubeconfig; in-cluster configuration when empty.
    #[arg(long, default_value = "")]
    pub kubeconfig: String,
    /// CA bundle (PEM) a client certificate of the TLS servers must chain to, when a client
    /// presents one.
    #[arg(long = "ca-cert-file", default_value = "")]
    pub ca_cert_file: String,
    /// Certificate chain (PEM) of the healthz server, which then serves TLS (with
    /// --metrics-tls, the metrics server too).
    #[arg(long = "tls-cert-file", default_value = "")]
    pub tls_cert_file: String,
    /// Private key (PEM) matching --tls-cert-file.
    #[arg(long = "tls-private-key-file", default_value = "")]
    pub tls_private_key_file: String,
    /// tephra: serve --listen-address (/metrics, /debug/pprof) over TLS too, with the healthz
    /// server's certificate; Volcano serves it in plain HTTP only.
    #[arg(long = "metrics-tls", num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = go_bool,
          action = ArgAction::Set)]
    pub metrics_tls: bool,
    /// Deprecated: overrides --leader-elect-resource-namespace when set.
    #[arg(long = "lock-object-namespace", default_value = "")]
    pub lock_object_namespace: String,
    /// Pods whose spec.schedulerName is one of these are scheduled (repeatable).
    #[arg(long = "scheduler-name", action = ArgAction::Append)]
    pub scheduler_name: Vec<String>,
    /// Absolute path of the scheduler configuration file.
    #[arg(long = "scheduler-conf", default_value = "")]
    pub scheduler_conf: String,
    /// Pause between the end of one cycle and the start of the next.
    #[arg(long = "schedule-period", default_value = "1s", value_parser = go_duration)]
    pub schedule_period: Duration,
    /// Resync period of the informers (watches here re-list only on error).
    #[arg(long = "resync-period", default_value = "0s", value_parser = go_duration)]
    pub resync_period: Duration,
    /// Queue of PodGroups that name none; created at start-up.
    #[arg(long = "default-queue", default_value = "default")]
    pub default_queue: String,
    /// Print the version and exit.
    #[arg(long, num_args = 0..=1, require_equals = true, default_value = "false",
          default_missing_value = "true", value_parser = go_bool, action = ArgAction::Set)]
    pub version: bool,
    /// Address of the metrics HTTP server.
    #[arg(long = "listen-address", default_value = ":8080")]
    pub listen_address: String,
    /// Address of the healthz HTTP server.
    #[arg(long = "healthz-address", default_value = ":11251")]
    pub healthz_address: String,
    /// Watch PriorityClasses.
    #[arg(long = "priority-class", num_args = 0..=1, require_equals = true, default_value = "true",
          default_missing_value = "true", value_parser = go_bool, action = ArgAction::Set)]
    pub priority_class: bool,
    /// Client queries per second to the API server.
    #[arg(long = "kube-api-qps", default_value = "2000")]
    pub kube_api_qps: f32,
    /// Client burst to the API server.
    #[arg(long = "kube-api-burst", default_value = "2000")]
    pub kube_api_burst: u32,
    /// Lower bound of feasible nodes searched per task (Volcano's default 100). Node sampling
    /// is on only when one of the three sampling flags is given; see `node_sampling`.
    #[arg(long = "minimum-feasible-nodes")]
    pub minimum_feasible_nodes: Option<i32>,
    /// Lower bound of the adaptive percentage of nodes searched (Volcano's default 5).
    #[arg(long = "minimum-percentage-nodes-to-find")]
    pub minimum_percentage_nodes_to_find: Option<i32>,
    /// Fixed percentage of nodes searched; <= 0 means adaptive (Volcano's default 0).
    #[arg(long = "percentage-nodes-to-find")]
    pub percentage_nodes_to_find: Option<i32>,
    /// Directory of tephra plugin libraries (`*.so` built with tephra-plugin-sdk, see
    /// docs/plugins.md), loaded at start-up so their plugins can be named in the tiers. Go
    /// plugins built for Volcano cannot be loaded: each is named and start-up stops.
    #[arg(long = "plugins-dir", default_value = "")]
    pub plugins_dir: String,
    /// Register CSI informers (accepted; tephra's predicates need none).
    #[arg(long = "csi-storage", num_args = 0..=1, require_equals = true, default_value = "true",
          default_missing_value = "true", value_parser = go_bool, action = ArgAction::Set)]
    pub csi_storage: bool,
    /// Serve /healthz on --healthz-address.
    #[arg(long = "enable-healthz", num_args = 0..=1, require_equals = true, default_value = "false",
          default_missing_value = "true", value_parser = go_bool, action = ArgAction::Set)]
    pub enable_healthz: bool,
    /// Serve /metrics on --listen-address.
    #[arg(long = "enable-metrics", num_args = 0..=1, require_equals = true, default_value = "false",
          default_missing_value = "true", value_parser = go_bool, action = ArgAction::Set)]
    pub enable_metrics: bool,
    /// Serve /debug/pprof on --listen-address.
    #[arg(long = "enable-pprof", num_args = 0..=1, require_equals = true, default_value = "false",
          default_missing_value = "true", value_parser = go_bool, action = ArgAction::Set)]
    pub enable_pprof: bool,
    /// `key:value` entries; only nodes with a matching label are cached.
    #[arg(long = "node-selector", value_delimiter = ',', action = ArgAction::Append)]
    pub node_selector: Vec<String>,
    /// Install the SIGUSR1 cache dump handler.
    #[arg(long = "cache-dumper", num_args = 0..=1, require_equals = true, default_value = "true",
          default_missing_value = "true", value_parser = go_bool, action = ArgAction::Set)]
    pub cache_dumper: bool,
    /// Where SIGUSR1 writes `snapshot-<unix>.json`.
    #[arg(long = "cache-dump-dir", default_value = "/tmp")]
    pub cache_dump_dir: String,
    /// Node work-queue workers (accepted; tephra applies node events in its run loop).
    #[arg(long = "node-worker-threads", default_value = "20")]
    pub node_worker_threads: u32,
    /// Scheduling-gate removal workers (accepted; the gate feature is off by default).
    #[arg(long = "gate-removal-worker-num", default_value = "5")]
    pub gate_removal_worker_num: i32,
    /// CSI provisioners not counted as attachable volumes (accepted).
    #[arg(long = "ignored-provisioners", value_delimiter = ',', action = ArgAction::Append)]
    pub ignored_provisioners: Vec<String>,
    /// Longest wait for the initial lists before the first cycle; 0 waits without limit.
    #[arg(long = "resource-sync-timeout", default_value = "60s", value_parser = go_duration)]
    pub resource_sync_timeout: Duration,
    /// Make an unreadable or invalid configuration file fatal instead of falling back.
    #[arg(long = "disable-default-scheduler-config", num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = go_bool,
          action = ArgAction::Set)]
    pub disable_default_scheduler_config: bool,
    /// tephra: refuse a configuration file that names an unknown plugin, a wrongly typed plugin
    /// argument or a `configurations` entry for no action, instead of logging it and running
    /// the rest as Volcano does.
    #[arg(long = "strict-config", num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = go_bool,
          action = ArgAction::Set)]
    pub strict_config: bool,
    /// Node sharding mode: `none` (every node), `hard` (only the nodes of this scheduler's
    /// NodeShard) or `soft` (its shard's nodes first, then the others). Volcano runs any other
    /// value as `none`; tephra refuses it.
    #[arg(long = "scheduler-sharding-mode", default_value = "none", value_parser = ShardingMode::parse)]
    pub scheduler_sharding_mode: ShardingMode,
    /// NodeShard owned by this scheduler (used only with sharding).
    #[arg(long = "scheduler-sharding-name", default_value = "volcano")]
    pub scheduler_sharding_name: String,
    /// Feature gates, `Name=bool,...`: Volcano's gates that decide what the cache watches
    /// (PodDisruptionBudgetsSupport, WorkLoadSupport, PriorityClass, ResourceTopology); other
    /// names are accepted and named in a warning.
    #[arg(long = "feature-gates", default_value = "", value_parser = FeatureGates::parse)]
    pub feature_gates: FeatureGates,
    /// Take part in leader election before scheduling.
    #[arg(long = "leader-elect", num_args = 0..=1, require_equals = true, default_value = "true",
          default_missing_value = "true", value_parser = go_bool, action = ArgAction::Set)]
    pub leader_elect: bool,
    /// How long a lease is valid without renewal.
    #[arg(long = "leader-elect-lease-duration", default_value = "15s", value_parser = go_duration)]
    pub leader_elect_lease_duration: Duration,
    /// How long the leader keeps trying to renew before giving up.
    #[arg(long = "leader-elect-renew-deadline", default_value = "10s", value_parser = go_duration)]
    pub leader_elect_renew_deadline: Duration,
    /// Wait between two attempts to acquire or renew.
    #[arg(long = "leader-elect-retry-period", default_value = "2s", value_parser = go_duration)]
    pub leader_elect_retry_period: Duration,
    /// Lock type; Volcano ignores it and always uses a Lease, as does tephra.
    #[arg(long = "leader-elect-resource-lock", default_value = "leases")]
    pub leader_elect_resource_lock: String,
    /// Name of the Lease.
    #[arg(long = "leader-elect-resource-name", default_value = "volcano")]
    pub leader_elect_resource_name: String,
    /// Namespace of the Lease.
    #[arg(
        long = "leader-elect-resource-namespace",
        default_value = "volcano-system"
    )]
    pub leader_elect_resource_namespace: String,
    /// klog verbosity.
    #[arg(short = 'v', long = "v", default_value = "0")]
    pub verbosity: u8,
    /// klog: log to standard error (tephra always does).
    #[arg(long, num_args = 0..=1, require_equals = true, default_value = "true",
          default_missing_value = "true", value_parser = go_bool, action = ArgAction::Set)]
    pub logtostderr: bool,
    /// klog: also log to standard error.
    #[arg(long, num_args = 0..=1, require_equals = true, default_value = "false",
          default_missing_value = "true", value_parser = go_bool, action = ArgAction::Set)]
    pub alsologtostderr: bool,
    /// klog flags tephra accepts and ignores (logs always go to standard error).
    #[arg(long = "log-dir", alias = "log_dir", default_value = "")]
    pub log_dir: String,
    #[arg(long = "log-file", alias = "log_file", default_value = "")]
    pub log_file: String,
    #[arg(
        long = "log-file-max-size",
        alias = "log_file_max_size",
        default_value = "1800"
    )]
    pub log_file_max_size: u64,
    #[arg(long = "log-flush-frequency", default_value = "5s", value_parser = go_duration)]
    pub log_flush_frequency: Duration,
    #[arg(long, default_value = "")]
    pub vmodule: String,
    #[arg(long, default_value = "")]
    pub stderrthreshold: String,
    #[arg(
        long = "log-backtrace-at",
        alias = "log_backtrace_at",
        default_value = ""
    )]
    pub log_backtrace_at: String,
    #[arg(long = "skip-headers", alias = "skip_headers", num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = go_bool,
          action = ArgAction::Set)]
    pub skip_headers: bool,
    #[arg(long = "skip-log-headers", alias = "skip_log_headers", num_args = 0..=1,
          require_equals = true, default_value = "false", default_missing_value = "true",
          value_parser = go_bool, action = ArgAction::Set)]
    pub skip_log_headers: bool,
    #[arg(long = "add-dir-header", alias = "add_dir_header", num_args = 0..=1,
          require_equals = true, default_value = "false", default_missing_value = "true",
          value_parser = go_bool, action = ArgAction::Set)]
    pub add_dir_header: bool,
    #[arg(long = "one-output", alias = "one_output", num_args = 0..=1, require_equals = true,
          default_value = "false", default_missing_value = "true", value_parser = go_bool,
          action = ArgAction::Set)]
    pub one_output: bool,
    /// Positional arguments; pflag keeps them and Volcano ignores them (the chart passes `2>&1`).
    #[arg(hide = true, trailing_var_arg = false)]
    pub positional: Vec<String>,
}

/// A flag value clap accepted but tephra cannot honour.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FlagError {
    #[error("--node-selector: {0:?} is not key:value")]
    NodeSelector(String),
    #[error("--kube-api-qps={0}: must be positive")]
    Qps(f32),
    #[error("--disable-default-scheduler-config needs --scheduler-conf")]
    NoConfFile,
    #[error("--{given} needs --{missing}: a TLS server needs both its certificate and its key")]
    HalfTls {
        given: &'static str,
        missing: &'static str,
    },
    #[error("--metrics-tls needs --tls-cert-file and --tls-private-key-file")]
    MetricsTlsWithoutCertificate,
}

impl Flags {
    /// Node sampling as Volcano does it, when one of its flags is given (the others then take
    /// Volcano's defaults); `None`, every feasible node considered, when none is.
    pub fn node_sampling(&self) -> Option<NodeSampling> {
        let given = self.percentage_nodes_to_find.is_some()
            || self.minimum_feasible_nodes.is_some()
            || self.minimum_percentage_nodes_to_find.is_some();
        let volcano = NodeSampling::default();
        given.then(|| NodeSampling {
            percentage_nodes_to_find: self
                .percentage_nodes_to_find
                .unwrap_or(volcano.percentage_nodes_to_find),
            minimum_feasible_nodes: self
                .minimum_feasible_nodes
                .unwrap_or(volcano.minimum_feasible_nodes),
            minimum_percentage_nodes_to_find: self
                .minimum_percentage_nodes_to_find
                .unwrap_or(volcano.minimum_percentage_nodes_to_find),
        })
    }

    /// Parses a command line (the first item is the program name).
    pub fn parse_from_args<I, T>(args: I) -> Result<Flags, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Flags::try_parse_from(args)
    }

    /// The sharding flags, as the cache takes them.
    pub fn sharding(&self) -> Sharding {
        Sharding {
            mode: self.scheduler_sharding_mode,
            name: self.scheduler_sharding_name.clone(),
        }
    }

    /// Checks the values clap cannot check alone.
    pub fn validate(&self) -> Result<(), FlagError> {
        self.node_selector_pairs()?;
        if self.kube_api_qps <= 0.0 || self.kube_api_qps.is_nan() {
            return Err(FlagError::Qps(self.kube_api_qps));
        }
        if self.disable_default_scheduler_config && self.scheduler_conf.is_empty() {
            return Err(FlagError::NoConfFile);
        }
        match (
            self.tls_cert_file.is_empty(),
            self.tls_private_key_file.is_empty(),
        ) {
            (false, true) => Err(FlagError::HalfTls {
                given: "tls-cert-file",
                missing: "tls-private-key-file",
            }),
            (true, false) => Err(FlagError::HalfTls {
                given: "tls-private-key-file",
                missing: "tls-cert-file",
            }),
            (true, true) if self.metrics_tls => Err(FlagError::MetricsTlsWithoutCertificate),
            _ => Ok(()),
        }
    }

    /// The TLS files of the HTTP servers, when a certificate is given. Volcano serves TLS only
    /// when the CA file is given too; tephra serves it whenever it has a certificate and key,
    /// and asks clients for a certificate only with a CA file.
    pub fn tls_files(&self) -> Option<TlsFiles> {
        (!self.tls_cert_file.is_empty()).then(|| TlsFiles {
            cert: self.tls_cert_file.clone(),
            key: self.tls_private_key_file.clone(),
            client_ca: self.ca_cert_file.clone(),
        })
    }

    /// The scheduler names, `volcano` when none was given.
    pub fn scheduler_names(&self) -> Vec<String> {
        if self.scheduler_name.is_empty() {
            vec!["volcano".to_string()]
        } else {
            self.scheduler_name.clone()
        }
    }

    /// `--node-selector` entries as `(key, value)`.
    pub fn node_selector_pairs(&self) -> Result<Vec<(String, String)>, FlagError> {
        self.node_selector
            .iter()
            .filter(|e| !e.is_empty())
            .map(|e| match e.split_once(':') {
                Some((k, v)) if !k.trim().is_empty() => {
                    Ok((k.trim().to_string(), v.trim().to_string()))
                }
                _ => Err(FlagError::NodeSelector(e.clone())),
            })
            .collect()
    }

    /// The Lease namespace: the deprecated `--lock-object-namespace` wins when set.
    pub fn lease_namespace(&self) -> &str {
        if self.lock_object_namespace.is_empty() {
            &self.leader_elect_resource_namespace
        } else {
            &self.lock_object_namespace
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Flags, clap::Error> {
        Flags::parse_from_args(std::iter::once("vc-scheduler").chain(args.iter().copied()))
    }

    /// The argument list of Volcano's Helm chart (templates/scheduler.yaml), verbatim.
    const CHART_ARGS: &[&str] = &[
        "--logtostderr",
        "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf",
        "--enable-healthz=true",
        "--enable-metrics=true",
        "--leader-elect=false",
        "--kube-api-qps=2000",
        "--kube-api-burst=2000",
        "--schedule-period=1s",
        "--node-worker-threads=20",
        "-v=3",
        "2>&1",
    ];

    #[test]
    fn chart_arguments_are_accepted_verbatim() {
        let f = parse(CHART_ARGS).unwrap();
        assert!(f.logtostderr && f.enable_healthz && f.enable_metrics && !f.leader_elect);
        assert_eq!(f.verbosity, 3);
        assert_eq!(f.positional, ["2>&1"]);
        assert_eq!(f.schedule_period, Duration::from_secs(1));
        f.validate().unwrap();
    }

    /// The arguments Volcano's chart adds for its optional scheduler values
    /// (templates/scheduler.yaml), as deploy/helm/tephra renders them too.
    #[test]
    fn chart_arguments_of_optional_values_are_accepted() {
        let mut args = CHART_ARGS.to_vec();
        args.extend([
            "--scheduler-name=batch",
            "--enable-pprof=true",
            "--leader-elect=true",
            "--leader-elect-resource-namespace=volcano-system",
            "--percentage-nodes-to-find=0",
            "--plugins-dir=/plugins",
            "--feature-gates=PodDisruptionBudgetsSupport=true",
            "--ignored-provisioners=a.csi,b.csi",
            "--scheduler-sharding-mode=none",
        ]);
        let f = parse(&args).unwrap();
        f.validate().unwrap();
        assert_eq!(f.scheduler_names(), ["batch"]);
        assert!(f.enable_pprof && f.leader_elect);
        assert_eq!(f.lease_namespace(), "volcano-system");
        assert_eq!(f.percentage_nodes_to_find, Some(0));
        assert_eq!(f.ignored_provisioners, ["a.csi", "b.csi"]);
    }

    #[test]
    fn defaults_are_volcanos() {
        let f = parse(&[]).unwrap();
        assert_eq!(f.scheduler_names(), ["volcano"]);
        assert!(f.leader_elect && f.priority_class && f.cache_dumper);
        assert!(!f.enable_metrics && !f.enable_healthz);
        assert_eq!(f.listen_address, ":8080");
        assert_eq!(f.healthz_address, ":11251");
        assert_eq!(f.leader_elect_resource_name, "volcano");
        assert_eq!(f.lease_namespace(), "volcano-system");
        assert_eq!(f.leader_elect_lease_duration, Duration::from_secs(15));
    }

    #[test]
    fn node_sampling_is_off_unless_one_of_its_flags_is_given() {
        assert_eq!(parse(CHART_ARGS).unwrap().node_sampling(), None);
        let f = parse(&["--percentage-nodes-to-find=30"]).unwrap();
        assert_eq!(
            f.node_sampling(),
            Some(NodeSampling {
                percentage_nodes_to_find: 30,
                ..NodeSampling::default()
            })
        );
        let f = parse(&["--minimum-feasible-nodes", "100"]).unwrap();
        assert_eq!(
            f.node_sampling(),
            Some(NodeSampling::default()),
            "Volcano's own value, given explicitly, still samples"
        );
    }

    #[test]
    fn value_may_follow_as_the_next_argument() {
        let f = parse(&[
            "--schedule-period",
            "2s",
            "--default-queue",
            "q1",
            "-v",
            "2",
        ])
        .unwrap();
        assert_eq!(f.schedule_period, Duration::from_secs(2));
        assert_eq!(f.default_queue, "q1");
        assert_eq!(f.verbosity, 2);
    }

    #[test]
    fn go_durations_are_understood() {
        for (text, ms) in [(".5s", 500), ("1m30s", 90_000), ("300ms", 300), ("0", 0)] {
            let f = parse(&[&format!("--schedule-period={text}")]).unwrap();
            assert_eq!(f.schedule_period, Duration::from_millis(ms), "{text}");
        }
        let e = parse(&["--schedule-period=1d"]).unwrap_err().to_string();
        assert!(e.contains("schedule-period"), "{e}");
    }

    #[test]
    fn bare_boolean_means_true_and_false_can_be_spelled() {
        let f = parse(&[
            "--enable-metrics",
            "--leader-elect=false",
            "--priority-class=F",
        ])
        .unwrap();
        assert!(f.enable_metrics && !f.leader_elect && !f.priority_class);
    }

    #[test]
    fn a_repeated_flag_takes_the_last_value_as_pflag_does() {
        let f = parse(&[
            "--leader-elect=false",
            "--leader-elect=true",
            "--cache-dump-dir=/a",
            "--cache-dump-dir=/b",
        ])
        .unwrap();
        assert!(f.leader_elect);
        assert_eq!(f.cache_dump_dir, "/b");
    }

    #[test]
    fn strict_config_is_off_unless_given() {
        assert!(!parse(&[]).unwrap().strict_config);
        assert!(parse(&["--strict-config"]).unwrap().strict_config);
        assert!(!parse(&["--strict-config=false"]).unwrap().strict_config);
    }

    #[test]
    fn scheduler_name_repeats() {
        let f = parse(&["--scheduler-name=a", "--scheduler-name", "b"]).unwrap();
        assert_eq!(f.scheduler_names(), ["a", "b"]);
    }

    #[test]
    fn unknown_flag_is_refused_by_name() {
        let e = parse(&["--no-such-flag=1"]).unwrap_err().to_string();
        assert!(e.contains("--no-such-flag"), "{e}");
    }

    #[test]
    fn klog_underscore_spellings_are_accepted() {
        parse(&[
            "--log_dir=/tmp",
            "--alsologtostderr",
            "--log-flush-frequency=5s",
        ])
        .unwrap();
    }

    #[test]
    fn node_selector_entries_are_key_value_pairs() {
        let f = parse(&[
            "--node-selector=zone:a,disk:ssd",
            "--node-selector",
            "pool:x",
        ])
        .unwrap();
        assert_eq!(f.node_selector_pairs().unwrap().len(), 3);
        let bad = parse(&["--node-selector=zone"]).unwrap();
        assert_eq!(bad.validate(), Err(FlagError::NodeSelector("zone".into())));
    }

    #[test]
    fn sharding_flags_name_the_mode_and_shard_and_an_unknown_mode_is_refused() {
        let f = parse(&[
            "--scheduler-sharding-mode=soft",
            "--scheduler-sharding-name=s1",
        ])
        .unwrap();
        assert_eq!(
            f.sharding(),
            Sharding {
                mode: ShardingMode::Soft,
                name: "s1".into()
            }
        );
        assert_eq!(parse(&[]).unwrap().sharding().mode, ShardingMode::None);
        assert_eq!(parse(&[]).unwrap().sharding().name, "volcano");
        let e = parse(&["--scheduler-sharding-mode=firm"]).unwrap_err();
        assert!(e.to_string().contains("--scheduler-sharding-mode"), "{e}");
    }

    #[test]
    fn volcanos_certificate_flags_make_the_servers_tls_ones() {
        let f = parse(&[
            "--ca-cert-file=a",
            "--tls-cert-file=b",
            "--tls-private-key-file=c",
        ])
        .unwrap();
        f.validate().unwrap();
        assert_eq!(
            f.tls_files(),
            Some(TlsFiles {
                cert: "b".into(),
                key: "c".into(),
                client_ca: "a".into()
            })
        );
        assert!(!f.metrics_tls);
        assert_eq!(parse(&[]).unwrap().tls_files(), None);
    }

    #[test]
    fn a_certificate_without_its_key_is_refused_naming_the_missing_flag() {
        let e = parse(&["--tls-cert-file=b"])
            .unwrap()
            .validate()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "--tls-cert-file needs --tls-private-key-file: a TLS server needs both its certificate and its key"
        );
        let e = parse(&["--metrics-tls"]).unwrap().validate().unwrap_err();
        assert_eq!(e, FlagError::MetricsTlsWithoutCertificate);
    }

    #[test]
    fn deprecated_lock_namespace_overrides_the_lease_namespace() {
        let f = parse(&[
            "--lock-object-namespace=ns1",
            "--leader-elect-resource-namespace=ns2",
        ])
        .unwrap();
        assert_eq!(f.lease_namespace(), "ns1");
    }
}
