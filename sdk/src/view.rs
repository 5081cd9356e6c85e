//! `SessionView`: what an SDK plugin reads of the session. Linked in, it reads the engine's
//! `SessionState` directly; loaded from a library, every read is a call through the host's
//! accessor table. The meaning of each read lives once, in `read`.

use tephra_engine::framework::SessionState;
use tephra_engine::model::{JobId, NodeId, QueueId, TaskId, TaskStatus};

use crate::abi::{self, NO_ID, OK, Status, Str, field};
use crate::read::{self, Read};

#[derive(Clone, Copy)]
enum Source<'a> {
    Local(&'a SessionState),
    Host(&'a abi::Session),
}

/// A read-only view of the session for one plugin call. Ids are the session's dense ids; a read
/// of an id that is not in the session panics (as indexing a column would), which the SDK turns
/// into "plugin disabled for this cycle" when the plugin runs from a library.
///
/// Resources are read one dimension at a time by Kubernetes name (`"cpu"`, `"memory"`,
/// `"nvidia.com/gpu"`, `"pods"`), in Volcano's units: cpu in millicores, memory in bytes, other
/// scalars in milli-units, `pods` in units; an absent dimension reads 0.
#[derive(Clone, Copy)]
pub struct SessionView<'a> {
    source: Source<'a>,
}

impl std::fmt::Debug for SessionView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.source {
            Source::Local(_) => "local",
            Source::Host(_) => "host",
        };
        f.debug_struct("SessionView")
            .field("source", &kind)
            .finish()
    }
}

fn answer<T>(what: &str, id: u32, r: Read<T>) -> T {
    match r {
        Ok(v) => v,
        Err(status) => panic!(
            "session read {what} of id {id} failed: {}",
            describe(status)
        ),
    }
}

fn describe(status: Status) -> &'static str {
    match status {
        abi::NO_SUCH_ID => "no such id in this session",
        abi::UNKNOWN_FIELD => "the host does not know this field",
        abi::PANICKED => "the host panicked",
        _ => "unexpected status",
    }
}

fn id_or_none(id: u32) -> Option<u32> {
    (id != NO_ID).then_some(id)
}

impl<'a> SessionView<'a> {
    /// A view of the engine's session state (a linked-in plugin, or the plugin test harness).
    pub fn local(ssn: &'a SessionState) -> Self {
        SessionView {
            source: Source::Local(ssn),
        }
    }

    /// A view of a session lent by the host across the ABI.
    pub(crate) fn host(ssn: &'a abi::Session) -> Self {
        SessionView {
            source: Source::Host(ssn),
        }
    }

    fn vtable(ssn: &'a abi::Session) -> &'a abi::SessionVTable {
        // SAFETY: the host lends a `Session` whose vtable points to a static table and stays
        // valid for the whole call the view lives in.
        unsafe { &*ssn.vtable }
    }

    fn host_str(status: Status, s: Str) -> Read<Option<&'a str>> {
        // SAFETY: the host promises strings it writes stay valid until the call that lent the
        // session returns, which outlives `'a`.
        if status == OK {
            // SAFETY: see above; on OK the host wrote a valid string.
            Ok(unsafe { s.get() })
        } else {
            Err(status)
        }
    }

    fn host_id(status: Status, id: u32) -> Read<Option<u32>> {
        if status == OK {
            Ok(id_or_none(id))
        } else {
            Err(status)
        }
    }

    fn count(&self, table: u32) -> usize {
        let r = match self.source {
            Source::Local(s) => read::count(s, table),
            Source::Host(h) => {
                let mut out = 0;
                // SAFETY: `h` is the session the host lent for the call this view serves.
                let st = unsafe { (Self::vtable(h).count)(h.ctx, table, &mut out) };
                if st == OK { Ok(out) } else { Err(st) }
            }
        };
        answer("count", table, r) as usize
    }

    fn text(&self, f: u32, id: u32) -> &'a str {
        let r = match self.source {
            Source::Local(s) => read::text(s, f, id),
            Source::Host(h) => {
                let mut out = Str::NONE;
                // SAFETY: `h` is the session the host lent for the call this view serves.
                let st = unsafe { (Self::vtable(h).text)(h.ctx, f, id, &mut out) };
                Self::host_str(st, out).map(Option::unwrap_or_default)
            }
        };
        answer("text", id, r)
    }

    fn lookup(&self, f: u32, id: u32, key: &str) -> Option<&'a str> {
        let r = match self.source {
            Source::Local(s) => read::lookup(s, f, id, key),
            Source::Host(h) => {
                let mut out = Str::NONE;
                // SAFETY: `h` is the session the host lent for the call this view serves.
                let st = unsafe { (Self::vtable(h).lookup)(h.ctx, f, id, Str::new(key), &mut out) };
                Self::host_str(st, out)
            }
        };
        answer("lookup", id, r)
    }

    fn number(&self, f: u32, id: u32) -> f64 {
        let r = match self.source {
            Source::Local(s) => read::number(s, f, id),
            Source::Host(h) => {
                let mut out = 0.0;
                // SAFETY: `h` is the session the host lent for the call this view serves.
                let st = unsafe { (Self::vtable(h).number)(h.ctx, f, id, &mut out) };
                if st == OK { Ok(out) } else { Err(st) }
            }
        };
        answer("number", id, r)
    }

    fn resource(&self, f: u32, id: u32, name: &str) -> f64 {
        let r = match self.source {
            Source::Local(s) => read::resource(s, f, id, name),
            Source::Host(h) => {
                let mut out = 0.0;
                // SAFETY: `h` is the session the host lent for the call this view serves.
                let st =
                    unsafe { (Self::vtable(h).resource)(h.ctx, f, id, Str::new(name), &mut out) };
                if st == OK { Ok(out) } else { Err(st) }
            }
        };
        answer("resource", id, r)
    }

    fn reference(&self, f: u32, id: u32) -> Option<u32> {
        let r = match self.source {
            Source::Local(s) => read::reference(s, f, id),
            Source::Host(h) => {
                let mut out = NO_ID;
                // SAFETY: `h` is the session the host lent for the call this view serves.
                let st = unsafe { (Self::vtable(h).reference)(h.ctx, f, id, &mut out) };
                Self::host_id(st, out)
            }
        };
        answer("reference", id, r)
    }

    fn members(&self, f: u32, len_field: u32, id: u32) -> Vec<TaskId> {
        let len = self.number(len_field, id) as u32;
        (0..len)
            .map(|i| {
                let r = match self.source {
                    Source::Local(s) => read::member(s, f, id, i),
                    Source::Host(h) => {
                        let mut out = NO_ID;
                        // SAFETY: `h` is the session the host lent for the call this view serves.
                        let st = unsafe { (Self::vtable(h).member)(h.ctx, f, id, i, &mut out) };
                        if st == OK { Ok(out) } else { Err(st) }
                    }
                };
                TaskId(answer("member", id, r))
            })
            .collect()
    }

    fn find(&self, table: u32, name: &str) -> Option<u32> {
        let r = match self.source {
            Source::Local(s) => read::find(s, table, name),
            Source::Host(h) => {
                let mut out = NO_ID;
                // SAFETY: `h` is the session the host lent for the call this view serves.
                let st = unsafe { (Self::vtable(h).find)(h.ctx, table, Str::new(name), &mut out) };
                Self::host_id(st, out)
            }
        };
        answer("find", table, r)
    }

    // ---- session ----------------------------------------------------------------------------

    /// The session clock, in Unix seconds.
    pub fn now(&self) -> i64 {
        self.number(field::number::SESSION_NOW, 0) as i64
    }

    // ---- nodes ------------------------------------------------------------------------------

    /// Number of nodes; ids are `0..node_count()` in table order.
    pub fn node_count(&self) -> usize {
        self.count(field::table::NODES)
    }

    /// Every node id, in table order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + use<> {
        (0..self.node_count() as u32).map(NodeId)
    }

    /// The node called `name`.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.find(field::table::NODES, name).map(NodeId)
    }

    /// The node's name.
    pub fn node_name(&self, n: NodeId) -> &'a str {
        self.text(field::text::NODE_NAME, n.0)
    }

    /// The value of label `key` on the node.
    pub fn node_label(&self, n: NodeId, key: &str) -> Option<&'a str> {
        self.lookup(field::lookup::NODE_LABEL, n.0, key)
    }

    /// `spec.unschedulable`.
    pub fn node_unschedulable(&self, n: NodeId) -> bool {
        self.number(field::number::NODE_UNSCHEDULABLE, n.0) != 0.0
    }

    /// Allocatable `resource` of the node.
    pub fn node_allocatable(&self, n: NodeId, resource: &str) -> f64 {
        self.resource(field::resource::NODE_ALLOCATABLE, n.0, resource)
    }

    /// Capacity `resource` of the node.
    pub fn node_capacity(&self, n: NodeId, resource: &str) -> f64 {
        self.resource(field::resource::NODE_CAPACITY, n.0, resource)
    }

    /// Used `resource` on the node now (running, bound and this session's allocations).
    pub fn node_used(&self, n: NodeId, resource: &str) -> f64 {
        self.resource(field::resource::NODE_USED, n.0, resource)
    }

    /// Idle `resource` on the node now.
    pub fn node_idle(&self, n: NodeId, resource: &str) -> f64 {
        self.resource(field::resource::NODE_IDLE, n.0, resource)
    }

    /// `resource` held by releasing tasks on the node.
    pub fn node_releasing(&self, n: NodeId, resource: &str) -> f64 {
        self.resource(field::resource::NODE_RELEASING, n.0, resource)
    }

    /// `resource` promised to pipelined tasks on the node.
    pub fn node_pipelined(&self, n: NodeId, resource: &str) -> f64 {
        self.resource(field::resource::NODE_PIPELINED, n.0, resource)
    }

    /// Tasks accounted on the node, in the order they were added.
    pub fn node_tasks(&self, n: NodeId) -> Vec<TaskId> {
        self.members(
            field::member::NODE_TASK,
            field::number::NODE_TASK_COUNT,
            n.0,
        )
    }

    // ---- tasks ------------------------------------------------------------------------------

    /// Number of tasks (pods).
    pub fn task_count(&self) -> usize {
        self.count(field::table::TASKS)
    }

    /// The pod's name.
    pub fn task_name(&self, t: TaskId) -> &'a str {
        self.text(field::text::TASK_NAME, t.0)
    }

    /// The pod's namespace.
    pub fn task_namespace(&self, t: TaskId) -> &'a str {
        self.text(field::text::TASK_NAMESPACE, t.0)
    }

    /// The pod's UID.
    pub fn task_uid(&self, t: TaskId) -> &'a str {
        self.text(field::text::TASK_UID, t.0)
    }

    /// The task's role (`volcano.sh/task-spec`), empty when unset.
    pub fn task_role(&self, t: TaskId) -> &'a str {
        self.text(field::text::TASK_ROLE, t.0)
    }

    /// The value of label `key` on the pod.
    pub fn task_label(&self, t: TaskId, key: &str) -> Option<&'a str> {
        self.lookup(field::lookup::TASK_LABEL, t.0, key)
    }

    /// The value of annotation `key` on the pod.
    pub fn task_annotation(&self, t: TaskId, key: &str) -> Option<&'a str> {
        self.lookup(field::lookup::TASK_ANNOTATION, t.0, key)
    }

    /// The task's status now.
    pub fn task_status(&self, t: TaskId) -> TaskStatus {
        let bits = self.number(field::number::TASK_STATUS, t.0) as u16;
        TaskStatus::ALL
            .into_iter()
            .find(|s| *s as u16 == bits)
            .unwrap_or(TaskStatus::Unknown)
    }

    /// The pod's priority.
    pub fn task_priority(&self, t: TaskId) -> i32 {
        self.number(field::number::TASK_PRIORITY, t.0) as i32
    }

    /// True when the pod requests no cpu or memory.
    pub fn task_best_effort(&self, t: TaskId) -> bool {
        self.number(field::number::TASK_BEST_EFFORT, t.0) != 0.0
    }

    /// True when the pod may be preempted.
    pub fn task_preemptable(&self, t: TaskId) -> bool {
        self.number(field::number::TASK_PREEMPTABLE, t.0) != 0.0
    }

    /// The task's request of `resource` (init containers and overhead included).
    pub fn task_request(&self, t: TaskId, resource: &str) -> f64 {
        self.resource(field::resource::TASK_REQUEST, t.0, resource)
    }

    /// The task's job, when its PodGroup is in the session.
    pub fn task_job(&self, t: TaskId) -> Option<JobId> {
        self.reference(field::reference::TASK_JOB, t.0).map(JobId)
    }

    /// The node the task is on now (bound, running or allocated this session).
    pub fn task_node(&self, t: TaskId) -> Option<NodeId> {
        self.reference(field::reference::TASK_NODE, t.0).map(NodeId)
    }

    // ---- jobs -------------------------------------------------------------------------------

    /// Number of jobs (PodGroups in the session).
    pub fn job_count(&self) -> usize {
        self.count(field::table::JOBS)
    }

    /// The job with UID `namespace/name`.
    pub fn job_id(&self, uid: &str) -> Option<JobId> {
        self.find(field::table::JOBS, uid).map(JobId)
    }

    /// The job's UID, `namespace/name` of its PodGroup.
    pub fn job_uid(&self, j: JobId) -> &'a str {
        self.text(field::text::JOB_UID, j.0)
    }

    /// The PodGroup's name.
    pub fn job_name(&self, j: JobId) -> &'a str {
        self.text(field::text::JOB_NAME, j.0)
    }

    /// The PodGroup's namespace.
    pub fn job_namespace(&self, j: JobId) -> &'a str {
        self.text(field::text::JOB_NAMESPACE, j.0)
    }

    /// The value of annotation `key` on the job's PodGroup.
    pub fn job_annotation(&self, j: JobId, key: &str) -> Option<&'a str> {
        self.lookup(field::lookup::JOB_ANNOTATION, j.0, key)
    }

    /// The job's queue.
    pub fn job_queue(&self, j: JobId) -> QueueId {
        let q = self.reference(field::reference::JOB_QUEUE, j.0);
        QueueId(q.unwrap_or_else(|| panic!("job {} has no queue", j.0)))
    }

    /// The job's priority (from its PodGroup's PriorityClass).
    pub fn job_priority(&self, j: JobId) -> i32 {
        self.number(field::number::JOB_PRIORITY, j.0) as i32
    }

    /// `spec.minMember`.
    pub fn job_min_available(&self, j: JobId) -> i32 {
        self.number(field::number::JOB_MIN_AVAILABLE, j.0) as i32
    }

    /// The job's tasks, in table order.
    pub fn job_tasks(&self, j: JobId) -> Vec<TaskId> {
        self.members(field::member::JOB_TASK, field::number::JOB_TASK_COUNT, j.0)
    }

    /// Tasks that are Bound, Binding, Running, Allocated or Succeeded.
    pub fn job_ready_task_num(&self, j: JobId) -> i32 {
        self.number(field::number::JOB_READY_TASK_NUM, j.0) as i32
    }

    /// Pipelined tasks.
    pub fn job_waiting_task_num(&self, j: JobId) -> i32 {
        self.number(field::number::JOB_WAITING_TASK_NUM, j.0) as i32
    }

    /// `resource` allocated to the job's tasks now.
    pub fn job_allocated(&self, j: JobId, resource: &str) -> f64 {
        self.resource(field::resource::JOB_ALLOCATED, j.0, resource)
    }

    /// `resource` requested by all the job's tasks.
    pub fn job_total_request(&self, j: JobId, resource: &str) -> f64 {
        self.resource(field::resource::JOB_TOTAL_REQUEST, j.0, resource)
    }

    // ---- queues -----------------------------------------------------------------------------

    /// Number of queues.
    pub fn queue_count(&self) -> usize {
        self.count(field::table::QUEUES)
    }

    /// The queue called `name`.
    pub fn queue_id(&self, name: &str) -> Option<QueueId> {
        self.find(field::table::QUEUES, name).map(QueueId)
    }

    /// The queue's name.
    pub fn queue_name(&self, q: QueueId) -> &'a str {
        self.text(field::text::QUEUE_NAME, q.0)
    }

    /// The queue's weight.
    pub fn queue_weight(&self, q: QueueId) -> i32 {
        self.number(field::number::QUEUE_WEIGHT, q.0) as i32
    }
}
