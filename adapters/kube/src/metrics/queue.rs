//! The per-queue series (Volcano: pkg/scheduler/metrics/queue.go): six resource figures, each
//! as milli-cpu, memory bytes and scalar resources, and the queue's share, weight and overuse.

use std::collections::{BTreeSet, HashMap};

use prometheus::{GaugeVec, core::Collector};
use tephra_engine::model::Resource;

use super::{Registrar, opts};

/// Which resource figure of a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueueStat {
    Allocated,
    Request,
    Deserved,
    Capacity,
    RealCapacity,
    Inqueue,
}

impl QueueStat {
    const ALL: [QueueStat; 6] = [
        QueueStat::Allocated,
        QueueStat::Request,
        QueueStat::Deserved,
        QueueStat::Capacity,
        QueueStat::RealCapacity,
        QueueStat::Inqueue,
    ];

    /// The name part of the series and their help texts (cpu, memory, scalars).
    fn describe(self) -> (&'static str, [&'static str; 3]) {
        match self {
            QueueStat::Allocated => (
                "allocated",
                [
                    "Allocated CPU count for one queue",
                    "Allocated memory for one queue",
                    "Allocated scalar resources for one queue",
                ],
            ),
            QueueStat::Request => (
                "request",
                [
                    "Request CPU count for one queue",
                    "Request memory for one queue",
                    "Request scalar resources for one queue",
                ],
            ),
            QueueStat::Deserved => (
                "deserved",
                [
                    "Deserved CPU count for one queue",
                    "Deserved memory for one queue",
                    "Deserved scalar resources for one queue",
                ],
            ),
            QueueStat::Capacity => (
                "capacity",
                [
                    "Capacity CPU count for one queue",
                    "Capacity memory for one queue",
                    "Capacity scalar resources for one queue",
                ],
            ),
            QueueStat::RealCapacity => (
                "real_capacity",
                [
                    "Capacity CPU count for one queue",
                    "Capacity memory for one queue",
                    "Capacity scalar resources for one queue",
                ],
            ),
            QueueStat::Inqueue => (
                "inqueue",
                [
                    "Inqueue CPU for admitted but not yet running jobs in one queue",
                    "Inqueue memory for admitted but not yet running jobs in one queue",
                    "Inqueue scalar resources for admitted but not yet running jobs in one queue",
                ],
            ),
        }
    }
}

/// One resource figure's three series.
#[derive(Debug, Clone)]
pub struct ResourceSeries {
    pub milli_cpu: GaugeVec,
    pub memory_bytes: GaugeVec,
    pub scalar_resources: GaugeVec,
}

/// Every per-queue series.
#[derive(Debug, Clone)]
pub struct QueueSeries {
    /// In `QueueStat::ALL` order.
    resources: Vec<ResourceSeries>,
    pub share: GaugeVec,
    pub weight: GaugeVec,
    pub overused: GaugeVec,
}

/// The scalar resources each (figure, queue) has reported.
pub(super) type KnownScalars = HashMap<(QueueStat, String), BTreeSet<String>>;

impl QueueSeries {
    pub(super) fn register(r: &Registrar) -> Result<QueueSeries, prometheus::Error> {
        let queue = ["queue_name"];
        let mut resources = Vec::new();
        for stat in QueueStat::ALL {
            let (name, [cpu, memory, scalars]) = stat.describe();
            resources.push(ResourceSeries {
                milli_cpu: r.gauges(opts(&format!("queue_{name}_milli_cpu"), cpu), &queue)?,
                memory_bytes: r
                    .gauges(opts(&format!("queue_{name}_memory_bytes"), memory), &queue)?,
                scalar_resources: r.gauges(
                    opts(&format!("queue_{name}_scalar_resources"), scalars),
                    &["queue_name", "resource"],
                )?,
            });
        }
        Ok(QueueSeries {
            resources,
            share: r.gauges(opts("queue_share", "Share for one queue"), &queue)?,
            weight: r.gauges(opts("queue_weight", "Weight for one queue"), &queue)?,
            overused: r.gauges(opts("queue_overused", "If one queue is overused"), &queue)?,
        })
    }

    /// The series of one figure.
    pub fn of(&self, stat: QueueStat) -> &ResourceSeries {
        &self.resources[stat as usize]
    }

    /// Sets `queue`'s `stat` to `r`; a scalar the queue reported before for this figure and
    /// lacks now is set to 0 (Volcano: metrics/queue.go, updateScalarResourceMetrics).
    pub(super) fn set(&self, known: &mut KnownScalars, stat: QueueStat, queue: &str, r: &Resource) {
        let series = self.of(stat);
        series
            .milli_cpu
            .with_label_values(&[queue])
            .set(r.milli_cpu);
        series
            .memory_bytes
            .with_label_values(&[queue])
            .set(r.memory);
        let seen = known.entry((stat, queue.to_string())).or_default();
        for (dim, value) in r.scalars() {
            seen.insert(dim.name().to_string());
            series
                .scalar_resources
                .with_label_values(&[queue, dim.name()])
                .set(value);
        }
        for name in seen.iter() {
            if r.scalars().all(|(dim, _)| dim.name() != name) {
                series
                    .scalar_resources
                    .with_label_values(&[queue, name])
                    .set(0.0);
            }
        }
    }

    /// Drops every series of `queue` (Volcano: metrics/queue.go, DeleteQueueMetrics).
    pub(super) fn delete(&self, known: &mut KnownScalars, queue: &str) {
        for series in &self.resources {
            let _ = series.milli_cpu.remove_label_values(&[queue]);
            let _ = series.memory_bytes.remove_label_values(&[queue]);
            remove_partial(&series.scalar_resources, queue);
        }
        for g in [&self.share, &self.weight, &self.overused] {
            let _ = g.remove_label_values(&[queue]);
        }
        known.retain(|(_, q), _| q != queue);
    }
}

/// Removes every scalar-resource series of `queue`, whatever its `resource` label.
fn remove_partial(series: &GaugeVec, queue: &str) {
    let resources: Vec<String> = series
        .collect()
        .iter()
        .flat_map(|family| family.get_metric())
        .filter(|m| {
            m.get_label()
                .iter()
                .any(|l| l.name() == "queue_name" && l.value() == queue)
        })
        .filter_map(|m| {
            m.get_label()
                .iter()
                .find(|l| l.name() == "resource")
                .map(|l| l.value().to_string())
        })
        .collect();
    for resource in resources {
        let _ = series.remove_label_values(&[queue, &resource]);
    }
}
