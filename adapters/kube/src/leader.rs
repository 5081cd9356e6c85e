//! Leader election on a `coordination.k8s.io/v1` Lease with client-go's LeaseLock semantics,
//! using only GET, CREATE and UPDATE (Volcano's ClusterRole grants no PATCH on leases): a
//! lease is taken over once its holder has not renewed it for a lease duration, as observed
//! on this process's own clock; the leader renews every retry period and gives up (the process
//! exits, as Volcano's does) when it could not renew within the renew deadline.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, PostParams};

use crate::writes::{ObjectRef, Recording, Writer, events};

/// The election's settings (Volcano's `--leader-elect-*` flags).
#[derive(Debug, Clone)]
pub struct ElectionConfig {
    pub namespace: String,
    pub name: String,
    pub identity: String,
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub retry_period: Duration,
}

/// What to do with the lease as last read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// No lease: create it holding it.
    Create,
    /// Write it holding it; `transitions` is the new `leaseTransitions`, `acquired` whether the
    /// holder changes (then `acquireTime` is reset).
    Take { transitions: i32, acquired: bool },
    /// Someone else holds a live lease.
    Follow(String),
}

/// The holder, renew time and transitions: what changes on every renewal.
type Record = (String, Option<String>, i32);

/// The record of `lease`, to tell a live holder from a dead one.
fn record(lease: &Lease) -> Record {
    let spec = lease.spec.clone().unwrap_or_default();
    (
        spec.holder_identity.unwrap_or_default(),
        spec.renew_time.map(|t| t.0.to_string()),
        spec.lease_transitions.unwrap_or(0),
    )
}

/// Tracks when the lease record last changed, on the local clock (client-go's `observedTime`).
#[derive(Debug, Default)]
pub struct Observer {
    last: Option<(Record, Instant)>,
}

impl Observer {
    /// Decides the step for `lease` (None: not found) at `now`.
    pub fn step(
        &mut self,
        lease: Option<&Lease>,
        me: &str,
        duration: Duration,
        now: Instant,
    ) -> Step {
        let Some(lease) = lease else {
            return Step::Create;
        };
        let rec = record(lease);
        let observed = match &self.last {
            Some((r, at)) if *r == rec => *at,
            _ => {
                self.last = Some((rec.clone(), now));
                now
            }
        };
        let (holder, _, transitions) = rec;
        let seconds = lease
            .spec
            .as_ref()
            .and_then(|s| s.lease_duration_seconds)
            .map(|s| Duration::from_secs(s.max(0) as u64))
            .unwrap_or(duration);
        let expired = now.saturating_duration_since(observed) >= seconds;
        if holder == me {
            Step::Take {
                transitions,
                acquired: false,
            }
        } else if holder.is_empty() || expired {
            Step::Take {
                transitions: transitions + 1,
                acquired: true,
            }
        } else {
            Step::Follow(holder)
        }
    }
}

/// This process's identity: `<hostname>_<uuid>`, as Volcano's.
pub fn identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "tephra".into());
    let uuid = std::fs::read_to_string("/proc/sys/kernel/random/uuid")
        .map(|u| u.trim().to_string())
        .unwrap_or_else(|_| format!("{}", std::process::id()));
    format!("{host}_{uuid}")
}

/// A lease election.
#[derive(Debug)]
pub struct Elector {
    cfg: ElectionConfig,
    writer: Writer,
    observer: Observer,
}

impl Elector {
    pub fn new(cfg: ElectionConfig, writer: Writer) -> Self {
        Elector {
            cfg,
            writer,
            observer: Observer::default(),
        }
    }

    fn api(&self) -> Api<Lease> {
        Api::namespaced(self.client(), &self.cfg.namespace)
    }

    fn client(&self) -> Client {
        self.writer.client.clone()
    }

    /// One attempt to acquire or renew; true when this process holds the lease afterwards.
    pub async fn try_acquire_or_renew(&mut self) -> bool {
        let api = self.api();
        self.writer.limiter.acquire().await;
        let current = match api.get_opt(&self.cfg.name).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!("lease {}/{}: get: {e}", self.cfg.namespace, self.cfg.name);
                return false;
            }
        };
        let now = MicroTime(Timestamp::now());
        let step = self.observer.step(
            current.as_ref(),
            &self.cfg.identity,
            self.cfg.lease_duration,
            Instant::now(),
        );
        let seconds = i32::try_from(self.cfg.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let result = match (step, current) {
            (Step::Follow(_), _) => return false,
            (Step::Create, _) | (_, None) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.cfg.name.clone()),
                        namespace: Some(self.cfg.namespace.clone()),
                        ..Default::default()
                    },
                    spec: Some(LeaseSpec {
                        holder_identity: Some(self.cfg.identity.clone()),
                        lease_duration_seconds: Some(seconds),
                        acquire_time: Some(now.clone()),
                        renew_time: Some(now),
                        lease_transitions: Some(0),
                        ..Default::default()
                    }),
                };
                self.writer.before("create leases").await;
                api.create(&PostParams::default(), &lease).await
            }
            (
                Step::Take {
                    transitions,
                    acquired,
                },
                Some(mut lease),
            ) => {
                let spec = lease.spec.get_or_insert_with(Default::default);
                spec.holder_identity = Some(self.cfg.identity.clone());
                spec.lease_duration_seconds = Some(seconds);
                spec.renew_time = Some(now.clone());
                spec.lease_transitions = Some(transitions);
                if acquired || spec.acquire_time.is_none() {
                    spec.acquire_time = Some(now);
                }
                self.writer.before("update leases").await;
                api.replace(&self.cfg.name, &PostParams::default(), &lease)
                    .await
            }
        };
        match result {
            Ok(_) => true,
            Err(e) => {
                tracing::info!("lease {}/{}: {e}", self.cfg.namespace, self.cfg.name);
                false
            }
        }
    }

    /// Waits until this process is the leader.
    pub async fn acquire(&mut self) {
        tracing::info!(
            "attempting to acquire leader lease {}/{} as {}",
            self.cfg.namespace,
            self.cfg.name,
            self.cfg.identity
        );
        while !self.try_acquire_or_renew().await {
            tokio::time::sleep(self.cfg.retry_period).await;
        }
        tracing::info!(
            "successfully acquired lease {}/{}",
            self.cfg.namespace,
            self.cfg.name
        );
        self.record_leadership().await;
    }

    /// client-go's resource lock records `<identity> became leader` on the Lease.
    async fn record_leadership(&self) {
        let lease = ObjectRef {
            kind: "Lease",
            api_version: "coordination.k8s.io/v1",
            namespace: self.cfg.namespace.clone(),
            name: self.cfg.name.clone(),
            uid: String::new(),
        };
        let message = format!("{} became leader", self.cfg.identity);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let name = format!("{}.{nanos:x}", self.cfg.name);
        let what = ("Normal", "LeaderElection", message.as_str());
        events::send(
            &self.writer,
            "volcano",
            &lease,
            what,
            Recording::Create { name },
        )
        .await;
    }

    /// Renews every retry period; returns when the lease could not be renewed within the
    /// renew deadline (leadership is lost).
    pub async fn hold(mut self) {
        let mut last_renew = Instant::now();
        loop {
            tokio::time::sleep(self.cfg.retry_period).await;
            if self.try_acquire_or_renew().await {
                last_renew = Instant::now();
            } else if last_renew.elapsed() >= self.cfg.renew_deadline {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: Duration = Duration::from_secs(15);

    fn lease(holder: &str, renew: &str) -> Lease {
        Lease {
            metadata: ObjectMeta::default(),
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                lease_duration_seconds: Some(15),
                renew_time: Some(MicroTime(renew.parse().unwrap())),
                lease_transitions: Some(3),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn a_missing_lease_is_created() {
        assert_eq!(
            Observer::default().step(None, "me", D, Instant::now()),
            Step::Create
        );
    }

    #[test]
    fn a_live_lease_of_another_holder_is_followed() {
        let mut o = Observer::default();
        let t = Instant::now();
        let l = lease("other", "2026-01-01T00:00:00Z");
        assert_eq!(o.step(Some(&l), "me", D, t), Step::Follow("other".into()));
        assert_eq!(
            o.step(Some(&l), "me", D, t + Duration::from_secs(14)),
            Step::Follow("other".into())
        );
    }

    #[test]
    fn a_lease_not_renewed_for_its_duration_is_taken_over() {
        let mut o = Observer::default();
        let t = Instant::now();
        let l = lease("other", "2026-01-01T00:00:00Z");
        o.step(Some(&l), "me", D, t);
        assert_eq!(
            o.step(Some(&l), "me", D, t + D),
            Step::Take {
                transitions: 4,
                acquired: true
            }
        );
    }

    #[test]
    fn a_renewal_seen_restarts_the_clock() {
        let mut o = Observer::default();
        let t = Instant::now();
        o.step(Some(&lease("other", "2026-01-01T00:00:00Z")), "me", D, t);
        let renewed = lease("other", "2026-01-01T00:00:10Z");
        assert_eq!(
            o.step(Some(&renewed), "me", D, t + Duration::from_secs(10)),
            Step::Follow("other".into())
        );
        assert_eq!(
            o.step(Some(&renewed), "me", D, t + Duration::from_secs(20)),
            Step::Follow("other".into())
        );
    }

    #[test]
    fn own_lease_is_renewed_without_a_transition() {
        let mut o = Observer::default();
        assert_eq!(
            o.step(
                Some(&lease("me", "2026-01-01T00:00:00Z")),
                "me",
                D,
                Instant::now()
            ),
            Step::Take {
                transitions: 3,
                acquired: false
            }
        );
    }

    #[test]
    fn identity_is_host_and_uuid() {
        let id = identity();
        assert!(id.contains('_'), "{id}");
    }
}
