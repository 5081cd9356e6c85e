//! `tdm` (Volcano: pkg/scheduler/plugins/tdm/tdm.go): time-division multiplexing of
//! revocable nodes. A node labelled `volcano.sh/revocable-zone: <zone>` lends itself to
//! preemptable work only while its zone's daily window (`tdm.revocable-zone.<zone>: H:MM-H:MM`)
//! is open; once it closes, the preemptable tasks running there become victims, each job
//! giving up at most what its disruption budget allows, at most once per `tdm.evict.period`
//! (default 1m).
//!
//! A task may use revocable nodes when its pod's annotation `volcano.sh/revocable-zone` is `*`
//! (or, without it, its `volcano.sh/preemptable` annotation is true); it then scores 100
//! there. Preemptable or revocable tasks preempt nobody, and their victims sit on ordinary
//! nodes; non-preemptable jobs go first and may starve.
//!
//! The window is read from the session's clock (UTC), never from the wall clock: `H:MM` of the
//! session's day, ending the next day when the end is not after the start.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::config::{ArgumentError, Arguments};
use crate::framework::{FitError, Plugin, SessionState, StatusCode, Vote};
use crate::model::{JobId, NodeId, TaskId, TaskStatus, parse_go_duration};
use crate::snapshot::parse_go_bool;

/// Argument prefix of a zone's window.
const ZONE_PREFIX: &str = "tdm.revocable-zone.";
/// Argument of the eviction period.
const EVICT_PERIOD: &str = "tdm.evict.period";
/// The eviction period when absent or unparsable.
const DEFAULT_EVICT_PERIOD_SECS: f64 = 60.0;
/// Node label and pod annotation naming a revocable zone.
pub const REVOCABLE_ZONE: &str = "volcano.sh/revocable-zone";
/// Pod annotation marking a preemptable pod.
const PREEMPTABLE: &str = "volcano.sh/preemptable";
/// PodGroup annotations of the job's disruption budget.
const JDB_MIN_AVAILABLE: &str = "volcano.sh/jdb-min-available";
const JDB_MAX_UNAVAILABLE: &str = "volcano.sh/jdb-max-unavailable";
/// The session timer of the last victim search.
const LAST_EVICTION_TIMER: &str = "tdm.last-eviction";
const SECONDS_PER_DAY: i64 = 86_400;

/// The plugin: zone → window text, and the eviction period in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Tdm {
    zones: BTreeMap<String, String>,
    evict_period_secs: f64,
}

/// Builds the plugin. Every key containing `tdm.revocable-zone.` names a zone (the text after
/// it); a window must be a string.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    let mut zones = BTreeMap::new();
    for key in args.keys() {
        if let Some(at) = key.find(ZONE_PREFIX) {
            let zone = format!("{}{}", &key[..at], &key[at + ZONE_PREFIX.len()..]);
            let window = args.string(key)?.unwrap_or_default();
            zones.insert(zone, window);
        }
    }
    let evict_period_secs = args
        .string(EVICT_PERIOD)?
        .and_then(|p| parse_go_duration(&p).ok())
        .unwrap_or(DEFAULT_EVICT_PERIOD_SECS);
    Ok(Box::new(Tdm {
        zones,
        evict_period_secs,
    }))
}

/// `H:MM` (hour of one or two digits, minutes of two) as seconds into the day.
fn clock_time(text: &str, window: &str) -> Result<i64, String> {
    let err =
        || format!("parsing time {text:?} as \"15:04\": revocable zone {window} format error");
    let (h, m) = text.split_once(':').ok_or_else(err)?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !(1..=2).contains(&h.len()) || m.len() != 2 || !all_digits(h) || !all_digits(m) {
        return Err(err());
    }
    let (h, m): (i64, i64) = (h.parse().map_err(|_| err())?, m.parse().map_err(|_| err())?);
    if h > 23 || m > 59 {
        return Err(err());
    }
    Ok(h * 3600 + m * 60)
}

/// The window `start-end` around `now` (seconds since the epoch, UTC): from `start` on
/// `now`'s day to `end` that day, or the next day when `end` is not after `start`.
fn window(raw: &str, now: i64) -> Result<(i64, i64), String> {
    let parts: Vec<&str> = raw.trim().split('-').collect();
    let [start, end] = parts[..] else {
        return Err(format!("revocable zone {raw} format error"));
    };
    let (start, end) = (clock_time(start, raw)?, clock_time(end, raw)?);
    let day = now - now.rem_euclid(SECONDS_PER_DAY);
    let end_day = if start >= end {
        day + SECONDS_PER_DAY
    } else {
        day
    };
    Ok((day + start, end_day + end))
}

/// Whether the task may run on revocable nodes (Volcano: pkg/scheduler/api/pod_info.go,
/// GetPodRevocableZone).
fn task_uses_revocable_zones(ssn: &SessionState, task: TaskId) -> bool {
    let annotations = &ssn.snap.tasks.pod[task.idx()].metadata.annotations;
    match annotations.get(REVOCABLE_ZONE) {
        Some(zone) => zone == "*",
        None => annotations
            .get(PREEMPTABLE)
            .and_then(|v| parse_go_bool(v))
            .unwrap_or(false),
    }
}

/// An int-or-percent budget value against `total` tasks (percentages round up); text that is
/// neither counts 0.
fn budget_value(text: &str, total: usize) -> usize {
    if let Ok(n) = text.parse::<i64>() {
        return n.max(0) as usize;
    }
    match text.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) {
        Some(pct) => (pct.max(0) as usize * total).div_ceil(100),
        None => 0,
    }
}

impl Tdm {
    /// `Ok` while the zone's window holds the session's clock; otherwise why not.
    fn zone_open(&self, ssn: &SessionState, zone: &str) -> Result<(), String> {
        let raw = self
            .zones
            .get(zone)
            .ok_or_else(|| format!("revocable zone {zone} not support"))?;
        let now = ssn.options.now.0;
        let (start, end) = window(raw, now)?;
        if now < start || now > end {
            return Err(format!("current time beyond revocable zone {zone}:{raw}"));
        }
        Ok(())
    }

    fn node_zone(ssn: &SessionState, node: NodeId) -> Option<&str> {
        ssn.snap.nodes.labels[node.idx()]
            .get(REVOCABLE_ZONE)
            .map(String::as_str)
            .filter(|z| !z.is_empty())
    }

    /// How many of the job's tasks may be evicted now (Volcano: tdm.go, getMaxPodEvictNum).
    fn max_evictions(ssn: &SessionState, job: JobId) -> usize {
        let total = ssn.snap.jobs.tasks[job.idx()].len();
        let count = |s| ssn.job_status_count(job, s) as usize;
        let running = count(TaskStatus::Running);
        let annotations = &ssn.snap.jobs.podgroup[job.idx()].metadata.annotations;
        if let Some(min) = annotations.get(JDB_MIN_AVAILABLE) {
            let min = budget_value(min, total);
            return if running >= min { running - min } else { 1 };
        }
        if let Some(max) = annotations.get(JDB_MAX_UNAVAILABLE) {
            let max = budget_value(max, total);
            let finished = count(TaskStatus::Succeeded) + count(TaskStatus::Failed);
            let unavailable = total.saturating_sub(finished + running);
            return max.saturating_sub(unavailable);
        }
        1
    }

    /// Per job (in job order), at most its budget of `tasks`, in the order given.
    fn within_budgets(ssn: &SessionState, tasks: &[TaskId]) -> Vec<TaskId> {
        let mut by_job: BTreeMap<JobId, Vec<TaskId>> = BTreeMap::new();
        for &t in tasks {
            if let Some(j) = ssn.job_of(t) {
                by_job.entry(j).or_default().push(t);
            }
        }
        by_job
            .into_iter()
            .flat_map(|(j, ts)| {
                let n = Self::max_evictions(ssn, j).min(ts.len());
                ts.into_iter().take(n)
            })
            .collect()
    }

    fn evictable(ssn: &SessionState, t: TaskId) -> bool {
        ssn.snap.tasks.preemptable[t.idx()] && ssn.tasks.status[t] == TaskStatus::Running
    }
}

impl Plugin for Tdm {
    fn name(&self) -> &str {
        "tdm"
    }

    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        let Some(zone) = Self::node_zone(ssn, node) else {
            return Ok(());
        };
        self.zone_open(ssn, zone)
            .map_err(|e| FitError::new(StatusCode::UnschedulableAndUnresolvable, e))?;
        if !task_uses_revocable_zones(ssn, task) {
            return Err(FitError::new(
                StatusCode::UnschedulableAndUnresolvable,
                "not allow to dispatch to revocable node",
            ));
        }
        Ok(())
    }

    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        let Some(zone) = Self::node_zone(ssn, node) else {
            return Some(Ok(0.0));
        };
        Some(match self.zone_open(ssn, zone) {
            Err(e) => Err(e),
            Ok(()) if task_uses_revocable_zones(ssn, task) => Ok(100.0),
            Ok(()) => Ok(0.0),
        })
    }

    fn preemptable(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        if ssn.snap.tasks.preemptable[preemptor.idx()] || task_uses_revocable_zones(ssn, preemptor)
        {
            return Some(Vec::new());
        }
        let on_ordinary_nodes: Vec<TaskId> = candidates
            .iter()
            .copied()
            .filter(|&t| {
                Self::evictable(ssn, t)
                    && ssn.tasks.node[t].is_some_and(|n| Self::node_zone(ssn, n).is_none())
            })
            .collect();
        Some(Self::within_budgets(ssn, &on_ordinary_nodes))
    }

    /// The preemptable running tasks on the nodes of every closed zone, within their jobs'
    /// budgets; nothing when the last search was less than the eviction period ago.
    fn victim_tasks(&self, ssn: &SessionState, _: &[TaskId]) -> Option<Vec<TaskId>> {
        let timers = &ssn.options.timers;
        if !timers.fire_unless_recent(LAST_EVICTION_TIMER, self.evict_period_secs, ssn.options.now)
        {
            return Some(Vec::new());
        }
        let mut victims = Vec::new();
        for zone in self.zones.keys() {
            if self.zone_open(ssn, zone).is_ok() {
                continue;
            }
            let mut on_zone: Vec<TaskId> = ssn
                .snap
                .nodes
                .ids()
                .filter(|&n| Self::node_zone(ssn, n) == Some(zone.as_str()))
                .flat_map(|n| ssn.nodes.tasks[n].iter().copied())
                .filter(|&t| Self::evictable(ssn, t))
                .collect();
            // Volcano walks its nodes' task maps, in no order; the budgets are spent in
            // this one.
            on_zone.sort_by(|&l, &r| ssn.snap.task_walk_order(l, r));
            victims.extend(Self::within_budgets(ssn, &on_zone));
        }
        Some(victims)
    }

    /// Non-preemptable jobs first.
    fn job_order(&self, ssn: &SessionState, l: JobId, r: JobId) -> Ordering {
        let p = &ssn.snap.jobs.preemptable;
        p[l.idx()].cmp(&p[r.idx()])
    }

    fn job_pipelined(&self, ssn: &SessionState, job: JobId) -> Vote {
        if ssn.job_is_pipelined(job) {
            Vote::Permit
        } else {
            Vote::Reject
        }
    }

    /// A non-preemptable job with pending tasks starves (so it may preempt).
    fn job_starving(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        Some(
            !ssn.snap.jobs.preemptable[job.idx()]
                && ssn.job_status_count(job, TaskStatus::Pending) > 0,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Session;
    use crate::harness::Harness;
    use crate::harness::find::{node_id, task};

    /// 2026-01-01 at `hh:mm` UTC.
    fn at(hh: i64, mm: i64) -> crate::api::Time {
        crate::api::Time(1_767_225_600 + hh * 3600 + mm * 60)
    }

    fn session(args: &str, objects: &str, now: crate::api::Time) -> Session {
        let conf = format!(
            "actions: allocate\ntiers:\n- plugins:\n  - name: tdm\n    arguments: {{{args}}}\n"
        );
        let mut ssn = Harness::new(&conf)
            .manifests(&format!(
                "- {{kind: Queue, metadata: {{name: q}}, status: {{state: Open}}}}\n{objects}"
            ))
            .open()
            .expect("session");
        ssn.state.options.now = now;
        ssn
    }

    fn node(name: &str, zone: &str) -> String {
        format!(
            "- {{kind: Node, metadata: {{name: {name}, labels: {{volcano.sh/revocable-zone: '{zone}'}}}}, status: {{allocatable: {{cpu: '16', memory: 64Gi, pods: '10'}}}}}}\n"
        )
    }

    fn job(name: &str, annotations: &str) -> String {
        format!(
            "- {{kind: PodGroup, metadata: {{name: {name}, namespace: ns, annotations: {{{annotations}}}}}, spec: {{queue: q}}, status: {{phase: Running}}}}\n"
        )
    }

    fn pod(name: &str, job: &str, node: &str, annotations: &str) -> String {
        let (placed, phase) = if node.is_empty() {
            (String::new(), "Pending")
        } else {
            (format!(", nodeName: {node}"), "Running")
        };
        format!(
            "- {{kind: Pod, metadata: {{name: {name}, namespace: ns, annotations: {{scheduling.k8s.io/group-name: {job}{annotations}}}}}, spec: {{containers: [{{resources: {{requests: {{cpu: '1'}}}}}}]{placed}}}, status: {{phase: {phase}}}}}\n"
        )
    }

    #[test]
    fn windows_are_read_in_h_mm_and_wrap_past_midnight() {
        let day = at(0, 0).0;
        assert_eq!(window("0:00-1:00", day + 10), Ok((day, day + 3600)));
        assert_eq!(window(" 1:00-0:00 ", day), Ok((day + 3600, day + 86_400)));
        assert_eq!(
            window("23:59-23:59", day),
            Ok((day + 86_340, day + 86_400 + 86_340))
        );
        for bad in ["00:00_01:00", "0:00", "1:0-0:0", "63:59-23:59"] {
            assert!(window(bad, day).is_err(), "{bad}");
        }
    }

    #[test]
    fn revocable_nodes_admit_only_revocable_tasks_while_their_window_is_open() {
        let objects = node("rz", "rz1")
            + &node("plain", "")
            + &job("pg", "")
            + &pod("any", "pg", "", ", volcano.sh/revocable-zone: '*'")
            + &pod("fixed", "pg", "", "");
        let args = "tdm.revocable-zone.rz1: '8:00-18:00'";
        let open = session(args, &objects, at(12, 0));
        let (rz, plain) = (node_id(&open, "rz"), node_id(&open, "plain"));
        let (any, fixed) = (task(&open, "ns/any"), task(&open, "ns/fixed"));
        assert!(open.predicate(any, rz).is_ok());
        assert_eq!(
            open.predicate(fixed, rz).unwrap_err().to_string(),
            "not allow to dispatch to revocable node"
        );
        assert!(open.predicate(fixed, plain).is_ok());
        assert_eq!(
            (open.node_order(any, rz), open.node_order(fixed, rz)),
            (100.0, 0.0)
        );
        let closed = session(args, &objects, at(19, 0));
        assert_eq!(
            closed.predicate(any, rz).unwrap_err().to_string(),
            "current time beyond revocable zone rz1:8:00-18:00"
        );
    }

    #[test]
    fn a_closed_zone_gives_up_preemptable_tasks_within_the_job_budget_once_per_period() {
        let preemptable = ", volcano.sh/preemptable: 'true'";
        let objects = node("rz", "rz1")
            + &job("pg", "volcano.sh/jdb-min-available: '1'")
            + &pod("p1", "pg", "rz", preemptable)
            + &pod("p2", "pg", "rz", preemptable)
            + &pod("p3", "pg", "rz", preemptable)
            + &pod("p4", "pg", "rz", ", volcano.sh/preemptable: 'false'");
        let args = "tdm.revocable-zone.rz1: '8:00-18:00', tdm.evict.period: 1m";
        let open = session(args, &objects, at(12, 0));
        assert!(open.victim_tasks(&[]).is_empty());
        let closed = session(args, &objects, at(19, 0));
        assert_eq!(closed.victim_tasks(&[]).len(), 3, "4 running, 1 must stay");
        assert!(closed.victim_tasks(&[]).is_empty(), "within the period");
    }

    #[test]
    fn budgets_count_percentages_up_and_unavailable_tasks_against_the_maximum() {
        assert_eq!(budget_value("30%", 5), 2);
        assert_eq!(budget_value("3", 5), 3);
        assert_eq!(budget_value("x", 5), 0);
    }
}
