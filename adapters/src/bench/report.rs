//! How a benchmark is shown: a table for people (with each cycle's CPU time, to tell cost from
//! waiting for a core on a busy machine), or one JSON document for tools
//! (`{"workload":…,"threads":…,"cycles":[{"total_ms":…,"snapshot_ms":…,"open_ms":…,
//! "actions_ms":{"enqueue":…,…},"close_ms":…,"binds":…}],"peak_rss_bytes":…,"warm_up_ms":…}`,
//! `warm_up_ms` absent when started cold).

use std::io::{self, Write};

use serde::Serialize;
use serde::ser::SerializeMap;

use super::{BenchRun, CycleTiming};

#[derive(Serialize)]
struct Report<'a> {
    workload: &'a str,
    threads: usize,
    cycles: Vec<Cycle<'a>>,
    peak_rss_bytes: Option<u64>,
    /// Before cycle 1; absent when started cold.
    #[serde(skip_serializing_if = "Option::is_none")]
    warm_up_ms: Option<f64>,
}

#[derive(Serialize)]
struct Cycle<'a> {
    total_ms: f64,
    snapshot_ms: f64,
    open_ms: f64,
    actions_ms: Actions<'a>,
    close_ms: f64,
    binds: usize,
}

/// Action timings as a JSON object in configuration order.
struct Actions<'a>(&'a [(String, f64)]);

impl Serialize for Actions<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, ms) in self.0 {
            map.serialize_entry(name, ms)?;
        }
        map.end()
    }
}

impl<'a> From<&'a CycleTiming> for Cycle<'a> {
    fn from(t: &'a CycleTiming) -> Self {
        Cycle {
            total_ms: t.total_ms(),
            snapshot_ms: t.snapshot_ms,
            open_ms: t.open_ms,
            actions_ms: Actions(&t.actions_ms),
            close_ms: t.close_ms,
            binds: t.binds,
        }
    }
}

/// Writes the run as one line of JSON.
pub fn write_json(run: &BenchRun, out: &mut dyn Write) -> io::Result<()> {
    let report = Report {
        workload: &run.workload,
        threads: run.threads,
        cycles: run.cycles.iter().map(Cycle::from).collect(),
        peak_rss_bytes: run.peak_rss_bytes,
        warm_up_ms: run.warm_up_ms,
    };
    serde_json::to_writer(&mut *out, &report)?;
    writeln!(out)
}

/// Writes the run as a table: one row per cycle, milliseconds per phase.
pub fn write_text(run: &BenchRun, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "workload {}, {} thread{}",
        run.workload,
        run.threads,
        if run.threads == 1 { "" } else { "s" }
    )?;
    match run.warm_up_ms {
        Some(ms) => writeln!(out, "cache warm-up before cycle 1: {ms:.1} ms")?,
        None => writeln!(out, "cold cache: cycle 1 builds every table")?,
    }
    let actions: Vec<&str> = run
        .cycles
        .first()
        .map(|c| c.actions_ms.iter().map(|(n, _)| n.as_str()).collect())
        .unwrap_or_default();
    write!(
        out,
        "{:>5} {:>10} {:>10} {:>8}",
        "cycle", "total ms", "snapshot", "open"
    )?;
    for a in &actions {
        write!(out, " {a:>10}")?;
    }
    writeln!(
        out,
        " {:>8} {:>10} {:>7}  churn",
        "close", "cpu ms", "binds"
    )?;
    for (i, c) in run.cycles.iter().enumerate() {
        write!(
            out,
            "{:>5} {:>10.1} {:>10.1} {:>8.1}",
            i + 1,
            c.total_ms(),
            c.snapshot_ms,
            c.open_ms
        )?;
        for (_, ms) in &c.actions_ms {
            write!(out, " {ms:>10.1}")?;
        }
        let cpu = c.cpu_ms.map_or("-".to_string(), |ms| format!("{ms:.1}"));
        write!(out, " {:>8.1} {cpu:>10} {:>7}", c.close_ms, c.binds)?;
        match i.checked_sub(1).and_then(|k| run.churn.get(k)) {
            Some(s) => writeln!(out, "  -{} +{} pods", s.finished, s.arrived)?,
            None => writeln!(out)?,
        }
    }
    match run.peak_rss_bytes {
        Some(b) => writeln!(out, "peak RSS {:.1} MiB", b as f64 / (1024.0 * 1024.0)),
        None => writeln!(out, "peak RSS unknown"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::ChurnStep;

    fn run() -> BenchRun {
        let cycle = |allocate: f64, binds| CycleTiming {
            snapshot_ms: 1.0,
            open_ms: 2.0,
            actions_ms: vec![
                ("enqueue".into(), 0.5),
                ("allocate".into(), allocate),
                ("backfill".into(), 0.25),
            ],
            close_ms: 3.0,
            binds,
            cpu_ms: Some(15.0),
        };
        BenchRun {
            workload: "small".into(),
            threads: 2,
            cycles: vec![cycle(10.0, 1000), cycle(1.0, 75)],
            churn: vec![ChurnStep {
                finished: 75,
                arrived: 80,
            }],
            decisions: None,
            peak_rss_bytes: Some(3 * 1024 * 1024),
            warm_up_ms: Some(4.5),
            flamegraphs: Vec::new(),
        }
    }

    #[test]
    fn json_has_the_documented_shape_with_actions_in_order() {
        let mut out = Vec::new();
        write_json(&run(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(concat!(
            r#"{"workload":"small","threads":2,"cycles":[{"total_ms":16.75,"snapshot_ms":1.0,"#,
            r#""open_ms":2.0,"actions_ms":{"enqueue":0.5,"allocate":10.0,"backfill":0.25},"#,
            r#""close_ms":3.0,"binds":1000},"#
        )));
        assert!(text.ends_with("\"peak_rss_bytes\":3145728,\"warm_up_ms\":4.5}\n"));
        assert_eq!(text.lines().count(), 1);
    }

    #[test]
    fn a_cold_run_reports_no_warm_up() {
        let cold = BenchRun {
            warm_up_ms: None,
            ..run()
        };
        let mut out = Vec::new();
        write_json(&cold, &mut out).unwrap();
        assert!(
            String::from_utf8(out)
                .unwrap()
                .ends_with("\"peak_rss_bytes\":3145728}\n")
        );
        let mut out = Vec::new();
        write_text(&cold, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text.lines().nth(1),
            Some("cold cache: cycle 1 builds every table")
        );
    }

    #[test]
    fn text_has_a_row_per_cycle_with_the_churn() {
        let mut out = Vec::new();
        write_text(&run(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "workload small, 2 threads");
        assert_eq!(lines[1], "cache warm-up before cycle 1: 4.5 ms");
        assert!(lines[2].contains("allocate") && lines[2].ends_with("cpu ms   binds  churn"));
        assert!(
            lines[3].trim_start().starts_with("1       16.8"),
            "{}",
            lines[3]
        );
        assert!(lines[4].ends_with("  -75 +80 pods"), "{}", lines[4]);
        assert_eq!(lines[5], "peak RSS 3.0 MiB");
    }
}
