//! tephra against a real cluster: the `vc-scheduler` binary's parts. Watches feed the cache
//! (one writer: the run loop), the engine decides, and this crate writes the decisions back
//! with the verbs of Volcano's stock ClusterRole. No scheduling decision is made here.

pub mod api_server_check;
pub mod app;
pub mod client;
pub mod conf;
pub mod cycle_profile;
pub mod dump;
pub mod feature_gates;
pub mod flags;
pub mod http;
pub mod leader;
pub mod list_items;
pub mod managed_fields;
pub mod metrics;
pub mod metrics_source;
pub mod multi_scheduler;
pub mod objects;
pub mod pprof;
pub mod rate_limit;
pub mod raw;
pub mod reflector;
pub mod reload;
pub mod scheduler;
pub mod tls;
pub mod watch;
pub mod watched_object;
pub mod writes;
