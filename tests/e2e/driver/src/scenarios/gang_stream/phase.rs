//! One phase's figures (the burst, or the fixed rate) of a stream: its pods' creation and bind
//! times and the schedulers' API writes over the phase; printed, and made into a history record.
//! A phase may be partial: Volcano's scheduler in `bench-kwok` is measured for what it bound
//! in its time.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tephra_adapters::history::{E2eRecord, Provenance, Quantiles};

use super::super::throughput::CEILING_CONCURRENCY;
use super::quantiles;

/// One phase of a run.
pub struct Phase {
    pub name: &'static str,
    /// When the phase's clock starts: the scheduler's start for the burst, the first creation
    /// for the fixed rate.
    pub from: Instant,
    /// Each pod's creation (when it was sent) and bind, `None` for a pod never seen bound.
    pub created: Vec<Instant>,
    pub bound: Vec<Option<Instant>>,
    /// The scheduler's API writes over the phase, by `verb resource` (tephra) or by HTTP
    /// method (Volcano).
    pub writes: BTreeMap<String, f64>,
}

impl Phase {
    /// Pods created in the phase.
    pub fn pods(&self) -> usize {
        self.created.len()
    }

    /// Pods bound in the phase.
    pub fn bound_pods(&self) -> usize {
        self.bound.iter().flatten().count()
    }

    pub fn complete(&self) -> bool {
        self.bound_pods() == self.pods()
    }

    pub fn first(&self) -> Duration {
        self.bound
            .iter()
            .flatten()
            .min()
            .map_or(Duration::ZERO, |t| *t - self.from)
    }

    pub fn last(&self) -> Duration {
        self.bound
            .iter()
            .flatten()
            .max()
            .map_or(Duration::ZERO, |t| *t - self.from)
    }

    /// Pods bound per second from the phase's start to the last bind.
    pub fn pods_per_s(&self) -> f64 {
        self.bound_pods() as f64 / self.last().as_secs_f64().max(1e-3)
    }

    /// Pods bound per second from the first bind to the last.
    pub fn binding_pods_per_s(&self) -> f64 {
        self.bound_pods() as f64 / (self.last() - self.first()).as_secs_f64().max(1e-3)
    }

    /// API writes per pod of the phase.
    pub fn writes_per_pod(&self) -> f64 {
        self.writes.values().sum::<f64>() / self.pods().max(1) as f64
    }

    /// Creation to bound of the pods bound.
    pub fn creation_to_bound(&self) -> Option<Quantiles> {
        let ms = self
            .created
            .iter()
            .zip(&self.bound)
            .filter_map(|(c, b)| b.map(|b| b.saturating_duration_since(*c).as_secs_f64() * 1000.0))
            .collect();
        quantiles(ms)
    }

    /// Prints the figures, each line led by `lead` (`bench-kwok: tephra`).
    pub fn print(&self, lead: &str, ceiling: f64) {
        let rate = self.pods_per_s();
        let bound = if self.complete() {
            format!("{} pods", self.pods())
        } else {
            format!("{} of {} pods", self.bound_pods(), self.pods())
        };
        println!(
            "       {lead} {}: {bound} bound {:.1}s after the start ({rate:.0} pods/s, {:.0}% of the ceiling); first bind at {:.2}s, binds ran {:.1}s ({:.0} pods/s)",
            self.name,
            self.last().as_secs_f64(),
            100.0 * rate / ceiling,
            self.first().as_secs_f64(),
            (self.last() - self.first()).as_secs_f64(),
            self.binding_pods_per_s(),
        );
        if let Some(q) = self.creation_to_bound() {
            println!(
                "       {lead} {}: creation to bound p50 {:.0} ms, p90 {:.0} ms, p99 {:.0} ms",
                self.name, q.p50, q.p90, q.p99
            );
        }
        for (what, n) in &self.writes {
            println!(
                "       {lead} {}:   {what:<24} {n:>7} ({:.2} per pod)",
                self.name,
                n / self.pods().max(1) as f64
            );
        }
    }

    /// The phase's history record, made once where and when are known: scenario
    /// `<size>/<phase>` for tephra, `<size>/<phase> volcano` with `volcano_commit` for Volcano's.
    pub fn record(
        &self,
        (size, nodes): (&str, usize),
        ceiling: f64,
        catch_up: f64,
        volcano_commit: Option<&str>,
    ) -> impl FnOnce(Provenance) -> E2eRecord + use<> {
        let scenario = match volcano_commit {
            None => format!("{size}/{}", self.name),
            Some(_) => format!("{size}/{} volcano", self.name),
        };
        let volcano_commit = volcano_commit.map(str::to_string);
        let pods = self.bound_pods() as u32;
        let (pods_per_s, binding_pods_per_s) = (self.pods_per_s(), self.binding_pods_per_s());
        let creation_to_bound_ms = self.creation_to_bound();
        let (first, last) = (self.first().as_secs_f64(), self.last().as_secs_f64());
        let writes = self.writes.clone();
        move |provenance| E2eRecord {
            provenance,
            scenario,
            nodes: nodes as u32,
            pods,
            pods_per_s,
            binding_pods_per_s,
            api_ceiling_pods_per_s: ceiling,
            api_ceiling_concurrency: CEILING_CONCURRENCY as u32,
            status_catch_up_s: catch_up,
            creation_to_bound_ms,
            first_bind_s: Some(first),
            last_bind_s: Some(last),
            api_writes: Some(writes),
            binds_by_scheduler: None,
            running_pods: None,
            caches_synced_s: None,
            volcano_commit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_phase_counts_and_times_only_the_pods_bound() {
        let from = Instant::now();
        let at = |ms| from + Duration::from_millis(ms);
        let phase = Phase {
            name: "burst",
            from,
            created: vec![from; 4],
            bound: vec![Some(at(1000)), None, Some(at(2000)), None],
            writes: [("POST".to_string(), 4.0)].into(),
        };
        assert!(!phase.complete());
        assert_eq!((phase.pods(), phase.bound_pods()), (4, 2));
        assert_eq!(phase.pods_per_s(), 1.0);
        assert_eq!(phase.binding_pods_per_s(), 2.0);
        assert_eq!(phase.writes_per_pod(), 1.0);
        let q = phase.creation_to_bound().unwrap();
        assert_eq!((q.p50, q.p99), (1000.0, 2000.0));
    }
}
