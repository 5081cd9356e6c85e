//! The `process_*` metrics, as Go's process collector exports them on Linux (Volcano's
//! `/metrics` serves them from the k8s legacy registry): read from `/proc/self` at each scrape.
//! Go's procfs counts CPU in ticks of 1/100 s and reports an unlimited limit as 2^64 − 1.

use std::fs;

use prometheus::core::{Collector, Desc};
use prometheus::proto::{self, MetricFamily, MetricType};

/// Go procfs' `userHZ`: `/proc/<pid>/stat` times are in these ticks per second.
const TICKS_PER_SECOND: f64 = 100.0;

/// One `process_*` metric: name, help, type.
type Spec = (&'static str, &'static str, MetricType);

const SPECS: [Spec; 9] = [
    (
        "process_cpu_seconds_total",
        "Total user and system CPU time spent in seconds.",
        MetricType::COUNTER,
    ),
    (
        "process_open_fds",
        "Number of open file descriptors.",
        MetricType::GAUGE,
    ),
    (
        "process_max_fds",
        "Maximum number of open file descriptors.",
        MetricType::GAUGE,
    ),
    (
        "process_virtual_memory_bytes",
        "Virtual memory size in bytes.",
        MetricType::GAUGE,
    ),
    (
        "process_virtual_memory_max_bytes",
        "Maximum amount of virtual memory available in bytes.",
        MetricType::GAUGE,
    ),
    (
        "process_resident_memory_bytes",
        "Resident memory size in bytes.",
        MetricType::GAUGE,
    ),
    (
        "process_start_time_seconds",
        "Start time of the process since unix epoch in seconds.",
        MetricType::GAUGE,
    ),
    (
        "process_network_receive_bytes_total",
        "Number of bytes received by the process over the network.",
        MetricType::COUNTER,
    ),
    (
        "process_network_transmit_bytes_total",
        "Number of bytes sent by the process over the network.",
        MetricType::COUNTER,
    ),
];

/// The collector; what it cannot read is left out of that scrape, as Go's does.
pub struct ProcessCollector {
    descs: Vec<Desc>,
}

impl std::fmt::Debug for ProcessCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessCollector").finish_non_exhaustive()
    }
}

impl ProcessCollector {
    pub fn new() -> Result<ProcessCollector, prometheus::Error> {
        let descs = SPECS
            .iter()
            .map(|(name, help, _)| Desc::new(name.to_string(), help.to_string(), vec![], [].into()))
            .collect::<Result<_, _>>()?;
        Ok(ProcessCollector { descs })
    }
}

impl Collector for ProcessCollector {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let values = read_values(&ProcFiles::of_self());
        SPECS
            .iter()
            .zip(values)
            .filter_map(|((name, help, kind), value)| Some(family(name, help, *kind, value?)))
            .collect()
    }
}

fn family(name: &str, help: &str, kind: MetricType, value: f64) -> MetricFamily {
    let mut metric = proto::Metric::default();
    if kind == MetricType::COUNTER {
        let mut c = proto::Counter::default();
        c.set_value(value);
        metric.set_counter(c);
    } else {
        let mut g = proto::Gauge::default();
        g.set_value(value);
        metric.set_gauge(g);
    }
    let mut f = MetricFamily::default();
    f.set_name(name.to_string());
    f.set_help(help.to_string());
    f.set_field_type(kind);
    f.set_metric(vec![metric]);
    f
}

/// The `/proc` texts the values come from (`None`: unreadable).
struct ProcFiles {
    stat: Option<String>,
    status: Option<String>,
    limits: Option<String>,
    netstat: Option<String>,
    system_stat: Option<String>,
    open_fds: Option<usize>,
}

impl ProcFiles {
    fn of_self() -> ProcFiles {
        let read = |p: &str| fs::read_to_string(p).ok();
        ProcFiles {
            stat: read("/proc/self/stat"),
            status: read("/proc/self/status"),
            limits: read("/proc/self/limits"),
            netstat: read("/proc/self/net/netstat"),
            system_stat: read("/proc/stat"),
            open_fds: fs::read_dir("/proc/self/fd").ok().map(Iterator::count),
        }
    }
}

/// The values in `SPECS` order.
fn read_values(p: &ProcFiles) -> [Option<f64>; 9] {
    // Fields after the parenthesised command name, which may itself hold spaces.
    let stat: Vec<&str> = p
        .stat
        .as_deref()
        .and_then(|s| s.rsplit_once(')'))
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // `stat` fields counted from the state (field 3 of proc(5)).
    let field = |n: usize| stat.get(n - 3).and_then(|v| v.parse::<f64>().ok());
    let cpu = field(14)
        .zip(field(15))
        .map(|(u, s)| (u + s) / TICKS_PER_SECOND);
    let boot = p.system_stat.as_deref().and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("btime ")?.trim().parse::<f64>().ok())
    });
    let start = field(22).zip(boot).map(|(t, b)| b + t / TICKS_PER_SECOND);
    let rss = p.status.as_deref().and_then(|s| {
        s.lines().find_map(|l| {
            let kb = l.strip_prefix("VmRSS:")?.trim().strip_suffix("kB")?;
            kb.trim().parse::<f64>().ok().map(|k| k * 1024.0)
        })
    });
    let limit = |name: &str| p.limits.as_deref().and_then(|s| soft_limit(s, name));
    let (rx, tx) = p
        .netstat
        .as_deref()
        .map(|s| (ip_ext(s, "InOctets"), ip_ext(s, "OutOctets")))
        .unwrap_or_default();
    [
        cpu,
        p.open_fds.map(|n| n as f64),
        limit("Max open files"),
        field(23),
        limit("Max address space"),
        rss,
        start,
        rx,
        tx,
    ]
}

/// The soft limit of the `/proc/<pid>/limits` row `name`.
fn soft_limit(limits: &str, name: &str) -> Option<f64> {
    let rest = limits.lines().find_map(|l| l.strip_prefix(name))?;
    match rest.split_whitespace().next()? {
        "unlimited" => Some(u64::MAX as f64),
        v => v.parse().ok(),
    }
}

/// A counter of the `IpExt` rows of `/proc/<pid>/net/netstat` (a names row, then a values
/// row).
fn ip_ext(netstat: &str, name: &str) -> Option<f64> {
    let mut rows = netstat.lines().filter_map(|l| l.strip_prefix("IpExt:"));
    let names = rows.next()?;
    let values = rows.next()?;
    let at = names.split_whitespace().position(|n| n == name)?;
    values.split_whitespace().nth(at)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> ProcFiles {
        ProcFiles {
            stat: Some("4242 (vc sched) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 3000 123456789 2500 18446744073709551615".into()),
            status: Some("Name:\tvc\nVmRSS:\t   10240 kB\nThreads:\t9\n".into()),
            limits: Some("Limit                     Soft Limit           Hard Limit           Units     \nMax open files            1024                 524288               files     \nMax address space         unlimited            unlimited            bytes     \n".into()),
            netstat: Some("TcpExt: SyncookiesSent\nTcpExt: 0\nIpExt: InNoRoutes InOctets OutOctets\nIpExt: 0 5000 7000\n".into()),
            system_stat: Some("cpu  1 2 3\nbtime 1700000000\n".into()),
            open_fds: Some(12),
        }
    }

    #[test]
    fn values_are_read_as_gos_process_collector_reads_them() {
        let v = read_values(&files());
        let expected = [
            3.0,
            12.0,
            1024.0,
            123456789.0,
            u64::MAX as f64,
            10240.0 * 1024.0,
            1700000030.0,
            5000.0,
            7000.0,
        ];
        assert_eq!(v.map(Option::unwrap), expected);
    }

    #[test]
    fn an_unreadable_file_leaves_out_only_its_values() {
        let p = ProcFiles {
            netstat: None,
            ..files()
        };
        let v = read_values(&p);
        assert_eq!((v[7], v[8]), (None, None));
        assert_eq!(v[0], Some(3.0));
    }

    #[test]
    fn this_process_exports_every_process_series() {
        let families = ProcessCollector::new().unwrap().collect();
        let names: Vec<&str> = families.iter().map(|f| f.name()).collect();
        for (name, _, _) in SPECS {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
    }
}
