//! What a session counts and times for the scheduler's Prometheus metrics, as plain data.
//! Volcano feeds its metrics from inside the session (plugin callbacks, actions, statement
//! commits); tephra's session records the same facts where Volcano feeds them and returns them
//! with its decisions, and the adapter owns the metrics.

use std::sync::Arc;
use std::time::Duration;

use super::EvictionKind;
use crate::api::Time;
use crate::model::{JobId, Resource};
use crate::snapshot::Snapshot;

/// The actions whose committed evictions Volcano counts (`eviction_transactions_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvictingAction {
    Preempt,
    Reclaim,
    GangPreempt,
    GangReclaim,
}

impl EvictingAction {
    /// Every action, in the order of `SessionMetrics::eviction_transactions`.
    pub const ALL: [EvictingAction; 4] = [
        EvictingAction::Preempt,
        EvictingAction::Reclaim,
        EvictingAction::GangPreempt,
        EvictingAction::GangReclaim,
    ];

    /// The action's configured name, the metric's `action` label.
    pub fn name(self) -> &'static str {
        match self {
            EvictingAction::Preempt => "preempt",
            EvictingAction::Reclaim => "reclaim",
            EvictingAction::GangPreempt => "gangpreempt",
            EvictingAction::GangReclaim => "gangreclaim",
        }
    }
}

impl From<EvictionKind> for EvictingAction {
    fn from(kind: EvictionKind) -> EvictingAction {
        match kind {
            EvictionKind::GangPreempt => EvictingAction::GangPreempt,
            EvictionKind::GangReclaim => EvictingAction::GangReclaim,
        }
    }
}

/// A node-search stage Volcano times on every call (Volcano: util/predicate_helper.go,
/// PredicateNodes; util/scheduler_helper.go, PrioritizeNodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchStage {
    /// Finding the nodes a task fits.
    Predicate,
    /// Scoring the nodes it fits.
    Scoring,
}

/// How long each node-search call of a session took, by stage.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchTimings {
    pub predicate: Vec<Duration>,
    pub scoring: Vec<Duration>,
}

impl SearchTimings {
    /// Records one call of `stage` that took `took`.
    pub fn record(&mut self, stage: SearchStage, took: Duration) {
        match stage {
            SearchStage::Predicate => self.predicate.push(took),
            SearchStage::Scoring => self.scoring.push(took),
        }
    }
}

/// How long one plugin's `on_session_open` or `on_session_close` took.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginTiming {
    pub plugin: String,
    pub took: Duration,
}

/// A job that had tasks allocated or pipelined by allocate or backfill this session (Volcano
/// feeds the job's e2e scheduling duration on each such task).
#[derive(Debug, Clone, PartialEq)]
pub struct JobAssumed {
    pub namespace: Arc<str>,
    pub name: Arc<str>,
    pub queue: String,
    /// The PodGroup's creation time.
    pub created: Time,
    /// How many tasks were placed.
    pub tasks: u32,
}

/// What gang's session close reports (Volcano: plugins/gang/gang.go, OnSessionClose).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GangFigures {
    /// Each job with tasks (bar those left alone while their tasks are releasing): its name and
    /// how many more tasks its gang needs (0 when ready).
    pub unready_tasks: Vec<(Arc<str>, i32)>,
    /// The names of the jobs whose gang is not ready: each counts one retry.
    pub retried: Vec<Arc<str>>,
}

/// What a queue-sharing plugin (proportion, capacity) reports for one queue; `None` where the
/// plugin reports nothing for it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueFigures {
    pub name: String,
    pub allocated: Option<Resource>,
    pub request: Option<Resource>,
    pub inqueue: Option<Resource>,
    pub deserved: Option<Resource>,
    pub capacity: Option<Resource>,
    pub real_capacity: Option<Resource>,
    pub share: Option<f64>,
    pub weight: Option<f64>,
    pub overused: Option<bool>,
}

impl QueueFigures {
    /// Figures for the queue named `name`, none reported yet.
    pub fn named(name: &str) -> QueueFigures {
        QueueFigures {
            name: name.to_string(),
            ..Default::default()
        }
    }
}

/// Everything one session reports for the metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionMetrics {
    /// Each plugin's `on_session_open`, in tier order.
    pub plugin_open: Vec<PluginTiming>,
    /// Each plugin's `on_session_close`, in tier order.
    pub plugin_close: Vec<PluginTiming>,
    pub jobs_assumed: Vec<JobAssumed>,
    /// Node preemption attempts (preempt: a node whose victims were valid; topology-aware
    /// preempt: the chosen candidate).
    pub preemption_attempts: u64,
    /// The victim count of the last node preempt looked at, when it looked at one.
    pub preemption_victims: Option<usize>,
    /// Committed statements with at least one eviction, per action in `EvictingAction::ALL`
    /// order.
    pub eviction_transactions: [u64; 4],
    /// Gang's figures, when gang is configured.
    pub gang: Option<GangFigures>,
    /// Each job's dominant share at close (drf): namespace, name, share.
    pub job_shares: Vec<(Arc<str>, Arc<str>, f64)>,
    /// Per queue, what proportion or capacity reported.
    pub queues: Vec<QueueFigures>,
    /// Each node search's predicate and scoring time.
    pub search: SearchTimings,
}

impl SessionMetrics {
    /// Counts one committed statement of `action` with an eviction.
    pub fn eviction_transaction(&mut self, action: EvictingAction) {
        self.eviction_transactions[action as usize] += 1;
    }

    /// Records one preemption attempt.
    pub fn preemption_attempt(&mut self) {
        self.preemption_attempts += 1;
    }

    /// Fills `jobs_assumed` from the job of every task placed, in the order they were placed
    /// (one entry per job, at its first placement).
    pub(crate) fn set_jobs_assumed(&mut self, snap: &Snapshot, placed: &[JobId]) {
        let mut index: Vec<Option<u32>> = Vec::new();
        for &j in placed {
            if index.len() <= j.idx() {
                index.resize(j.idx() + 1, None);
            }
            match index[j.idx()] {
                Some(i) => self.jobs_assumed[i as usize].tasks += 1,
                None => {
                    index[j.idx()] = Some(self.jobs_assumed.len() as u32);
                    let jobs = &snap.jobs;
                    self.jobs_assumed.push(JobAssumed {
                        namespace: jobs.namespace[j.idx()].clone(),
                        name: jobs.name[j.idx()].clone(),
                        queue: snap.queues.name[jobs.queue[j.idx()].idx()].clone(),
                        created: jobs.created[j.idx()],
                        tasks: 1,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::harness::Harness;

    const CONF: &str = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: drf\n- plugins:\n  - name: proportion\n";

    /// One 4-cpu node; job `fits` (two 1-cpu tasks, gang of 2) in queue `a`, job `big` (three
    /// 3-cpu tasks, gang of 3) in queue `b`.
    fn closed() -> super::SessionMetrics {
        let mut ssn = Harness::new(CONF)
            .queue("a", 1)
            .queue("b", 1)
            .queue("idle", 1)
            .node("n1", "4", "8Gi", &[])
            .pod_group("ns", "fits", "a", 2)
            .pod("ns", "fits-0", "fits", "1", "1Gi")
            .pod("ns", "fits-1", "fits", "1", "1Gi")
            .pod_group("ns", "big", "b", 3)
            .pod("ns", "big-0", "big", "3", "1Gi")
            .pod("ns", "big-1", "big", "3", "1Gi")
            .pod("ns", "big-2", "big", "3", "1Gi")
            .open()
            .unwrap();
        crate::actions::run(&mut ssn, crate::config::Action::Allocate);
        ssn.close().metrics
    }

    #[test]
    fn every_plugin_open_and_close_is_timed_in_tier_order() {
        let m = closed();
        let names =
            |t: &[super::PluginTiming]| t.iter().map(|t| t.plugin.clone()).collect::<Vec<_>>();
        assert_eq!(names(&m.plugin_open), ["gang", "drf", "proportion"]);
        assert_eq!(names(&m.plugin_close), ["gang", "drf", "proportion"]);
    }

    #[test]
    fn each_predicate_search_of_allocate_is_timed() {
        assert!(!closed().search.predicate.is_empty());
    }

    #[test]
    fn a_job_placed_by_allocate_is_reported_once_with_its_task_count() {
        let m = closed();
        let jobs: Vec<(String, String, u32)> = m
            .jobs_assumed
            .iter()
            .map(|j| (j.name.to_string(), j.queue.clone(), j.tasks))
            .collect();
        assert_eq!(jobs, [("fits".to_string(), "a".to_string(), 2)]);
    }

    #[test]
    fn gang_reports_each_jobs_missing_tasks_and_retries_the_unready_ones() {
        let gang = closed().gang.expect("gang is configured");
        let mut unready: Vec<(String, i32)> = gang
            .unready_tasks
            .iter()
            .map(|(n, c)| (n.to_string(), *c))
            .collect();
        unready.sort();
        assert_eq!(unready, [("big".to_string(), 3), ("fits".to_string(), 0)]);
        let retried: Vec<&str> = gang.retried.iter().map(|n| &**n).collect();
        assert_eq!(retried, ["big"]);
    }

    #[test]
    fn drf_reports_every_jobs_share_at_close() {
        let mut shares: Vec<(String, f64)> = closed()
            .job_shares
            .iter()
            .map(|(_, n, s)| (n.to_string(), *s))
            .collect();
        shares.sort_by(|l, r| l.0.cmp(&r.0));
        assert_eq!(
            shares,
            [("big".to_string(), 0.0), ("fits".to_string(), 0.5)]
        );
    }

    #[test]
    fn proportion_reports_queues_overused_only_where_asked() {
        let m = closed();
        let queue = |name: &str| m.queues.iter().find(|q| q.name == name).unwrap().clone();
        let a = queue("a");
        assert_eq!(a.allocated.as_ref().map(|r| r.milli_cpu), Some(2000.0));
        assert_eq!(a.request.as_ref().map(|r| r.milli_cpu), Some(2000.0));
        assert_eq!(a.weight, Some(1.0));
        assert!(a.deserved.is_some() && a.share.is_some());
        assert!(a.overused.is_some(), "allocate asked about a");
        let idle = queue("idle");
        assert_eq!(idle.allocated.as_ref().map(|r| r.milli_cpu), Some(0.0));
        assert_eq!(
            (idle.weight, idle.deserved, idle.overused),
            (None, None, None)
        );
    }
}
