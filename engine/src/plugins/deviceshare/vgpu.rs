//! HAMi-style vGPU: cards registered by the device plugin in a node annotation, pods asking for
//! `volcano.sh/vgpu-number`, `-memory` and `-cores` (Volcano:
//! pkg/scheduler/api/devices/nvidia/vgpu/device_info.go, utils.go, hamicore.go). Volcano's
//! device ConfigMap is not read: its defaults hold (these resource names, no memory
//! percentage resource, no MIG geometries, so every node shares in `hami-core` mode).

use std::collections::BTreeMap;

use super::arguments::SchedulePolicy;
use crate::api::{Pod, StringMap};
use crate::model::{Dim, Resource, TaskId};

pub const VGPU_NUMBER: &str = "volcano.sh/vgpu-number";
pub const VGPU_MEMORY: &str = "volcano.sh/vgpu-memory";
pub const VGPU_CORES: &str = "volcano.sh/vgpu-cores";
/// Node annotation: the cards, `uuid,count,memory,type,health,mode:` each.
pub const NODE_REGISTER: &str = "volcano.sh/node-vgpu-register";
pub const ASSIGNED_NODE: &str = "volcano.sh/vgpu-node";
pub const ASSIGNED_TIME: &str = "volcano.sh/vgpu-time";
pub const ASSIGNED_IDS: &str = "volcano.sh/vgpu-ids-new";
pub const DEVICES_TO_ALLOCATE: &str = "volcano.sh/devices-to-allocate";
pub const BIND_PHASE: &str = "volcano.sh/bind-phase";
pub const BIND_TIME: &str = "volcano.sh/bind-time";
/// Node annotation taken as the lock before a vGPU pod's bind.
pub const NODE_LOCK: &str = "hamivgpu";
const USE_GPU_TYPE: &str = "nvidia.com/use-gputype";
const NO_USE_GPU_TYPE: &str = "nvidia.com/nouse-gputype";
const USE_UUID: &str = "volcano.sh/vgpu-use-gpuuuid";
const NO_USE_UUID: &str = "volcano.sh/vgpu-nouse-gpuuuid";
const MODE: &str = "volcano.sh/vgpu-mode";
const GROUP_POLICY: &str = "volcano.sh/vgpu-podgroup-policy";
const HAMI_CORE: &str = "hami-core";
const NVIDIA: &str = "NVIDIA";

/// One container's ask (Volcano: pkg/scheduler/api/devices/util.go, ExtractResourceRequest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerRequest {
    pub cards: u64,
    pub memory: u64,
    /// Percent of a card's memory; 101 means "use `memory`".
    pub memory_percent: u64,
    pub cores: u64,
}

/// Whether any container limits vGPU memory or number (Volcano: utils.go,
/// checkVGPUResourcesInPod).
pub fn requests_vgpu(pod: &Pod) -> bool {
    pod.spec.containers.iter().any(|c| {
        c.resources.limits.contains_key(VGPU_MEMORY) || c.resources.limits.contains_key(VGPU_NUMBER)
    })
}

/// The asks of the containers that make one.
pub fn container_requests(pod: &Pod) -> Vec<ContainerRequest> {
    pod.spec
        .containers
        .iter()
        .filter_map(|c| {
            let limits = &c.resources.limits;
            let limit_or_request = |name: &str| {
                limits
                    .get(name)
                    .or_else(|| c.resources.requests.get(name))
                    .map_or(0, |q| q.value().max(0) as u64)
            };
            let cards = match limits.get(VGPU_NUMBER) {
                Some(q) => q.value().max(0) as u64,
                None if limits.contains_key(VGPU_MEMORY) => 1,
                None => return None,
            };
            let memory = limit_or_request(VGPU_MEMORY);
            Some(ContainerRequest {
                cards,
                memory,
                memory_percent: if memory == 0 { 100 } else { 101 },
                cores: limit_or_request(VGPU_CORES),
            })
        })
        .collect()
}

/// A pod's use of one card.
#[derive(Debug, Clone, PartialEq)]
struct PodUsage {
    task: TaskId,
    memory: u64,
    cores: u64,
    /// `namespace/group` of the pod's PodGroup, for the spread-by-group policy.
    group: Option<String>,
    /// The exclusivity rules the pod matches.
    rules: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
struct Card {
    index: usize,
    uuid: String,
    number: u64,
    memory: u64,
    kind: String,
    used_num: u64,
    used_mem: u64,
    used_cores: u64,
    pods: Vec<PodUsage>,
}

/// One card a container got.
#[derive(Debug, Clone, PartialEq)]
struct Grant {
    card: usize,
    memory: u64,
    cores: u64,
}

/// Where a pod's containers go and the node's score for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    containers: Vec<Vec<Grant>>,
    pub score: f64,
}

/// What the fit needs to know about the pod.
pub struct PodAsk<'a> {
    pub pod: &'a Pod,
    pub requests: &'a [ContainerRequest],
    /// The exclusivity rules the pod matches.
    pub rules: &'a [usize],
}

/// A node's vGPU cards, by their position in the registration.
#[derive(Debug, Clone, PartialEq)]
pub struct VgpuNode {
    name: String,
    cards: Vec<Card>,
}

impl VgpuNode {
    /// The node's cards: it needs the registration annotation and non-zero allocatable vGPU
    /// number, cores and memory (Volcano: device_info.go, NewGPUDevices).
    pub fn of(name: &str, allocatable: &Resource, annotations: &StringMap) -> Option<Self> {
        let register = annotations.get(NODE_REGISTER)?;
        let has = |r: &str| allocatable.scalar(Dim::of(r)).is_some_and(|v| v > 0.0);
        let advertised = has(VGPU_NUMBER) && has(VGPU_CORES) && has(VGPU_MEMORY);
        if !advertised || !register.contains(':') {
            return None;
        }
        let mut cards = Vec::new();
        for (index, entry) in register.split(':').enumerate() {
            if !entry.contains(',') {
                continue;
            }
            let items: Vec<&str> = entry.split(',').collect();
            if items.len() < 6 {
                return None;
            }
            cards.push(Card {
                index,
                uuid: items[0].to_string(),
                number: items[1].parse().unwrap_or(0),
                memory: items[2].parse().unwrap_or(0),
                kind: items[3].to_string(),
                used_num: 0,
                used_mem: 0,
                used_cores: 0,
                pods: Vec::new(),
            });
        }
        (!cards.is_empty()).then(|| VgpuNode {
            name: name.to_string(),
            cards,
        })
    }

    /// Accounts a pod already on the node from its `vgpu-ids-new` annotation: each device it
    /// names counts on the first card whose UUID it contains, a pod once per card (Volcano:
    /// hamicore.go, AddPod).
    pub fn add_placed(&mut self, task: TaskId, pod: &Pod, rules: Vec<usize>) {
        let Some(ids) = pod.metadata.annotations.get(ASSIGNED_IDS) else {
            return;
        };
        for (uuid, memory, cores) in decode(ids) {
            let Some(card) = self.cards.iter_mut().find(|c| uuid.contains(&c.uuid)) else {
                continue;
            };
            if card.pods.iter().any(|p| p.task == task) {
                continue;
            }
            card.used_num += 1;
            card.used_mem += memory;
            card.used_cores += cores;
            card.pods.push(PodUsage {
                task,
                memory,
                cores,
                group: group_key(pod),
                rules: rules.clone(),
            });
        }
    }

    /// Gives back what the pod's own `vgpu-ids-new` annotation names: each device it lists
    /// frees its memory and cores on the first card whose UUID it contains, while the pod is
    /// still on that card (Volcano: hamicore.go, SubPod). A pod placed this session carries no
    /// such annotation yet, so its cards stay taken until the session ends.
    pub fn remove_placed(&mut self, task: TaskId, pod: &Pod) {
        let Some(ids) = pod.metadata.annotations.get(ASSIGNED_IDS) else {
            return;
        };
        for (uuid, memory, cores) in decode(ids) {
            let Some(card) = self.cards.iter_mut().find(|c| uuid.contains(&c.uuid)) else {
                continue;
            };
            let Some(at) = card.pods.iter().position(|p| p.task == task) else {
                continue;
            };
            card.pods.remove(at);
            card.used_num = card.used_num.saturating_sub(1);
            card.used_mem = card.used_mem.saturating_sub(memory);
            card.used_cores = card.used_cores.saturating_sub(cores);
        }
    }

    /// Cards in the order the policy tries them (Volcano: utils.go,
    /// sortedDeviceIndicesByPolicy).
    fn order(&self, policy: SchedulePolicy) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.cards.len()).collect();
        match policy {
            SchedulePolicy::Binpack => idx.sort_by(|&a, &b| {
                let (ca, cb) = (&self.cards[a], &self.cards[b]);
                cb.used_mem.cmp(&ca.used_mem).then(ca.index.cmp(&cb.index))
            }),
            SchedulePolicy::Spread => idx.sort_by(|&a, &b| {
                let (ca, cb) = (&self.cards[a], &self.cards[b]);
                ca.used_num.cmp(&cb.used_num).then(ca.index.cmp(&cb.index))
            }),
            SchedulePolicy::Unset => idx.reverse(),
        }
        idx
    }

    /// Finds cards for every container on a scratch copy of the usage (Volcano: utils.go,
    /// checkNodeGPUSharingPredicateAndScore). A card the pod's exclusivity rules reserve (a pod
    /// matching one of them is on it) counts as full (Volcano: gpuexclusive.go, capGPUs).
    pub fn place(&self, ask: &PodAsk, policy: SchedulePolicy) -> Result<Placement, String> {
        let annotations = &ask.pod.metadata.annotations;
        if let Some(mode) = annotations.get(MODE)
            && mode != HAMI_CORE
        {
            return Err(format!(
                "pod required sharing mode {mode} is not the same as the node mode {HAMI_CORE}"
            ));
        }
        let mut scratch = self.cards.clone();
        let spread_group = (annotations.get(GROUP_POLICY).map(String::as_str) == Some("spread"))
            .then(|| group_key(ask.pod))
            .flatten();
        let allow = uuid_list(annotations.get(USE_UUID));
        let deny = uuid_list(annotations.get(NO_USE_UUID));
        let filtering = !allow.is_empty() || !deny.is_empty();
        let uuid_ok = |id: &str| {
            !(id.is_empty() && filtering)
                && (allow.is_empty() || allow.iter().any(|a| a == id))
                && !deny.iter().any(|d| d == id)
        };
        let mut placement = Placement {
            containers: Vec::new(),
            score: 0.0,
        };
        for request in ask.requests {
            if request.cards as usize > scratch.len() {
                return Err(format!("no enough gpu cards on node {}", self.name));
            }
            let mut left = request.cards;
            let mut grants = Vec::new();
            let mut uuid_matched = false;
            let order = VgpuNode {
                name: String::new(),
                cards: scratch.clone(),
            }
            .order(policy);
            for i in order {
                let card = &scratch[i];
                if !uuid_ok(&card.uuid) {
                    continue;
                }
                uuid_matched = true;
                let reserved = card
                    .pods
                    .iter()
                    .any(|p| p.rules.iter().any(|r| ask.rules.contains(r)));
                if reserved || card.number <= card.used_num {
                    continue;
                }
                if let Some(g) = &spread_group
                    && card
                        .pods
                        .iter()
                        .any(|p| p.group.as_ref() == Some(g) && (p.memory > 0 || p.cores > 0))
                {
                    continue;
                }
                let memory = if request.memory_percent != 101 {
                    (card.memory as f64 * request.memory_percent as f64 / 100.0) as u64
                } else {
                    request.memory
                };
                if (card.memory as i64 - card.used_mem as i64) < memory as i64
                    || card.used_cores + request.cores > 100
                    || (request.cores == 100 && card.used_num > 0)
                    || (card.used_cores == 100 && request.cores == 0)
                    || !type_allowed(annotations, &card.kind)
                {
                    continue;
                }
                let card = &mut scratch[i];
                card.used_num += 1;
                card.used_mem += memory;
                card.used_cores += request.cores;
                if left > 0 {
                    left -= 1;
                    grants.push(Grant {
                        card: i,
                        memory,
                        cores: request.cores,
                    });
                    placement.score += card_score(policy, card);
                }
                if left == 0 {
                    break;
                }
            }
            if left > 0 {
                if filtering && !uuid_matched {
                    return Err(format!(
                        "no GPU matches UUID constraints on node {}",
                        self.name
                    ));
                }
                return Err("not enough gpu fitted on this node".into());
            }
            placement.containers.push(grants);
        }
        Ok(placement)
    }

    /// Takes a placement onto the cards and returns the annotations of the bind (Volcano:
    /// device_info.go, Allocate).
    pub fn allocate(
        &mut self,
        task: TaskId,
        ask: &PodAsk,
        placement: &Placement,
        now: i64,
    ) -> BTreeMap<String, String> {
        for grant in placement.containers.iter().flatten() {
            let card = &mut self.cards[grant.card];
            card.used_num += 1;
            card.used_mem += grant.memory;
            card.used_cores += grant.cores;
            match card.pods.iter_mut().find(|p| p.task == task) {
                Some(p) => {
                    p.memory += grant.memory;
                    p.cores += grant.cores;
                }
                None => card.pods.push(PodUsage {
                    task,
                    memory: grant.memory,
                    cores: grant.cores,
                    group: group_key(ask.pod),
                    rules: ask.rules.to_vec(),
                }),
            }
        }
        let ids = placement
            .containers
            .iter()
            .map(|grants| {
                grants
                    .iter()
                    .map(|g| {
                        let uuid = &self.cards[g.card].uuid;
                        format!("{uuid},{NVIDIA},{},{}:", g.memory, g.cores)
                    })
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join(";");
        let now = now.to_string();
        BTreeMap::from([
            (ASSIGNED_NODE.to_string(), self.name.clone()),
            (ASSIGNED_TIME.to_string(), now.clone()),
            (ASSIGNED_IDS.to_string(), ids.clone()),
            (DEVICES_TO_ALLOCATE.to_string(), ids),
            (BIND_PHASE.to_string(), "allocating".to_string()),
            (BIND_TIME.to_string(), now),
        ])
    }
}

/// A card's score once the pod is on it (Volcano: utils.go, GPUScore, which runs after the card
/// counted the pod, so under spread a card it just took is never unused and scores 0).
fn card_score(policy: SchedulePolicy, card: &Card) -> f64 {
    match policy {
        SchedulePolicy::Binpack if card.memory > 0 => {
            100.0 * card.used_mem as f64 / card.memory as f64
        }
        SchedulePolicy::Spread if card.used_num == 0 => 100.0,
        _ => 0.0,
    }
}

/// `nvidia.com/use-gputype` / `nouse-gputype`: card types the pod wants or refuses, matched as
/// case-insensitive substrings (Volcano: utils.go, checkGPUtype); the card must be NVIDIA.
fn type_allowed(annotations: &StringMap, kind: &str) -> bool {
    if !kind.contains(NVIDIA) {
        return false;
    }
    let kind = kind.to_uppercase();
    let names = |v: &String| v.split(',').map(str::to_uppercase).collect::<Vec<_>>();
    if let Some(inuse) = annotations.get(USE_GPU_TYPE) {
        return names(inuse).iter().any(|n| kind.contains(n.as_str()));
    }
    if let Some(nouse) = annotations.get(NO_USE_GPU_TYPE) {
        return !names(nouse).iter().any(|n| kind.contains(n.as_str()));
    }
    true
}

fn uuid_list(value: Option<&String>) -> Vec<String> {
    value
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// `namespace/group` of the pod's PodGroup annotation, if any.
fn group_key(pod: &Pod) -> Option<String> {
    let a = &pod.metadata.annotations;
    let group = a
        .get("scheduling.k8s.io/group-name")
        .filter(|g| !g.is_empty())
        .or_else(|| a.get("scheduling.volcano.sh/group-name"))
        .filter(|g| !g.is_empty())?;
    Some(format!("{}/{group}", pod.metadata.namespace))
}

/// The devices of a `vgpu-ids-new` annotation: `(uuid, memory, cores)`, malformed ones skipped.
fn decode(ids: &str) -> Vec<(String, u64, u64)> {
    ids.split(';')
        .flat_map(|container| container.split(':'))
        .filter_map(|device| {
            let f: Vec<&str> = device.split(',').collect();
            if f.len() < 4 {
                return None;
            }
            Some((f[0].to_string(), f[2].parse().ok()?, f[3].parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> VgpuNode {
        let mut allocatable = Resource::empty();
        for name in [VGPU_NUMBER, VGPU_MEMORY, VGPU_CORES] {
            allocatable.set_scalar(Dim::of(name), 10_000.0);
        }
        let register = "GPU-0,10,8000,NVIDIA-A100,true,hami-core:";
        let annotations = StringMap::from([(NODE_REGISTER.to_string(), register.to_string())]);
        VgpuNode::of("n1", &allocatable, &annotations).expect("registered")
    }

    fn pod_with_ids(ids: &str) -> Pod {
        let mut p = Pod::default();
        p.metadata
            .annotations
            .insert(ASSIGNED_IDS.into(), ids.into());
        p
    }

    #[test]
    fn a_running_pod_counts_once_per_card_and_is_given_back() {
        let mut n = node();
        let p = pod_with_ids("GPU-0,NVIDIA,1000,20:;GPU-0,NVIDIA,500,10:");
        n.add_placed(TaskId(0), &p, Vec::new());
        let card = &n.cards[0];
        assert_eq!(
            (card.used_num, card.used_mem, card.used_cores),
            (1, 1000, 20)
        );
        n.remove_placed(TaskId(0), &p);
        let card = &n.cards[0];
        assert_eq!((card.used_num, card.used_mem, card.used_cores), (0, 0, 0));
    }

    #[test]
    fn a_node_without_vgpu_allocatable_has_no_cards() {
        let annotations = StringMap::from([(
            NODE_REGISTER.to_string(),
            "GPU-0,10,8000,NVIDIA,true,hami-core:".to_string(),
        )]);
        assert!(VgpuNode::of("n1", &Resource::empty(), &annotations).is_none());
    }

    #[test]
    fn decode_skips_malformed_devices() {
        let d = decode("GPU-a,NVIDIA,1000,30:GPU-b,NVIDIA,x,1:;GPU-c,NVIDIA,5,0:");
        assert_eq!(d, vec![("GPU-a".into(), 1000, 30), ("GPU-c".into(), 5, 0)]);
    }

    #[test]
    fn the_gpu_type_annotations_select_cards() {
        let want = StringMap::from([(USE_GPU_TYPE.to_string(), "a100".to_string())]);
        assert!(type_allowed(&want, "NVIDIA-A100"));
        assert!(!type_allowed(&want, "NVIDIA-V100"));
        let refuse = StringMap::from([(NO_USE_GPU_TYPE.to_string(), "v100,t4".to_string())]);
        assert!(!type_allowed(&refuse, "NVIDIA-T4"));
        assert!(!type_allowed(&StringMap::new(), "AMD"));
    }
}
