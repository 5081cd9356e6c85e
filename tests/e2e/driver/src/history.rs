//! A scenario's figures as a record of the benchmark history (perf/history/README.md),
//! appended to the file `TEPHRA_HISTORY` names. Without it nothing is written, so a CI run
//! leaves the checkout as it was.

use std::path::PathBuf;

use anyhow::{Context, Result};
use tephra_adapters::history::{E2eRecord, Provenance, Quantiles, append_record};

use crate::env::Env;

/// The variable naming the history file (`perf/history/e2e.jsonl`).
pub const HISTORY_VAR: &str = "TEPHRA_HISTORY";

/// Appends the record `make` builds from where and when it is made, when `TEPHRA_HISTORY` is
/// set; returns the file written.
pub fn append_if_asked(
    env: &Env,
    make: impl FnOnce(Provenance) -> E2eRecord,
) -> Result<Option<PathBuf>> {
    let Some(path) = std::env::var_os(HISTORY_VAR).map(PathBuf::from) else {
        return Ok(None);
    };
    let repo = env
        .deploy
        .parent()
        .context("deploy/ sits in the repository")?;
    let record = make(Provenance::of_checkout(repo)?);
    append_record(&path, &record)?;
    Ok(Some(path))
}

/// Percentiles of pod creation to bound from vc-scheduler's metrics text: the buckets of
/// `volcano_task_scheduling_latency_milliseconds{stage="Bound"}`, read as Prometheus'
/// `histogram_quantile` reads them. `None` when no pod was bound.
pub fn bound_quantiles(metrics: &str) -> Option<Quantiles> {
    let prefix = "volcano_task_scheduling_latency_milliseconds_bucket{";
    let mut buckets: Vec<(f64, f64)> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .filter_map(|l| {
            let (labels, count) = l.split_once("} ")?;
            if !labels.split(',').any(|p| p == "stage=\"Bound\"") {
                return None;
            }
            let le = labels
                .split(',')
                .find_map(|p| p.strip_prefix("le=\""))?
                .trim_end_matches('"');
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().ok()?
            };
            Some((le, count.trim().parse().ok()?))
        })
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(Quantiles {
        p50: quantile(0.5, &buckets)?,
        p90: quantile(0.9, &buckets)?,
        p99: quantile(0.99, &buckets)?,
    })
}

/// The `q` quantile of cumulative `(upper bound, count)` buckets, sorted, the last `+Inf`:
/// linear within the bucket it falls in; in the `+Inf` bucket, the highest finite bound.
fn quantile(q: f64, buckets: &[(f64, f64)]) -> Option<f64> {
    let total = buckets.last().filter(|b| b.0.is_infinite())?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let i = buckets.iter().position(|b| b.1 >= rank)?;
    let (upper, count) = buckets[i];
    if upper.is_infinite() {
        return buckets.get(i.checked_sub(1)?).map(|b| b.0);
    }
    let (lower, below) = match i.checked_sub(1) {
        Some(j) => buckets[j],
        None if upper > 0.0 => (0.0, 0.0),
        None => return Some(upper),
    };
    if count == below {
        return Some(upper);
    }
    Some(lower + (upper - lower) * (rank - below) / (count - below))
}

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: &str = "\
volcano_task_scheduling_latency_milliseconds_bucket{stage=\"Assumed\",le=\"100\"} 7
volcano_task_scheduling_latency_milliseconds_bucket{stage=\"Bound\",le=\"100\"} 0
volcano_task_scheduling_latency_milliseconds_bucket{stage=\"Bound\",le=\"200\"} 50
volcano_task_scheduling_latency_milliseconds_bucket{stage=\"Bound\",le=\"400\"} 100
volcano_task_scheduling_latency_milliseconds_bucket{stage=\"Bound\",le=\"+Inf\"} 100
";

    #[test]
    fn quantiles_interpolate_within_the_bound_buckets_only() {
        let q = bound_quantiles(METRICS).unwrap();
        assert_eq!((q.p50, q.p90, q.p99), (200.0, 360.0, 396.0));
    }

    #[test]
    fn ranks_past_the_last_finite_bucket_take_its_bound() {
        let metrics = METRICS.replace("le=\"+Inf\"} 100", "le=\"+Inf\"} 200");
        assert_eq!(bound_quantiles(&metrics).unwrap().p99, 400.0);
    }

    #[test]
    fn no_bound_pod_has_no_quantiles() {
        assert_eq!(bound_quantiles(""), None);
        let none =
            "volcano_task_scheduling_latency_milliseconds_bucket{stage=\"Bound\",le=\"+Inf\"} 0\n";
        assert_eq!(bound_quantiles(none), None);
    }
}
