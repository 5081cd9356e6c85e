//! Everything vc-scheduler writes to the API server, each call inside Volcano's stock
//! ClusterRole: pods/binding create, persistentvolumes and persistentvolumeclaims update (a
//! bind's volume work, after which the bind waits for the PV controller), nodes get/update (a
//! device bind's node lock), pods/status update, pods delete, podgroups update,
//! queues/status update, queues get/create, nodeshards/status update (sharded only), core/v1
//! events create/patch, leases get/create/update.

mod bind;
pub mod bind_concurrency;
mod bind_gate;
pub mod events;
mod evict;
mod node_lock;
pub mod node_shard;
pub mod quantity;
pub mod status;
mod versions;
pub mod volume_wait;
pub mod volumes;

use std::sync::Arc;
use std::time::Instant;

use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject};

pub use bind::bind;
pub use bind_gate::{BindGate, Binding, STATUS_HOLD_MAX};
pub use events::{EventRecorder, ObjectRef, Recording};
pub use evict::evict;
pub use status::{EventWrite, StatusBatch, StatusWriter, Written};

use crate::metrics::RestClientMetrics;
use crate::rate_limit::RateLimiter;

/// A client whose writes wait on the rate limiter and are counted (an export of our own,
/// beside Volcano's metrics, to compare writes per cycle with Volcano's).
#[derive(Clone)]
pub struct Writer {
    pub client: Client,
    pub limiter: Arc<RateLimiter>,
    /// `tephra_api_writes_total{verb, resource}`.
    pub counts: prometheus::CounterVec,
    /// Where the rate limiter's waits are measured.
    pub rest_client: RestClientMetrics,
    /// The API server's `host:port`, the metrics' `host` label.
    pub host: String,
    /// Status writes wait on it while binds are in flight.
    pub binds: BindGate,
    /// Until when a status write waits for binds: set by the status writer for each group of
    /// writes it sends, so the group waits once; `None`, `STATUS_HOLD_MAX` from the call.
    pub status_hold_until: Option<tokio::time::Instant>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

impl Writer {
    /// A dynamic API for `ar` in `namespace` (cluster-scoped when empty).
    pub fn api(&self, ar: &ApiResource, namespace: &str) -> Api<DynamicObject> {
        if namespace.is_empty() {
            Api::all_with(self.client.clone(), ar)
        } else {
            Api::namespaced_with(self.client.clone(), namespace, ar)
        }
    }

    /// Waits until no bind is in flight (or until `status_hold_until`), then for a token;
    /// counts one status write of `what`.
    pub async fn before_status(&self, what: &'static str) {
        let deadline = self
            .status_hold_until
            .unwrap_or_else(|| tokio::time::Instant::now() + STATUS_HOLD_MAX);
        self.binds.binds_done_by(deadline).await;
        self.before(what).await;
    }

    /// Waits for a token and counts one write of `what` (`verb resource`).
    pub async fn before(&self, what: &'static str) {
        let started = Instant::now();
        self.limiter.acquire().await;
        let (verb, resource) = what.split_once(' ').unwrap_or((what, ""));
        self.rest_client
            .rate_limited(http_method(verb), &self.host, started.elapsed());
        self.counts.with_label_values(&[verb, resource]).inc();
    }
}

/// The HTTP method of an API verb (client-go labels its rate limiter's waits by method).
fn http_method(verb: &str) -> &'static str {
    match verb {
        "create" => "POST",
        "update" => "PUT",
        "patch" => "PATCH",
        "delete" => "DELETE",
        _ => "GET",
    }
}

/// True for an API error with this HTTP status.
pub fn is_status(e: &kube::Error, code: u16) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == code)
}
