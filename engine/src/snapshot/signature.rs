//! A task's scheduling signature. Tasks of one signature rank nodes the same way when every
//! plugin is node-local for them (`actions::class_cache`). Each signature is interned when a task
//! row is derived, once per pod version and off the cycle: the row and the task table hold its id
//! (`TaskTable::signature`), so allocate finds a task's class by the id without reading the
//! task's pod.
//!
//! What depends on the signature alone may be kept by its id, as ids are never reused: allocate's
//! equivalence classes, the predicates plugin's NodeAffinity and NodePorts PreFilter answers, and
//! the whole PrePredicate state of a task that sets no inter-pod term.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use foldhash::fast::FixedState;

use crate::api::{
    Affinity, Container, ContainerPort, NodeAffinity, Pod, PodSpec, ResourceList,
    ResourceRequirements,
};
use crate::model::{Dim, Resource};

/// What decides a task's node ranking, for tasks whose plugins are node-local: its request,
/// node selector, node affinity, tolerations, overhead, resource claims, and per container (app and init apart)
/// its image, host ports, requests and restart policy. Read in place from the task's pod.
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

    /// The containers, then the init containers, each list with its length (so a container
    /// cannot pass for an init container).
    fn container_lists(&self) -> [&'a [Container]; 2] {
        let spec = &self.pod.spec;
        [&spec.containers, &spec.init_containers]
    }

    /// What of a container the node-local plugins read: its image (image locality), host ports
    /// (NodePorts), requests one by one (kube's requests give a container without a cpu or
    /// memory request a default, so how a request is split matters) and restart policy (a
    /// sidecar's ports and requests count as an app container's).
    fn container_key(c: &'a Container) -> ContainerKey<'a> {
        let host_ports = c.ports.iter().filter(|p| p.host_port > 0);
        ContainerKey {
            image: &c.image,
            host_ports: host_ports
                .map(|p| (p.host_port, p.host_ip.as_str(), p.protocol.as_str()))
                .collect(),
            requests: &c.resources.requests,
            restart_policy: c.restart_policy.as_deref(),
        }
    }

    fn containers(&self) -> impl Iterator<Item = (usize, ContainerKey<'a>)> {
        self.container_lists().into_iter().flat_map(|list| {
            list.iter()
                .map(move |c| (list.len(), Self::container_key(c)))
        })
    }

    /// The signature's hash, stable for the life of the process (a fixed-seed foldhash). It
    /// leaves request quantities out (equal signatures still hash equally).
    pub fn hash(&self) -> u64 {
        let mut h = FixedState::default().build_hasher();
        self.request().for_each(|r| r.hash(&mut h));
        self.pod.spec.node_selector.hash(&mut h);
        self.node_affinity().hash(&mut h);
        self.pod.spec.tolerations.hash(&mut h);
        self.pod.spec.overhead.keys().for_each(|k| k.hash(&mut h));
        self.pod.spec.resource_claims.hash(&mut h);
        for (len, c) in self.containers() {
            (len, c.image, &c.host_ports, c.restart_policy).hash(&mut h);
            c.requests.keys().for_each(|k| k.hash(&mut h));
        }
        h.finish()
    }

    /// A pod holding only what the signature reads.
    fn stripped_pod(&self) -> Pod {
        let spec = &self.pod.spec;
        let container = |c: &Container| Container {
            image: c.image.clone(),
            ports: c
                .ports
                .iter()
                .filter(|p| p.host_port > 0)
                .map(|p| ContainerPort {
                    host_port: p.host_port,
                    host_ip: p.host_ip.clone(),
                    protocol: p.protocol.clone(),
                    ..Default::default()
                })
                .collect(),
            resources: ResourceRequirements {
                requests: c.resources.requests.clone(),
                ..Default::default()
            },
            restart_policy: c.restart_policy.clone(),
            ..Default::default()
        };
        Pod {
            spec: PodSpec {
                containers: spec.containers.iter().map(container).collect(),
                init_containers: spec.init_containers.iter().map(container).collect(),
                node_selector: spec.node_selector.clone(),
                affinity: self.node_affinity().map(|na| {
                    Box::new(Affinity {
                        node_affinity: Some(na.clone()),
                        ..Default::default()
                    })
                }),
                tolerations: spec.tolerations.clone(),
                overhead: spec.overhead.clone(),
                resource_claims: spec.resource_claims.clone(),
                ..Default::default()
            },
            ..Default::default()
        }
    }
}

/// One container's part of a signature (`TaskSignature::container_key`).
#[derive(PartialEq)]
struct ContainerKey<'a> {
    image: &'a str,
    host_ports: Vec<(i32, &'a str, &'a str)>,
    requests: &'a ResourceList,
    restart_policy: Option<&'a str>,
}

impl PartialEq for TaskSignature<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.pod.spec, &other.pod.spec);
        self.request().eq(other.request())
            && a.node_selector == b.node_selector
            && self.node_affinity() == other.node_affinity()
            && a.tolerations == b.tolerations
            && a.overhead == b.overhead
            && a.resource_claims == b.resource_claims
            && self.containers().eq(other.containers())
    }
}

/// An interned signature's id: equal ids, equal signatures. Ids are never reused, so an id kept
/// beyond its entry's life (a carried class, a row of a long-lived pod) can only ever stand for
/// that one signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SignatureId(pub u64);

/// One signature: a pod with only the fields the signature reads, the request, and when it was
/// last interned.
struct Entry {
    id: SignatureId,
    pod: Pod,
    request: Resource,
    last_used: u64,
}

/// Signatures by hash, one shard of the interner. A shard keeps at most `SHARD_ENTRIES`; past
/// that, the half least recently interned go. A signature interned again after its entry went
/// gets a new id: tasks of one signature may then show two ids, which costs a second class,
/// never a wrong answer (ids are only ever equal for equal signatures).
#[derive(Default)]
struct Shard {
    by_hash: HashMap<u64, Vec<Entry>, FixedState>,
    entries: usize,
    clock: u64,
}

/// Entries one shard keeps.
const SHARD_ENTRIES: usize = 1024;

/// Shards, chosen by hash, so rows derived on several threads rarely wait for one another.
const SHARDS: usize = 16;

static INTERNER: [Mutex<Option<Shard>>; SHARDS] = [const { Mutex::new(None) }; SHARDS];

static LAST_ID: AtomicU64 = AtomicU64::new(0);

impl Shard {
    fn intern(&mut self, hash: u64, sig: &TaskSignature) -> SignatureId {
        self.clock += 1;
        let clock = self.clock;
        let bucket = self.by_hash.entry(hash).or_default();
        if let Some(e) = bucket
            .iter_mut()
            .find(|e| TaskSignature::new(&e.pod, &e.request) == *sig)
        {
            e.last_used = clock;
            return e.id;
        }
        let id = SignatureId(LAST_ID.fetch_add(1, Ordering::Relaxed) + 1);
        // The stripped pod must give back the very signature: a field the signature reads but
        // the stripping left out would let signatures differing only there share an entry.
        // Should that ever happen, the whole pod is kept instead.
        let stripped = sig.stripped_pod();
        let pod = if TaskSignature::new(&stripped, sig.request) == *sig {
            stripped
        } else {
            sig.pod.clone()
        };
        bucket.push(Entry {
            id,
            pod,
            request: sig.request.clone(),
            last_used: clock,
        });
        self.entries += 1;
        if self.entries > SHARD_ENTRIES {
            self.forget_least_recent_half();
        }
        id
    }

    fn forget_least_recent_half(&mut self) {
        let mut used: Vec<u64> = self
            .by_hash
            .values()
            .flatten()
            .map(|e| e.last_used)
            .collect();
        let median = *used.select_nth_unstable(self.entries / 2).1;
        for bucket in self.by_hash.values_mut() {
            bucket.retain(|e| e.last_used >= median);
        }
        self.by_hash.retain(|_, bucket| !bucket.is_empty());
        self.entries = self.by_hash.values().map(Vec::len).sum();
    }
}

/// The id of `sig`: the id every signature equal to it was given, while its entry is kept.
pub fn intern(sig: &TaskSignature) -> SignatureId {
    let hash = sig.hash();
    let shard = &INTERNER[(hash % SHARDS as u64) as usize];
    let mut shard = shard.lock().unwrap_or_else(|p| p.into_inner());
    shard.get_or_insert_default().intern(hash, sig)
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
            "spec: {nodeSelector: {zone: a}, overhead: {cpu: 100m}, containers: [{image: img:1, resources: {requests: {cpu: '1'}}}]}",
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

    #[test]
    fn a_pod_interns_to_its_twins_signature_whatever_fields_it_sets() {
        let spec = "spec:\n  nodeSelector: {zone: a}\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: k, operator: In, values: [v]}]}]}}}\n  tolerations: [{key: gpu, operator: Exists}]\n  initContainers: [{image: init:1}]\n  containers: [{image: twin-test:1, ports: [{containerPort: 80, hostPort: 8080}], resources: {requests: {cpu: '1'}}}]";
        let a = pod(&format!("metadata: {{name: a}}\n{spec}"));
        let b = pod(&format!("metadata: {{name: b}}\n{spec}"));
        let (ra, rb) = (pod_request(&a), pod_request(&b));
        let first = intern(&TaskSignature::new(&a, &ra));
        assert_eq!(intern(&TaskSignature::new(&b, &rb)), first);
        let other = pod(&format!(
            "metadata: {{name: c}}\n{}",
            spec.replace("8080", "8081")
        ));
        let other_request = pod_request(&other);
        assert_ne!(intern(&TaskSignature::new(&other, &other_request)), first);
    }

    #[test]
    fn a_full_shard_forgets_its_least_recently_interned_half_and_never_reuses_an_id() {
        let mut shard = super::Shard::default();
        let pods: Vec<Pod> = (0..=super::SHARD_ENTRIES)
            .map(|i| {
                pod(&format!(
                    "spec: {{containers: [{{image: 'shard-test:{i}'}}]}}"
                ))
            })
            .collect();
        let request = Resource::empty();
        let id = |shard: &mut super::Shard, p: &Pod| {
            let sig = TaskSignature::new(p, &request);
            shard.intern(sig.hash(), &sig)
        };
        let first = id(&mut shard, &pods[0]);
        let ids: Vec<SignatureId> = pods[1..].iter().map(|p| id(&mut shard, p)).collect();
        assert!(shard.entries <= super::SHARD_ENTRIES / 2 + 1);
        assert_eq!(
            id(&mut shard, &pods[super::SHARD_ENTRIES]),
            ids[ids.len() - 1],
            "kept"
        );
        let again = id(&mut shard, &pods[0]);
        assert_ne!(again, first, "forgotten, then a new id");
        assert!(!ids.contains(&again));
    }

    #[test]
    fn a_sidecars_restart_policy_and_which_list_a_container_is_in_are_part_of_it() {
        let port = "ports: [{containerPort: 80, hostPort: 9000}]";
        let sidecar = pod(&format!(
            "spec: {{containers: [{{image: a}}], initContainers: [{{image: b, restartPolicy: Always, {port}}}]}}"
        ));
        let init = pod(&format!(
            "spec: {{containers: [{{image: a}}], initContainers: [{{image: b, {port}}}]}}"
        ));
        let app = pod(&format!(
            "spec: {{containers: [{{image: a}}, {{image: b, {port}}}]}}"
        ));
        let (rs, ri, ra) = (pod_request(&sidecar), pod_request(&init), pod_request(&app));
        let sigs = [
            TaskSignature::new(&sidecar, &rs),
            TaskSignature::new(&init, &ri),
            TaskSignature::new(&app, &ra),
        ];
        for (i, a) in sigs.iter().enumerate() {
            for (j, b) in sigs.iter().enumerate() {
                assert_eq!(a == b, i == j, "{i} vs {j}");
            }
        }
    }

    #[test]
    fn a_request_split_another_way_over_the_containers_is_another_signature() {
        // Both ask Volcano for 2 cpus; kube counts 100m for the container without a cpu
        // request, so the kube scorers rank nodes differently for them.
        let split = pod(
            "spec: {containers: [{image: x, resources: {requests: {cpu: '1'}}}, {image: x, resources: {requests: {cpu: '1'}}}]}",
        );
        let lopsided =
            pod("spec: {containers: [{image: x, resources: {requests: {cpu: '2'}}}, {image: x}]}");
        let (rs, rl) = (pod_request(&split), pod_request(&lopsided));
        assert!(rs.equal(&rl), "the same Volcano request");
        assert!(TaskSignature::new(&split, &rs) != TaskSignature::new(&lopsided, &rl));
    }
}
