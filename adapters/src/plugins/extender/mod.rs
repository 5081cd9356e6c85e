//! `extender` (Volcano: pkg/scheduler/plugins/extender/extender.go): a plugin served out of process over HTTP, with Volcano's arguments,
//! request and response shapes. Each configured verb registers one extension point; an
//! unconfigured verb leaves the point unregistered. On an HTTP or decoding failure the
//! `extender.ignorable` flag picks the answer that keeps scheduling going (pass, no score,
//! permit, not overused, ready) or the one that stops it.

pub(crate) mod answers;
mod client;
mod config;
pub(crate) mod wire;

use tephra_engine::config::{ArgumentError, Arguments};
use tephra_engine::framework::{FitError, Plugin, SessionState, StatusCode, Vote};
use tephra_engine::model::{JobId, NodeId, QueueId, TaskId};

use answers::{fit_of, scores_of, victims_of, vote};
use client::Client;
pub use config::ExtenderConfig;

/// The name the tiers use.
pub const NAME: &str = "extender";

/// The plugin for one session.
#[derive(Debug)]
pub struct Extender {
    config: ExtenderConfig,
    client: Client,
    /// False when `onSessionOpen` failed and the failure may not be ignored: Volcano then
    /// registers no function for the session.
    active: bool,
}

/// Builds the plugin from its `extender.*` arguments.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    let config = ExtenderConfig::parse(args)?;
    Ok(Box::new(Extender {
        client: Client::new(&config.url_prefix, config.http_timeout, &config.ca),
        config,
        active: true,
    }))
}

fn warn(point: &str, error: &str) {
    eprintln!("tephra: extender: {point} failed: {error}");
}

impl Extender {
    /// `verb` when the extender serves it this session.
    fn serves<'a>(&self, verb: &'a str) -> Option<&'a str> {
        (self.active && !verb.is_empty()).then_some(verb)
    }

    fn interested(&self, ssn: &SessionState, t: TaskId) -> bool {
        self.config.interested(&ssn.snap.tasks.pod[t.idx()])
    }

    /// Preemptable / Reclaimable: an uninterested evictor or an Abstain answer is no answer;
    /// a failure is an empty answer (Volcano's nil victims).
    fn victims(
        &self,
        verb: &str,
        ssn: &SessionState,
        evictor: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        let verb = self.serves(verb)?;
        if !self.interested(ssn, evictor) {
            return None;
        }
        let req = wire::EvictRequest {
            evictor: wire::task(ssn, evictor),
            evictees: candidates.iter().map(|&t| wire::task(ssn, t)).collect(),
        };
        match self.client.call::<wire::VictimsResponse>(verb, &req) {
            Err(e) => {
                warn(verb, &e);
                Some(Vec::new())
            }
            Ok(r) => victims_of(r, ssn, candidates),
        }
    }

    /// The allocate / deallocate handlers: `Err` (logged) when the extender refuses the event.
    fn event(&self, verb: &str, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        let Some(verb) = self.serves(verb) else {
            return Ok(());
        };
        if !self.interested(ssn, task) {
            return Ok(());
        }
        let req = wire::TaskRequest {
            task: wire::task(ssn, task),
        };
        match self.client.call::<wire::EventResponse>(verb, &req) {
            Err(e) => {
                warn(verb, &e);
                if self.config.ignorable {
                    Ok(())
                } else {
                    Err(e)
                }
            }
            Ok(r) if r.error_message.is_empty() => Ok(()),
            Ok(r) => {
                warn(verb, &r.error_message);
                Err(r.error_message)
            }
        }
    }
}

impl Plugin for Extender {
    fn name(&self) -> &str {
        NAME
    }

    fn on_session_open(&mut self, ssn: &SessionState) {
        let verb = &self.config.on_session_open_verb;
        if verb.is_empty() {
            return;
        }
        if let Err(e) = self.client.notify(verb, &wire::session_open(ssn)) {
            warn(verb, &e);
            self.active = self.config.ignorable;
        }
    }

    fn on_session_close(&mut self, _: &mut SessionState) {
        let verb = &self.config.on_session_close_verb;
        if !verb.is_empty()
            && let Err(e) = self.client.notify(verb, &wire::Empty {})
        {
            warn(verb, &e);
        }
    }

    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        let Some(verb) = self.serves(&self.config.predicate_verb) else {
            return Ok(());
        };
        if !self.interested(ssn, task) {
            return Ok(());
        }
        let req = wire::PredicateRequest {
            task: wire::task(ssn, task),
            node: wire::node(ssn, node),
        };
        match self.client.call::<wire::PredicateResponse>(verb, &req) {
            Err(e) => {
                warn(verb, &e);
                if self.config.ignorable {
                    Ok(())
                } else {
                    Err(FitError::new(StatusCode::Error, e))
                }
            }
            Ok(r) => fit_of(r),
        }
    }

    fn batch_node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        nodes: &[NodeId],
    ) -> Option<Result<Vec<f64>, String>> {
        let verb = self.serves(&self.config.prioritize_verb)?;
        let zeros = vec![0.0; nodes.len()];
        if !self.interested(ssn, task) {
            return Some(Ok(zeros));
        }
        let req = wire::PrioritizeRequest {
            task: wire::task(ssn, task),
            nodes: nodes.iter().map(|&n| wire::node(ssn, n)).collect(),
        };
        Some(
            match self.client.call::<wire::PrioritizeResponse>(verb, &req) {
                Err(e) => {
                    warn(verb, &e);
                    if self.config.ignorable {
                        Ok(zeros)
                    } else {
                        Err(e)
                    }
                }
                Ok(r) => scores_of(r, ssn, nodes),
            },
        )
    }

    fn preemptable(
        &self,
        ssn: &SessionState,
        preemptor: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        self.victims(&self.config.preemptable_verb, ssn, preemptor, candidates)
    }

    fn reclaimable(
        &self,
        ssn: &SessionState,
        reclaimer: TaskId,
        candidates: &[TaskId],
    ) -> Option<Vec<TaskId>> {
        self.victims(&self.config.reclaimable_verb, ssn, reclaimer, candidates)
    }

    fn job_enqueueable(&self, ssn: &SessionState, job: JobId) -> Vote {
        let Some(verb) = self.serves(&self.config.job_enqueueable_verb) else {
            return Vote::Abstain;
        };
        let req = wire::JobRequest {
            job: wire::job(ssn, job),
        };
        match self.client.call::<wire::VoteResponse>(verb, &req) {
            Err(e) => {
                warn(verb, &e);
                if self.config.ignorable {
                    Vote::Permit
                } else {
                    Vote::Reject
                }
            }
            Ok(r) => vote(r.status),
        }
    }

    fn job_enqueued(&mut self, ssn: &SessionState, job: JobId) {
        let Some(verb) = self.serves(&self.config.job_enqueued_verb) else {
            return;
        };
        let req = wire::JobRequest {
            job: wire::job(ssn, job),
        };
        if let Err(e) = self.client.notify(verb, &req) {
            warn(verb, &e);
        }
    }

    fn overused(&self, ssn: &SessionState, queue: QueueId) -> Option<bool> {
        let verb = self.serves(&self.config.queue_overused_verb)?;
        let req = wire::QueueRequest {
            queue: wire::queue(ssn, queue),
        };
        Some(
            match self.client.call::<wire::OverusedResponse>(verb, &req) {
                Err(e) => {
                    warn(verb, &e);
                    !self.config.ignorable
                }
                Ok(r) => r.overused,
            },
        )
    }

    fn job_ready(&self, ssn: &SessionState, job: JobId) -> Option<bool> {
        let verb = self.serves(&self.config.job_ready_verb)?;
        let req = wire::JobRequest {
            job: wire::job(ssn, job),
        };
        Some(match self.client.call::<wire::ReadyResponse>(verb, &req) {
            Err(e) => {
                warn(verb, &e);
                !self.config.ignorable
            }
            Ok(r) => r.status,
        })
    }

    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        self.event(&self.config.allocate_func_verb, ssn, task)
    }

    /// Nothing can undo a deallocation, so a refusal is only logged (by `event`).
    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        let _ = self.event(&self.config.deallocate_func_verb, ssn, task);
    }
}

#[cfg(test)]
mod tests;
