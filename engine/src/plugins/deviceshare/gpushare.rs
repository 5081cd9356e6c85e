//! Volcano's own GPU sharing: whole cards by `volcano.sh/gpu-number` or a slice of one card's
//! memory by `volcano.sh/gpu-memory`, the node advertising both in its capacity (Volcano:
//! pkg/scheduler/api/devices/nvidia/gpushare/device_info.go and share.go).

use std::collections::BTreeMap;

use crate::api::{Pod, StringMap};
use crate::model::{Dim, Resource, TaskId};

pub const GPU_MEMORY: &str = "volcano.sh/gpu-memory";
pub const GPU_NUMBER: &str = "volcano.sh/gpu-number";
/// Pod annotation: the cards the pod got, comma-separated ids.
pub const GPU_INDEX: &str = "volcano.sh/gpu-index";
/// Pod annotation: when the cards were chosen, in Unix nanoseconds.
pub const PREDICATE_TIME: &str = "volcano.sh/predicate-time";
/// Node annotation taken as the lock before a gpu-memory pod's bind.
pub const NODE_LOCK: &str = "gpu";
/// Node annotation: comma-separated ids of cards not to use.
pub const UNHEALTHY_GPU_IDS: &str = "volcano.sh/gpu-unhealthy-ids";

/// What a pod asks for: the larger of its containers' sum and its largest init container, of
/// each resource's limit (Volcano: share.go, getGPUMemoryOfPod, getGPUNumberOfPod).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuShareRequest {
    pub memory: u64,
    pub number: u64,
}

impl GpuShareRequest {
    pub fn of(pod: &Pod) -> GpuShareRequest {
        let amount = |name: &str| {
            let limit = |c: &crate::api::Container| {
                c.resources
                    .limits
                    .get(name)
                    .map_or(0, |q| q.value().max(0) as u64)
            };
            let sum: u64 = pod.spec.containers.iter().map(limit).sum();
            let init = pod
                .spec
                .init_containers
                .iter()
                .map(limit)
                .max()
                .unwrap_or(0);
            sum.max(init)
        };
        GpuShareRequest {
            memory: amount(GPU_MEMORY),
            number: amount(GPU_NUMBER),
        }
    }
}

/// One card and the pods on it, each with the memory it asked for.
#[derive(Debug, Clone, PartialEq)]
struct Card {
    id: u32,
    memory: u64,
    pods: Vec<(TaskId, u64)>,
}

impl Card {
    /// Memory left: the card's less its pods' requests, never below zero (a pod that named
    /// its own card can overfill it).
    fn idle_memory(&self) -> u64 {
        let used: u64 = self.pods.iter().map(|&(_, m)| m).sum();
        self.memory.saturating_sub(used)
    }
}

/// A node's cards, in id order, the unhealthy ones left out.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuShareNode {
    cards: Vec<Card>,
}

impl GpuShareNode {
    /// The node's cards: `gpu-memory` capacity split evenly over `gpu-number` cards; none when
    /// either is missing or the number is 0 (Volcano: device_info.go, NewGPUDevices).
    pub fn of(capacity: &Resource, annotations: &StringMap) -> Option<Self> {
        let value = |name: &str| {
            capacity
                .scalar(Dim::of(name))
                .map(|milli| (milli / 1000.0).ceil() as i64)
        };
        let total = value(GPU_MEMORY)?;
        let number = value(GPU_NUMBER)?;
        if number <= 0 {
            return None;
        }
        let per_card = (total / number).max(0) as u64;
        let unhealthy: Vec<u32> = annotations
            .get(UNHEALTHY_GPU_IDS)
            .map(|v| v.split(',').filter_map(|id| id.parse().ok()).collect())
            .unwrap_or_default();
        let cards = (0..number as u32)
            .filter(|id| !unhealthy.contains(id))
            .map(|id| Card {
                id,
                memory: per_card,
                pods: Vec::new(),
            })
            .collect();
        Some(GpuShareNode { cards })
    }

    /// Accounts a pod already on the node on the cards its `gpu-index` annotation names.
    pub fn add_placed(&mut self, task: TaskId, pod: &Pod) {
        let request = GpuShareRequest::of(pod);
        if request.memory == 0 && request.number == 0 {
            return;
        }
        for id in gpu_index(pod) {
            if let Some(card) = self.cards.iter_mut().find(|c| c.id == id) {
                card.pods.push((task, request.memory));
            }
        }
    }

    /// Takes the task off every card.
    pub fn remove(&mut self, task: TaskId) {
        for card in &mut self.cards {
            card.pods.retain(|&(t, _)| t != task);
        }
    }

    /// Cards with enough idle memory for `memory`, lowest id first.
    fn fitting_memory(&self, memory: u64) -> Vec<u32> {
        let cards = self.cards.iter().filter(|c| c.idle_memory() >= memory);
        cards.map(|c| c.id).collect()
    }

    /// The first `number` cards no pod uses, lowest id first (Volcano takes them in map order).
    fn idle_cards(&self, number: u64) -> Option<Vec<u32>> {
        let idle: Vec<u32> = self
            .cards
            .iter()
            .filter(|c| c.pods.is_empty())
            .map(|c| c.id)
            .collect();
        (idle.len() as u64 >= number).then(|| idle[..number as usize].to_vec())
    }

    /// The predicate: with sharing on, a card with enough idle memory; with number on, enough
    /// idle cards (Volcano: device_info.go, FilterNode).
    pub fn filter(
        &self,
        request: GpuShareRequest,
        sharing: bool,
        number: bool,
        node: &str,
    ) -> Result<(), String> {
        if sharing && request.memory > 0 && self.fitting_memory(request.memory).is_empty() {
            return Err(format!("GpuShare no enough gpu memory on node {node}"));
        }
        if number && request.number > 0 && self.idle_cards(request.number).is_none() {
            return Err(format!("GpuNumber no enough gpu number on node {node}"));
        }
        Ok(())
    }

    /// Gives the task its cards: by memory the lowest fitting card, else by number the first
    /// idle cards; the ids, or why none (Volcano: device_info.go, Allocate).
    pub fn allocate(
        &mut self,
        task: TaskId,
        request: GpuShareRequest,
        node: &str,
    ) -> Result<Vec<u32>, String> {
        let ids = if request.memory > 0 {
            self.fitting_memory(request.memory)
                .into_iter()
                .take(1)
                .collect()
        } else if request.number > 0 {
            self.idle_cards(request.number).unwrap_or_default()
        } else {
            return Ok(Vec::new());
        };
        if ids.is_empty() {
            return Err(format!("the node {node} can't place the pod"));
        }
        for card in self.cards.iter_mut().filter(|c| ids.contains(&c.id)) {
            card.pods.push((task, request.memory));
        }
        Ok(ids)
    }
}

/// The pod's `gpu-index` annotation; nothing when absent or any id is not a number.
fn gpu_index(pod: &Pod) -> Vec<u32> {
    let Some(value) = pod.metadata.annotations.get(GPU_INDEX) else {
        return Vec::new();
    };
    value
        .split(',')
        .map(|id| id.parse().ok())
        .collect::<Option<Vec<u32>>>()
        .unwrap_or_default()
}

/// The annotations a bind sets for cards `ids` chosen at `now_nanos`.
pub fn annotations(ids: &[u32], now_nanos: i64) -> BTreeMap<String, String> {
    let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
    BTreeMap::from([
        (PREDICATE_TIME.to_string(), now_nanos.to_string()),
        (GPU_INDEX.to_string(), ids.join(",")),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ResourceList;
    use crate::model::Quantity;

    fn capacity(memory: &str, number: &str) -> Resource {
        let mut l = ResourceList::new();
        l.insert(GPU_MEMORY.into(), Quantity::parse(memory).unwrap());
        l.insert(GPU_NUMBER.into(), Quantity::parse(number).unwrap());
        Resource::from_list(&l)
    }

    fn memory(m: u64) -> GpuShareRequest {
        GpuShareRequest {
            memory: m,
            number: 0,
        }
    }

    #[test]
    fn capacity_is_split_evenly_and_unhealthy_cards_are_dropped() {
        let ann = StringMap::from([(UNHEALTHY_GPU_IDS.to_string(), "1,x".to_string())]);
        let n = GpuShareNode::of(&capacity("3000", "3"), &ann).unwrap();
        let ids: Vec<u32> = n.cards.iter().map(|c| c.id).collect();
        assert_eq!(ids, [0, 2]);
        assert!(n.cards.iter().all(|c| c.memory == 1000));
    }

    #[test]
    fn a_node_with_zero_cards_has_no_devices() {
        assert!(GpuShareNode::of(&capacity("3000", "0"), &StringMap::new()).is_none());
    }

    #[test]
    fn memory_goes_to_the_lowest_card_with_room() {
        let mut n = GpuShareNode::of(&capacity("2000", "2"), &StringMap::new()).unwrap();
        assert_eq!(n.allocate(TaskId(0), memory(600), "n"), Ok(vec![0]));
        assert_eq!(n.allocate(TaskId(1), memory(600), "n"), Ok(vec![1]));
        assert_eq!(n.allocate(TaskId(2), memory(400), "n"), Ok(vec![0]));
        assert!(n.filter(memory(500), true, false, "n").is_err());
        n.remove(TaskId(1));
        assert!(n.filter(memory(500), true, false, "n").is_ok());
    }

    #[test]
    fn number_takes_only_idle_cards() {
        let mut n = GpuShareNode::of(&capacity("2000", "2"), &StringMap::new()).unwrap();
        n.allocate(TaskId(0), memory(1), "n").unwrap();
        let two = GpuShareRequest {
            memory: 0,
            number: 2,
        };
        assert_eq!(
            n.filter(two, false, true, "n"),
            Err("GpuNumber no enough gpu number on node n".into())
        );
        let one = GpuShareRequest { number: 1, ..two };
        assert_eq!(n.allocate(TaskId(1), one, "n"), Ok(vec![1]));
    }
}
