//! How each argument and answer of an extension point crosses the ABI. The calls on both sides
//! are generated from the table of points (`tephra_engine::plugin_points!`); what they need to
//! know about a type is here, once per type: `Wire` for an argument (its C form, what the host
//! keeps alive while the call runs, what the library rebuilds), `Answer` for an answer (how the
//! library writes it to the `ReplyOut` and how the host reads it back).

use std::cmp::Ordering;

use tephra_engine::framework::{
    EvictionContext, EvictionKind, FitError, JobInvalid, SearchPurpose, SessionState,
    Status as FitStatus, StatusCode, Vote,
};
use tephra_engine::model::{HyperNodeId, JobId, NodeId, QueueId, SubJobId, TaskId};

use crate::abi::{
    self, FAILED, NOT_REGISTERED, OK, ReplyOut, Status, Str, eviction_kind, fit_code, purpose,
};

/// An argument of an extension point as it crosses the ABI.
pub trait Wire {
    /// Its C form.
    type C: Copy;
    /// What the host keeps alive while the call runs; the C form may borrow from it.
    type Sent;
    /// What the library rebuilds from the C form; the point's argument is lent from it.
    type Held: Lend;
    /// Host side: what to keep for the call.
    fn send(self) -> Self::Sent;
    /// Host side: the C form of what was kept.
    fn c(sent: &Self::Sent) -> Self::C;
    /// Library side: the argument rebuilt from its C form.
    ///
    /// # Safety
    /// `c` came from `Wire::c` of the same type, and what it points at is alive for the call.
    unsafe fn receive(c: Self::C) -> Self::Held;
}

/// Lends an extension point's argument out of what the library rebuilt.
pub trait Lend {
    /// The argument, borrowing from `self` where it is a reference.
    type Arg<'a>
    where
        Self: 'a;
    /// The argument.
    fn lend(&self) -> Self::Arg<'_>;
}

/// The `len` values at `ptr`, copied.
///
/// # Safety
/// `ptr` points at `len` live values (when `len` is not 0).
pub(crate) unsafe fn copied<T: Copy>(ptr: *const T, len: usize) -> Vec<T> {
    if len == 0 {
        return Vec::new();
    }
    // SAFETY: the caller's contract: `len` live values at `ptr`.
    unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec()
}

macro_rules! id_wire {
    ($($id:ident),*) => {$(
        impl Wire for $id {
            type C = u32;
            type Sent = u32;
            type Held = $id;
            fn send(self) -> u32 {
                self.0
            }
            fn c(sent: &u32) -> u32 {
                *sent
            }
            unsafe fn receive(c: u32) -> $id {
                $id(c)
            }
        }

        impl Lend for $id {
            type Arg<'a> = $id;
            fn lend(&self) -> $id {
                *self
            }
        }
    )*};
}

id_wire!(TaskId, JobId, NodeId, QueueId, SubJobId, HyperNodeId);

macro_rules! id_list_wire {
    ($($id:ident),*) => {$(
        impl Wire for &[$id] {
            type C = abi::Ids;
            type Sent = Vec<u32>;
            type Held = Vec<$id>;
            fn send(self) -> Vec<u32> {
                self.iter().map(|id| id.0).collect()
            }
            fn c(sent: &Vec<u32>) -> abi::Ids {
                abi::Ids {
                    ptr: sent.as_ptr(),
                    len: sent.len(),
                }
            }
            unsafe fn receive(c: abi::Ids) -> Vec<$id> {
                // SAFETY: the caller's contract: `c` describes the host's live ids.
                unsafe { copied(c.ptr, c.len) }.into_iter().map($id).collect()
            }
        }

        impl Lend for Vec<$id> {
            type Arg<'a> = &'a [$id];
            fn lend(&self) -> &[$id] {
                self
            }
        }
    )*};
}

id_list_wire!(TaskId, NodeId, HyperNodeId);

impl Wire for &[(NodeId, f64)] {
    type C = abi::Scored;
    type Sent = (Vec<u32>, Vec<f64>);
    type Held = Vec<(NodeId, f64)>;
    fn send(self) -> Self::Sent {
        self.iter().map(|(n, s)| (n.0, *s)).unzip()
    }
    fn c(sent: &Self::Sent) -> abi::Scored {
        abi::Scored {
            nodes: sent.0.as_ptr(),
            scores: sent.1.as_ptr(),
            len: sent.0.len(),
        }
    }
    unsafe fn receive(c: abi::Scored) -> Self::Held {
        // SAFETY: the caller's contract: `len` live node ids and as many scores.
        let (nodes, scores) = unsafe { (copied(c.nodes, c.len), copied(c.scores, c.len)) };
        nodes.into_iter().map(NodeId).zip(scores).collect()
    }
}

impl Lend for Vec<(NodeId, f64)> {
    type Arg<'a> = &'a [(NodeId, f64)];
    fn lend(&self) -> &[(NodeId, f64)] {
        self
    }
}

impl Wire for &EvictionContext {
    type C = abi::Eviction;
    type Sent = abi::Eviction;
    type Held = EvictionContext;
    fn send(self) -> abi::Eviction {
        abi::Eviction {
            kind: match self.kind {
                EvictionKind::GangPreempt => eviction_kind::GANG_PREEMPT,
                EvictionKind::GangReclaim => eviction_kind::GANG_RECLAIM,
            },
            job: self.job.0,
        }
    }
    fn c(sent: &abi::Eviction) -> abi::Eviction {
        *sent
    }
    unsafe fn receive(c: abi::Eviction) -> EvictionContext {
        EvictionContext {
            kind: match c.kind {
                eviction_kind::GANG_RECLAIM => EvictionKind::GangReclaim,
                _ => EvictionKind::GangPreempt,
            },
            job: JobId(c.job),
        }
    }
}

impl Lend for EvictionContext {
    type Arg<'a> = &'a EvictionContext;
    fn lend(&self) -> &EvictionContext {
        self
    }
}

impl Wire for SearchPurpose {
    type C = u32;
    type Sent = u32;
    type Held = SearchPurpose;
    fn send(self) -> u32 {
        match self {
            SearchPurpose::Allocate => purpose::ALLOCATE,
            SearchPurpose::Evict => purpose::EVICT,
        }
    }
    fn c(sent: &u32) -> u32 {
        *sent
    }
    unsafe fn receive(c: u32) -> SearchPurpose {
        match c {
            purpose::EVICT => SearchPurpose::Evict,
            _ => SearchPurpose::Allocate,
        }
    }
}

impl Lend for SearchPurpose {
    type Arg<'a> = SearchPurpose;
    fn lend(&self) -> SearchPurpose {
        *self
    }
}

/// What came back from one call: its status and everything the library wrote to the
/// `ReplyOut`, in order.
#[derive(Debug, Default)]
pub struct Reply {
    pub status: Status,
    pub texts: Vec<(u32, String)>,
    pub numbers: Vec<f64>,
    pub ids: Vec<Vec<u32>>,
}

impl Reply {
    /// The text written with `code`, empty when none.
    pub fn text(&self, code: u32) -> &str {
        self.texts
            .iter()
            .find(|(c, _)| *c == code)
            .map_or("", |(_, t)| t.as_str())
    }

    fn answered(&self) -> Option<&Reply> {
        (self.status == OK).then_some(self)
    }

    fn first_number(&self) -> Option<f64> {
        self.answered()?.numbers.first().copied()
    }
}

/// Library side: writes `text` with `code` to `out`.
pub fn put_text(out: &ReplyOut, code: u32, text: &str) {
    // SAFETY: `out` is the `ReplyOut` the host lent for the call running now, and `text` lives
    // through the call.
    unsafe { (out.text)(out.ctx, code, Str::new(text)) };
}

fn put_numbers(out: &ReplyOut, values: &[f64]) {
    // SAFETY: the lent `ReplyOut`; `values` lives through the call.
    unsafe { (out.numbers)(out.ctx, values.as_ptr(), values.len()) };
}

fn put_ids(out: &ReplyOut, ids: &[u32]) {
    // SAFETY: the lent `ReplyOut`; `ids` lives through the call.
    unsafe { (out.ids)(out.ctx, ids.as_ptr(), ids.len()) };
}

/// An extension point's answer as it crosses the ABI.
pub trait Answer: Sized {
    /// Library side: writes the answer to `out` and gives the call's status.
    fn reply(self, out: &ReplyOut) -> Status;
    /// Host side: the answer from what came back; `None` when the plugin did not answer (it is
    /// disabled, or it panicked), which reads as the point's default.
    fn from_reply(reply: Option<Reply>) -> Self;
    /// Host side: why the reply cannot be used in `ssn` (an id that is not in the session), so
    /// a library's bad answer disables its plugin instead of failing an index in the engine.
    fn refusal(_reply: &Reply, _ssn: &SessionState) -> Option<String> {
        None
    }
}

/// The first id of `ids` that is not below `len`, named with `table`.
fn id_outside(ids: &[Vec<u32>], len: usize, table: &str) -> Option<String> {
    let id = ids.iter().flatten().find(|&&id| id as usize >= len)?;
    Some(format!(
        "answered {table} id {id}, but the session has {len} {table}s"
    ))
}

impl Answer for () {
    fn reply(self, _: &ReplyOut) -> Status {
        OK
    }
    fn from_reply(_: Option<Reply>) {}
}

impl Answer for Ordering {
    fn reply(self, out: &ReplyOut) -> Status {
        put_numbers(out, &[f64::from(self as i8)]);
        OK
    }
    fn from_reply(reply: Option<Reply>) -> Ordering {
        reply
            .and_then(|r| r.first_number())
            .map_or(Ordering::Equal, |v| v.total_cmp(&0.0))
    }
}

impl Answer for Vote {
    fn reply(self, out: &ReplyOut) -> Status {
        let v = match self {
            Vote::Reject => -1.0,
            Vote::Abstain => 0.0,
            Vote::Permit => 1.0,
        };
        put_numbers(out, &[v]);
        OK
    }
    fn from_reply(reply: Option<Reply>) -> Vote {
        match reply.and_then(|r| r.first_number()) {
            Some(v) if v > 0.0 => Vote::Permit,
            Some(v) if v < 0.0 => Vote::Reject,
            _ => Vote::Abstain,
        }
    }
}

impl Answer for Option<bool> {
    fn reply(self, out: &ReplyOut) -> Status {
        match self {
            Some(b) => {
                put_numbers(out, &[f64::from(u8::from(b))]);
                OK
            }
            None => NOT_REGISTERED,
        }
    }
    fn from_reply(reply: Option<Reply>) -> Option<bool> {
        reply?.first_number().map(|v| v != 0.0)
    }
}

fn fit_code_of(c: StatusCode) -> u32 {
    match c {
        StatusCode::Error => fit_code::ERROR,
        StatusCode::Unschedulable => fit_code::UNSCHEDULABLE,
        StatusCode::UnschedulableAndUnresolvable => fit_code::UNSCHEDULABLE_AND_UNRESOLVABLE,
        StatusCode::Wait => fit_code::WAIT,
        StatusCode::Skip => fit_code::SKIP,
    }
}

fn status_code(code: u32) -> StatusCode {
    match code {
        fit_code::UNSCHEDULABLE => StatusCode::Unschedulable,
        fit_code::UNSCHEDULABLE_AND_UNRESOLVABLE => StatusCode::UnschedulableAndUnresolvable,
        fit_code::WAIT => StatusCode::Wait,
        fit_code::SKIP => StatusCode::Skip,
        _ => StatusCode::Error,
    }
}

/// A fit error: one text per status, with its code.
impl Answer for Result<(), FitError> {
    fn reply(self, out: &ReplyOut) -> Status {
        match self {
            Ok(()) => OK,
            Err(e) => {
                for s in e.statuses.iter() {
                    put_text(out, fit_code_of(s.code), &s.reason);
                }
                FAILED
            }
        }
    }
    fn from_reply(reply: Option<Reply>) -> Result<(), FitError> {
        match reply {
            Some(r) if r.status == FAILED => Err(FitError {
                statuses: r
                    .texts
                    .into_iter()
                    .map(|(code, reason)| FitStatus {
                        code: status_code(code),
                        reason: reason.into(),
                    })
                    .collect(),
            }),
            _ => Ok(()),
        }
    }
}

/// An error: its text with code 0.
impl Answer for Result<(), String> {
    fn reply(self, out: &ReplyOut) -> Status {
        match self {
            Ok(()) => OK,
            Err(e) => {
                put_text(out, 0, &e);
                FAILED
            }
        }
    }
    fn from_reply(reply: Option<Reply>) -> Result<(), String> {
        match reply {
            Some(r) if r.status == FAILED => Err(r.text(0).to_string()),
            _ => Ok(()),
        }
    }
}

impl Answer for Option<Result<f64, String>> {
    fn reply(self, out: &ReplyOut) -> Status {
        match self {
            Some(Ok(score)) => {
                put_numbers(out, &[score]);
                OK
            }
            Some(Err(e)) => {
                put_text(out, 0, &e);
                FAILED
            }
            None => NOT_REGISTERED,
        }
    }
    fn from_reply(reply: Option<Reply>) -> Option<Result<f64, String>> {
        let r = reply?;
        match r.status {
            OK => Some(Ok(r.numbers.first().copied().unwrap_or(0.0))),
            FAILED => Some(Err(r.text(0).to_string())),
            _ => None,
        }
    }
}

impl Answer for Option<Result<Vec<f64>, String>> {
    fn reply(self, out: &ReplyOut) -> Status {
        match self {
            Some(Ok(scores)) => {
                put_numbers(out, &scores);
                OK
            }
            Some(Err(e)) => {
                put_text(out, 0, &e);
                FAILED
            }
            None => NOT_REGISTERED,
        }
    }
    fn from_reply(reply: Option<Reply>) -> Option<Result<Vec<f64>, String>> {
        let r = reply?;
        match r.status {
            OK => Some(Ok(r.numbers)),
            FAILED => Some(Err(r.text(0).to_string())),
            _ => None,
        }
    }
}

impl Answer for Option<Vec<f64>> {
    fn reply(self, out: &ReplyOut) -> Status {
        match self {
            Some(scores) => {
                put_numbers(out, &scores);
                OK
            }
            None => NOT_REGISTERED,
        }
    }
    fn from_reply(reply: Option<Reply>) -> Option<Vec<f64>> {
        reply.filter(|r| r.status == OK).map(|r| r.numbers)
    }
}

impl Answer for Option<NodeId> {
    fn reply(self, out: &ReplyOut) -> Status {
        match self {
            Some(n) => {
                put_ids(out, &[n.0]);
                OK
            }
            None => NOT_REGISTERED,
        }
    }
    fn from_reply(reply: Option<Reply>) -> Option<NodeId> {
        let r = reply.filter(|r| r.status == OK)?;
        r.ids.first()?.first().map(|&n| NodeId(n))
    }
    fn refusal(reply: &Reply, ssn: &SessionState) -> Option<String> {
        id_outside(&reply.ids, ssn.snap.nodes.len(), "node")
    }
}

/// An invalid job: its reason (code 0) and message (code 1).
impl Answer for Option<JobInvalid> {
    fn reply(self, out: &ReplyOut) -> Status {
        match self {
            Some(invalid) => {
                put_text(out, 0, &invalid.reason);
                put_text(out, 1, &invalid.message);
                FAILED
            }
            None => OK,
        }
    }
    fn from_reply(reply: Option<Reply>) -> Option<JobInvalid> {
        let r = reply.filter(|r| r.status == FAILED)?;
        Some(JobInvalid {
            reason: r.text(0).to_string(),
            message: r.text(1).to_string(),
        })
    }
}

impl Answer for Option<Vec<TaskId>> {
    fn reply(self, out: &ReplyOut) -> Status {
        match self {
            Some(tasks) => {
                put_ids(out, &tasks.iter().map(|t| t.0).collect::<Vec<_>>());
                OK
            }
            None => NOT_REGISTERED,
        }
    }
    fn from_reply(reply: Option<Reply>) -> Option<Vec<TaskId>> {
        let r = reply.filter(|r| r.status == OK)?;
        Some(r.ids.into_iter().flatten().map(TaskId).collect())
    }
    fn refusal(reply: &Reply, ssn: &SessionState) -> Option<String> {
        id_outside(&reply.ids, ssn.snap.tasks.len(), "task")
    }
}

/// Hyper-node groups: one id list per group.
impl Answer for Option<Vec<Vec<HyperNodeId>>> {
    fn reply(self, out: &ReplyOut) -> Status {
        match self {
            Some(groups) => {
                for g in groups {
                    put_ids(out, &g.iter().map(|h| h.0).collect::<Vec<_>>());
                }
                OK
            }
            None => NOT_REGISTERED,
        }
    }
    fn from_reply(reply: Option<Reply>) -> Option<Vec<Vec<HyperNodeId>>> {
        let r = reply.filter(|r| r.status == OK)?;
        Some(
            r.ids
                .into_iter()
                .map(|g| g.into_iter().map(HyperNodeId).collect())
                .collect(),
        )
    }
    fn refusal(reply: &Reply, ssn: &SessionState) -> Option<String> {
        id_outside(&reply.ids, ssn.snap.hyper_nodes.len(), "hyper-node")
    }
}
