//! kube-scheduler (v1.36) filter and score algorithms, as Volcano's `predicates` and `nodeorder`
//! plugins run them, over tephra's snapshot and session state.
//!
//! Each file is one kube plugin (or one half of it) or one shared concept. Algorithms read pods
//! through a `ClusterView`, the plugin's copy of Volcano's kube node map; reasons and status codes
//! are kube's. Integer arithmetic (truncating division, float-to-int truncation) follows kube
//! exactly, because node choices depend on it.
//!
//! Not modelled, because tephra has no such objects yet: Services and workload controllers (so
//! no system-default spread constraints), volumes, PVCs and CSI nodes (the volume filters always
//! skip), resource claims, image volumes and pod-level resources.

pub mod affinity_term;
pub mod balanced_allocation;
pub mod cluster;
pub mod image_locality;
pub mod inter_pod_affinity;
pub mod inter_pod_affinity_score;
pub mod node_affinity;
pub mod node_copies;
pub mod node_pods;
pub mod node_ports;
pub mod node_selector;
pub mod node_unschedulable;
pub mod normalize;
pub mod pod_info;
pub mod requests;
pub mod resource_fit;
pub mod spread_constraint;
pub mod spread_filter;
pub mod spread_score;
pub mod taint_toleration;
pub mod toleration;
pub mod volume_binding;
pub mod volume_limits;
pub mod volume_zone;

pub use cluster::{Cluster, ClusterView};

/// One score per node asked about. A re-rank after a placement asks about one node, so one
/// score is kept inline: a contended cycle re-ranks hundreds of thousands of single nodes, and
/// a vector per scorer each time would be an allocation each.
pub type NodeScores = smallvec::SmallVec<[i64; 1]>;
