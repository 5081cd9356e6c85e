//! A task's scheduling signature. Tasks of one signature rank nodes the same way when every
//! plugin is node-local for them (`actions::class_cache`). Its hash is derived with the task row,
//! once per pod version and off allocate's loop (`TaskTable::signature`).

use std::hash::{BuildHasher, Hash, Hasher};

use foldhash::fast::FixedState;

use crate::api::{Container, NodeAffinity, Pod};
use crate::model::{Dim, Resource};

/// What decides a task's node ranking, for tasks whose plugins are node-local: its request,
/// node selector, node affinity, tolerations, host ports and images. Read in place from the
/// task's pod, so comparing two allocates nothing (a contended cycle looks up 100k tasks'
/// classes).
pub struct TaskSignature<'a> {
    pod: &'a Pod,
    request: &'a Resource,
}

impl<'a> TaskSignature<'a> {
    /// The signature of a task with this pod and request.
    pub fn new(pod: &'a Pod, request: &'a Resource) -> TaskSignature<'a> {
        TaskSignature { pod, request }
    }

    /// The request's values bit for bit: cpu, memory, then each scalar with its dimension.
    fn request(&self) -> impl Iterator<Item = (Option<Dim>, u64)> + '_ {
        let r = self.request;
        [(None, r.milli_cpu.to_bits()), (None, r.memory.to_bits())]
            .into_iter()
            .chain(r.scalars().map(|(d, v)| (Some(d), v.to_bits())))
    }

    fn node_affinity(&self) -> Option<&'a NodeAffinity> {
        self.pod.spec.affinity.as_ref()?.node_affinity.as_ref()
    }

    fn containers(&self) -> impl Iterator<Item = &'a Container> + Clone {
        let spec = &self.pod.spec;
        spec.containers.iter().chain(&spec.init_containers)
    }

    fn host_ports(&self) -> impl Iterator<Item = (i32, &'a str, &'a str)> {
        self.containers()
            .flat_map(|c| &c.ports)
            .filter(|p| p.host_port > 0)
            .map(|p| (p.host_port, p.host_ip.as_str(), p.protocol.as_str()))
    }

    fn images(&self) -> impl Iterator<Item = &'a str> {
        self.containers().map(|c| c.image.as_str())
    }

    /// The signature's hash, stable for the life of the process (a fixed-seed foldhash).
    pub fn hash(&self) -> u64 {
        let mut h = FixedState::default().build_hasher();
        self.request().for_each(|r| r.hash(&mut h));
        self.pod.spec.node_selector.hash(&mut h);
        self.node_affinity().hash(&mut h);
        self.pod.spec.tolerations.hash(&mut h);
        self.host_ports().for_each(|p| p.hash(&mut h));
        self.images().for_each(|i| i.hash(&mut h));
        h.finish()
    }
}

impl PartialEq for TaskSignature<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.pod.spec, &other.pod.spec);
        self.request().eq(other.request())
            && a.node_selector == b.node_selector
            && self.node_affinity() == other.node_affinity()
            && a.tolerations == b.tolerations
            && self.host_ports().eq(other.host_ports())
            && self.images().eq(other.images())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::pod_request;

    fn pod(yaml: &str) -> Pod {
        crate::harness::Harness::parse(yaml)
    }

    #[test]
    fn equal_signatures_hash_equally_and_any_field_tells_them_apart() {
        let base = "spec: {nodeSelector: {zone: a}, containers: [{image: img:1, resources: {requests: {cpu: '1'}}}]}";
        let others = [
            "metadata: {name: other}\nspec: {nodeSelector: {zone: a}, containers: [{image: img:1, resources: {requests: {cpu: '1'}}}]}",
            "spec: {nodeSelector: {zone: b}, containers: [{image: img:1, resources: {requests: {cpu: '1'}}}]}",
            "spec: {nodeSelector: {zone: a}, containers: [{image: img:2, resources: {requests: {cpu: '1'}}}]}",
            "spec: {nodeSelector: {zone: a}, containers: [{image: img:1, resources: {requests: {cpu: '2'}}}]}",
            "spec: {nodeSelector: {zone: a}, tolerations: [{key: k, operator: Exists}], containers: [{image: img:1, resources: {requests: {cpu: '1'}}}]}",
        ];
        let a = pod(base);
        let a_request = pod_request(&a);
        let sig = TaskSignature::new(&a, &a_request);
        for (i, other) in others.iter().enumerate() {
            let b = pod(other);
            let b_request = pod_request(&b);
            let other_sig = TaskSignature::new(&b, &b_request);
            if i == 0 {
                assert!(sig == other_sig, "a pod's name is not in its signature");
                assert_eq!(sig.hash(), other_sig.hash());
            } else {
                assert!(sig != other_sig, "case {i}");
                assert_ne!(sig.hash(), other_sig.hash(), "case {i}");
            }
        }
    }
}
