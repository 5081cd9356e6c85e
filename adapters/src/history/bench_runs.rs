//! One history record from several `tephra bench --json` runs of one workload: every figure's
//! median and range over the runs, grouped as `scripts/bench-targets` prints them (first
//! cycle, steady cycles 2-3, and the last three cycles of a run of more than four).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::record::{ActionTime, BenchRecord, CycleFigures, Provenance, Spread, ThreadPoint};

/// The document `tephra bench --json` prints (`crate::bench::write_json`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BenchReport {
    pub workload: String,
    pub threads: u32,
    pub cycles: Vec<CycleReport>,
    pub peak_rss_bytes: Option<u64>,
    pub warm_up_ms: Option<f64>,
}

/// One cycle of a `BenchReport`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CycleReport {
    pub total_ms: f64,
    pub snapshot_ms: f64,
    pub open_ms: f64,
    pub actions_ms: ActionsInOrder,
    pub close_ms: f64,
    pub binds: u64,
}

/// The `actions_ms` object with its keys in the order written (the configuration's).
#[derive(Debug, Clone, PartialEq)]
pub struct ActionsInOrder(pub Vec<(String, f64)>);

impl<'de> Deserialize<'de> for ActionsInOrder {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = ActionsInOrder;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of action names to milliseconds")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut actions = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    actions.push(entry);
                }
                Ok(ActionsInOrder(actions))
            }
        }
        d.deserialize_map(InOrder)
    }
}

/// The record of `reports`, runs of one workload: the cycle figures come from the runs with
/// the most threads, the thread scaling from every thread count's first cycles.
pub fn bench_record(
    provenance: Provenance,
    variant: &str,
    reports: &[BenchReport],
) -> Result<BenchRecord, String> {
    let first = reports.first().ok_or("no bench runs given")?;
    if let Some(other) = reports.iter().find(|r| r.workload != first.workload) {
        return Err(format!(
            "runs of two workloads given ({} and {}); a record is of one",
            first.workload, other.workload
        ));
    }
    if reports.iter().any(|r| r.cycles.is_empty()) {
        return Err(format!("a run of {} has no cycles", first.workload));
    }
    let threads = reports.iter().map(|r| r.threads).max().unwrap_or(1);
    let main: Vec<&BenchReport> = reports.iter().filter(|r| r.threads == threads).collect();
    let cycles = main.iter().map(|r| r.cycles.len()).min().unwrap_or(0);
    let group = |pick: fn(&[CycleReport]) -> &[CycleReport]| {
        let picked: Vec<&CycleReport> = main.iter().flat_map(|r| pick(&r.cycles)).collect();
        cycle_figures(&picked)
    };
    let mut by_threads: BTreeMap<u32, Vec<&CycleReport>> = BTreeMap::new();
    for r in reports {
        by_threads.entry(r.threads).or_default().push(&r.cycles[0]);
    }
    Ok(BenchRecord {
        provenance,
        workload: first.workload.clone(),
        variant: variant.to_string(),
        threads,
        runs: main.len() as u32,
        cycles: cycles as u32,
        cold: main.iter().all(|r| r.warm_up_ms.is_none()),
        first_cycle: group(|c| &c[..1]).ok_or("no first cycle")?,
        steady_cycle: group(|c| &c[1.min(c.len())..3.min(c.len())]),
        late_steady_cycle: (cycles > 4)
            .then(|| group(|c| &c[c.len().saturating_sub(3)..]))
            .flatten(),
        warm_up_ms: spread(main.iter().filter_map(|r| r.warm_up_ms)),
        peak_rss_bytes: spread(
            main.iter()
                .filter_map(|r| r.peak_rss_bytes.map(|b| b as f64)),
        ),
        thread_scaling: by_threads
            .into_iter()
            .filter_map(|(threads, firsts)| {
                Some(ThreadPoint {
                    threads,
                    total_ms: spread(firsts.iter().map(|c| c.total_ms))?,
                    allocate_ms: spread(firsts.iter().filter_map(|c| action_ms(c, "allocate"))),
                })
            })
            .collect(),
    })
}

fn action_ms(cycle: &CycleReport, action: &str) -> Option<f64> {
    cycle
        .actions_ms
        .0
        .iter()
        .find(|(a, _)| a == action)
        .map(|(_, ms)| *ms)
}

/// The figures of a group of cycles; `None` for no cycles.
fn cycle_figures(cycles: &[&CycleReport]) -> Option<CycleFigures> {
    let of = |f: fn(&CycleReport) -> f64| spread(cycles.iter().map(|c| f(c)));
    let first = cycles.first()?;
    Some(CycleFigures {
        total_ms: of(|c| c.total_ms)?,
        snapshot_ms: of(|c| c.snapshot_ms)?,
        open_ms: of(|c| c.open_ms)?,
        actions_ms: first
            .actions_ms
            .0
            .iter()
            .filter_map(|(action, _)| {
                let ms = spread(cycles.iter().filter_map(|c| action_ms(c, action)))?;
                Some(ActionTime {
                    action: action.clone(),
                    ms,
                })
            })
            .collect(),
        close_ms: of(|c| c.close_ms)?,
        binds: of(|c| c.binds as f64)?,
        placements_per_s: of(|c| c.binds as f64 / (c.total_ms / 1e3).max(1e-9))?,
    })
}

/// Median and range of `values`; `None` for none.
fn spread(values: impl Iterator<Item = f64>) -> Option<Spread> {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Spread {
        median,
        min: v[0],
        max: v[n - 1],
        n: n as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{BenchRun, CycleTiming, write_json};
    use crate::history::{Machine, SCHEMA};

    fn provenance() -> Provenance {
        Provenance {
            schema: SCHEMA,
            commit: "abc".into(),
            dirty: true,
            date: "2026-12-03T14:00:00Z".into(),
            machine: Machine {
                nproc: 2,
                cpu_model: Some("cpu".into()),
                memory_bytes: None,
            },
        }
    }

    /// A run as `tephra bench --json` prints it, with cycle `i` taking `base + i` ms in
    /// allocate.
    fn report(threads: usize, cycles: usize, base: f64) -> BenchReport {
        let run = BenchRun {
            workload: "small".into(),
            threads,
            cycles: (0..cycles)
                .map(|i| CycleTiming {
                    snapshot_ms: 1.0,
                    open_ms: 2.0,
                    actions_ms: vec![
                        ("enqueue".into(), 0.5),
                        ("allocate".into(), base + i as f64),
                    ],
                    close_ms: 1.5,
                    binds: 1000,
                    cpu_ms: None,
                })
                .collect(),
            churn: Vec::new(),
            decisions: None,
            peak_rss_bytes: Some(1 << 20),
            warm_up_ms: Some(3.0),
            flamegraphs: Vec::new(),
        };
        let mut out = Vec::new();
        write_json(&run, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn the_bench_json_reads_with_actions_in_configuration_order() {
        let r = report(2, 1, 5.0);
        let names: Vec<&str> = r.cycles[0]
            .actions_ms
            .0
            .iter()
            .map(|(a, _)| a.as_str())
            .collect();
        assert_eq!(names, ["enqueue", "allocate"]);
        assert_eq!((r.threads, r.warm_up_ms), (2, Some(3.0)));
    }

    #[test]
    fn medians_and_ranges_are_taken_per_cycle_group() {
        let runs = [report(2, 3, 5.0), report(2, 3, 7.0), report(2, 3, 6.0)];
        let rec = bench_record(provenance(), "head", &runs).unwrap();
        assert_eq!(
            (rec.threads, rec.runs, rec.cycles, rec.cold),
            (2, 3, 3, false)
        );
        let allocate = &rec.first_cycle.actions_ms[1];
        assert_eq!(allocate.action, "allocate");
        assert_eq!(
            (allocate.ms.median, allocate.ms.min, allocate.ms.max),
            (6.0, 5.0, 7.0)
        );
        assert_eq!(rec.first_cycle.total_ms.median, 11.0);
        assert_eq!(rec.first_cycle.placements_per_s.median, 1000.0 / 0.011);
        let steady = rec.steady_cycle.unwrap();
        assert_eq!(steady.total_ms.n, 6, "cycles 2 and 3 of every run");
        assert_eq!(steady.actions_ms[1].ms.median, 7.5);
        assert_eq!(rec.late_steady_cycle, None);
        assert_eq!(rec.peak_rss_bytes.unwrap().median, f64::from(1 << 20));
        assert_eq!(rec.thread_scaling.len(), 1);
    }

    #[test]
    fn fewer_threads_feed_only_the_scaling() {
        let runs = [report(2, 3, 5.0), report(1, 1, 9.0), report(2, 3, 5.0)];
        let rec = bench_record(provenance(), "head", &runs).unwrap();
        assert_eq!((rec.threads, rec.runs), (2, 2));
        let points: Vec<(u32, f64)> = rec
            .thread_scaling
            .iter()
            .map(|p| (p.threads, p.allocate_ms.unwrap().median))
            .collect();
        assert_eq!(points, [(1, 9.0), (2, 5.0)]);
        assert_eq!(rec.first_cycle.actions_ms[1].ms.max, 5.0);
    }

    #[test]
    fn a_single_cycle_run_has_no_steady_figures_and_long_runs_have_late_ones() {
        let one = bench_record(provenance(), "head", &[report(2, 1, 5.0)]).unwrap();
        assert_eq!(one.steady_cycle, None);
        let long = bench_record(provenance(), "head", &[report(2, 8, 0.0)]).unwrap();
        assert_eq!(long.late_steady_cycle.unwrap().actions_ms[1].ms.median, 6.0);
    }

    #[test]
    fn mixed_workloads_or_no_runs_are_refused() {
        let mut other = report(2, 1, 1.0);
        other.workload = "large".into();
        let e = bench_record(provenance(), "head", &[report(2, 1, 1.0), other]).unwrap_err();
        assert_eq!(
            e,
            "runs of two workloads given (small and large); a record is of one"
        );
        assert_eq!(
            bench_record(provenance(), "head", &[]).unwrap_err(),
            "no bench runs given"
        );
    }
}
