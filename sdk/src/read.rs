//! The session accessors' meaning, once: each `abi::field` selector read from a `SessionState`.
//! The host answers a library's accessor calls with these, and `SessionView` calls them directly
//! when the plugin is linked in, so both ways read exactly the same values.

use tephra_engine::framework::SessionState;
use tephra_engine::model::{NodeId, ResourceName, TaskId};

use crate::abi::{NO_SUCH_ID, Status, UNKNOWN_FIELD, field};

/// An accessor's answer; the error is `NO_SUCH_ID` or `UNKNOWN_FIELD`.
pub(crate) type Read<T> = Result<T, Status>;

fn row(len: usize, id: u32) -> Read<usize> {
    let i = id as usize;
    if i < len { Ok(i) } else { Err(NO_SUCH_ID) }
}

fn flag(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

/// Rows in `table`.
pub(crate) fn count(ssn: &SessionState, table: u32) -> Read<u32> {
    use field::table::*;
    let s = &ssn.snap;
    let n = match table {
        NODES => s.nodes.len(),
        TASKS => s.tasks.len(),
        JOBS => s.jobs.len(),
        QUEUES => s.queues.len(),
        _ => return Err(UNKNOWN_FIELD),
    };
    Ok(n as u32)
}

/// A string column.
pub(crate) fn text(ssn: &SessionState, f: u32, id: u32) -> Read<&str> {
    use field::text::*;
    let s = &ssn.snap;
    let (nodes, tasks, jobs, queues) = (s.nodes.len(), s.tasks.len(), s.jobs.len(), s.queues.len());
    Ok(match f {
        NODE_NAME => &s.nodes.name[row(nodes, id)?],
        TASK_NAME => &s.tasks.name[row(tasks, id)?],
        TASK_NAMESPACE => &s.tasks.namespace[row(tasks, id)?],
        TASK_UID => &s.tasks.uid[row(tasks, id)?],
        TASK_ROLE => &s.tasks.role[row(tasks, id)?],
        JOB_UID => &s.jobs.uid[row(jobs, id)?],
        JOB_NAME => &s.jobs.name[row(jobs, id)?],
        JOB_NAMESPACE => &s.jobs.namespace[row(jobs, id)?],
        QUEUE_NAME => &s.queues.name[row(queues, id)?],
        _ => return Err(UNKNOWN_FIELD),
    })
}

/// A map entry (label, annotation); `None` when the key is absent.
pub(crate) fn lookup<'a>(
    ssn: &'a SessionState,
    f: u32,
    id: u32,
    key: &str,
) -> Read<Option<&'a str>> {
    use field::lookup::*;
    let s = &ssn.snap;
    let map = match f {
        NODE_LABEL => &s.nodes.labels[row(s.nodes.len(), id)?],
        TASK_LABEL => &s.tasks.pod[row(s.tasks.len(), id)?].metadata.labels,
        TASK_ANNOTATION => &s.tasks.pod[row(s.tasks.len(), id)?].metadata.annotations,
        JOB_ANNOTATION => &s.jobs.podgroup[row(s.jobs.len(), id)?].metadata.annotations,
        _ => return Err(UNKNOWN_FIELD),
    };
    Ok(map.get(key).map(String::as_str))
}

/// A number column; booleans as 0 / 1.
pub(crate) fn number(ssn: &SessionState, f: u32, id: u32) -> Read<f64> {
    use field::number::*;
    let s = &ssn.snap;
    let (nodes, tasks, jobs, queues) = (s.nodes.len(), s.tasks.len(), s.jobs.len(), s.queues.len());
    let job = |id| row(jobs, id).map(|j| tephra_engine::model::JobId(j as u32));
    Ok(match f {
        NODE_UNSCHEDULABLE => flag(s.nodes.unschedulable[row(nodes, id)?]),
        NODE_TASK_COUNT => ssn.nodes.tasks.as_slice()[row(nodes, id)?].len() as f64,
        TASK_STATUS => f64::from(ssn.tasks.status.as_slice()[row(tasks, id)?] as u16),
        TASK_PRIORITY => f64::from(s.tasks.priority[row(tasks, id)?]),
        TASK_BEST_EFFORT => flag(s.tasks.best_effort[row(tasks, id)?]),
        TASK_PREEMPTABLE => flag(s.tasks.preemptable[row(tasks, id)?]),
        JOB_PRIORITY => f64::from(s.jobs.priority[row(jobs, id)?]),
        JOB_MIN_AVAILABLE => f64::from(s.jobs.min_available[row(jobs, id)?]),
        JOB_TASK_COUNT => s.jobs.tasks[row(jobs, id)?].len() as f64,
        JOB_READY_TASK_NUM => f64::from(ssn.ready_task_num(job(id)?)),
        JOB_WAITING_TASK_NUM => f64::from(ssn.waiting_task_num(job(id)?)),
        QUEUE_WEIGHT => f64::from(s.queues.weight[row(queues, id)?]),
        SESSION_NOW => ssn.options.now.0 as f64,
        _ => return Err(UNKNOWN_FIELD),
    })
}

/// One dimension of a resource column, in Volcano's units.
pub(crate) fn resource(ssn: &SessionState, f: u32, id: u32, name: &str) -> Read<f64> {
    use field::resource::*;
    let s = &ssn.snap;
    let (nodes, tasks, jobs) = (s.nodes.len(), s.tasks.len(), s.jobs.len());
    let r = match f {
        NODE_ALLOCATABLE => &s.nodes.allocatable[row(nodes, id)?],
        NODE_CAPACITY => &s.nodes.capacity[row(nodes, id)?],
        NODE_USED => &ssn.nodes.used.as_slice()[row(nodes, id)?],
        NODE_IDLE => &ssn.nodes.idle.as_slice()[row(nodes, id)?],
        NODE_RELEASING => &ssn.nodes.releasing.as_slice()[row(nodes, id)?],
        NODE_PIPELINED => &ssn.nodes.pipelined.as_slice()[row(nodes, id)?],
        TASK_REQUEST => &s.tasks.resreq[row(tasks, id)?],
        JOB_ALLOCATED => &ssn.jobs.allocated.as_slice()[row(jobs, id)?],
        JOB_TOTAL_REQUEST => &ssn.jobs.total_request.as_slice()[row(jobs, id)?],
        _ => return Err(UNKNOWN_FIELD),
    };
    Ok(r.get(ResourceName::of(name)))
}

/// A reference to another row; `None` when absent.
pub(crate) fn reference(ssn: &SessionState, f: u32, id: u32) -> Read<Option<u32>> {
    use field::reference::*;
    let s = &ssn.snap;
    Ok(match f {
        TASK_JOB => s.tasks.job[row(s.tasks.len(), id)?].map(|j| j.0),
        TASK_NODE => ssn.tasks.node.as_slice()[row(s.tasks.len(), id)?].map(|n: NodeId| n.0),
        JOB_QUEUE => Some(s.jobs.queue[row(s.jobs.len(), id)?].0),
        _ => return Err(UNKNOWN_FIELD),
    })
}

/// The `index`-th member of a list column.
pub(crate) fn member(ssn: &SessionState, f: u32, id: u32, index: u32) -> Read<u32> {
    use field::member::*;
    let s = &ssn.snap;
    let list: &[TaskId] = match f {
        NODE_TASK => &ssn.nodes.tasks.as_slice()[row(s.nodes.len(), id)?],
        JOB_TASK => &s.jobs.tasks[row(s.jobs.len(), id)?],
        _ => return Err(UNKNOWN_FIELD),
    };
    Ok(list[row(list.len(), index)?].0)
}

/// A row by name; `None` when there is none.
pub(crate) fn find(ssn: &SessionState, table: u32, name: &str) -> Read<Option<u32>> {
    use field::table::*;
    let s = &ssn.snap;
    Ok(match table {
        NODES => s.nodes.id(name).map(|n| n.0),
        JOBS => s.job_id(name).map(|j| j.0),
        QUEUES => s.queues.id(name).map(|q| q.0),
        _ => return Err(UNKNOWN_FIELD),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::harness::Harness;

    #[test]
    fn fields_read_the_session_and_bad_ids_are_refused() {
        let ssn = Harness::new("actions: allocate\ntiers: []\n")
            .queue("q", 3)
            .node("n1", "4", "8Gi", &[("zone", "a")])
            .pod_group("ns", "pg", "q", 1)
            .pod("ns", "p", "pg", "500m", "1Gi")
            .open()
            .unwrap();
        let st = &ssn.state;
        assert_eq!(text(st, field::text::NODE_NAME, 0), Ok("n1"));
        assert_eq!(
            lookup(st, field::lookup::NODE_LABEL, 0, "zone"),
            Ok(Some("a"))
        );
        assert_eq!(lookup(st, field::lookup::NODE_LABEL, 0, "rack"), Ok(None));
        assert_eq!(
            resource(st, field::resource::NODE_ALLOCATABLE, 0, "cpu"),
            Ok(4000.0)
        );
        assert_eq!(
            resource(st, field::resource::TASK_REQUEST, 0, "memory"),
            Ok(1073741824.0)
        );
        assert_eq!(number(st, field::number::QUEUE_WEIGHT, 0), Ok(3.0));
        assert_eq!(number(st, field::number::TASK_STATUS, 0), Ok(1.0));
        assert_eq!(reference(st, field::reference::TASK_NODE, 0), Ok(None));
        assert_eq!(find(st, field::table::JOBS, "ns/pg"), Ok(Some(0)));
        assert_eq!(text(st, field::text::NODE_NAME, 7), Err(NO_SUCH_ID));
        assert_eq!(text(st, 99, 0), Err(UNKNOWN_FIELD));
        assert_eq!(member(st, field::member::JOB_TASK, 0, 1), Err(NO_SUCH_ID));
    }
}
