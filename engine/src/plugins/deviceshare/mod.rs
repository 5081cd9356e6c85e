//! `deviceshare` (Volcano: pkg/scheduler/plugins/deviceshare/deviceshare.go): GPUs shared by
//! memory or given whole (`gpushare`), HAMi-style vGPUs (`vgpu`) with Volcano's exclusivity
//! rules (gpuexclusive.go). The predicate checks a pod's device ask against the node's cards,
//! the score follows `deviceshare.SchedulePolicy` times `deviceshare.ScheduleWeight`, and the
//! cards a placement takes are held for the session and left at close as the annotations of
//! the pod's bind, which the device plugin on the node reads. Volcano takes and gives back the
//! cards in the predicates plugin's event handlers; here the plugin that owns the devices does,
//! and only when `predicates` is in the tiers, as in Volcano.
//!
//! Each node's cards are built at session open from the node table's capacity (shared GPUs,
//! `gpushare`) or allocatable (vGPUs, `vgpu`), its annotations and the pods on it. A bind carries
//! the pod's device annotations (`Bind::annotations`) and, with `deviceshare.NodeLockEnable`, the
//! node lock to take first (`Bind::node_lock`); the kube adapter sends both
//! (`adapters/kube/src/writes/bind.rs`, `adapters/kube/src/writes/node_lock.rs`), and the cache
//! assumes the annotations onto the pod.

pub mod arguments;
pub mod gpushare;
pub mod vgpu;

use std::collections::{BTreeMap, HashMap};

use arguments::{DeviceShareArgs, matching_rules};
use gpushare::{GpuShareNode, GpuShareRequest};
use vgpu::{PodAsk, VgpuNode};

use crate::config::{ArgumentError, Arguments};
use crate::framework::{FitError, Plugin, SessionState, StatusCode};
use crate::model::{NodeId, TaskId};

/// The plugin: its arguments, every node's cards as the session changes them, and what each
/// placed task's bind carries.
pub struct DeviceShare {
    args: DeviceShareArgs,
    nodes: Vec<NodeDevices>,
    placed: HashMap<TaskId, BindWork>,
    /// `predicates` is in the tiers: its event handlers are where Volcano takes the cards.
    takes_cards: bool,
}

/// What a placed task's bind carries: the pod's device annotations and, with
/// `deviceshare.NodeLockEnable`, the node lock to take first (Volcano takes it while allocating,
/// through the API; the engine does no I/O, so the adapter takes it before the bind).
#[derive(Default)]
struct BindWork {
    annotations: BTreeMap<String, String>,
    node_lock: Option<&'static str>,
}

/// The devices Volcano registers on one node (`NodeInfo.Others`), each when enabled and present.
#[derive(Default)]
struct NodeDevices {
    gpushare: Option<GpuShareNode>,
    vgpu: Option<VgpuNode>,
}

/// Builds the plugin; refuses the combinations Volcano stops on.
pub fn build(args: &Arguments) -> Result<Box<dyn Plugin>, ArgumentError> {
    Ok(Box::new(DeviceShare {
        args: DeviceShareArgs::parse(args)?,
        nodes: Vec::new(),
        placed: HashMap::new(),
        takes_cards: false,
    }))
}

impl DeviceShare {
    /// The pod's gpushare ask when that device kind is on and the pod makes one (Volcano:
    /// gpushare/device_info.go, HasDeviceRequest).
    fn gpushare_ask(&self, ssn: &SessionState, task: TaskId) -> Option<GpuShareRequest> {
        let request = GpuShareRequest::of(&ssn.snap.tasks.pod[task.idx()]);
        let asks = (self.args.gpu_sharing && request.memory > 0)
            || (self.args.gpu_number && request.number > 0);
        asks.then_some(request)
    }

    /// Whether the pod asks for vGPUs with vGPU on (Volcano: vgpu/device_info.go,
    /// HasDeviceRequest).
    fn asks_vgpu(&self, ssn: &SessionState, task: TaskId) -> bool {
        self.args.vgpu && vgpu::requests_vgpu(&ssn.snap.tasks.pod[task.idx()])
    }

    fn rules_of(&self, ssn: &SessionState, task: TaskId) -> Vec<usize> {
        let labels = &ssn.snap.tasks.pod[task.idx()].metadata.labels;
        matching_rules(&self.args.exclusive_rules, labels)
    }

    /// Where the task's vGPU containers would go on `node`, if it asks for vGPUs there.
    fn vgpu_placement(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<vgpu::Placement, String>> {
        let devices = self.nodes.get(node.idx())?.vgpu.as_ref()?;
        if !self.asks_vgpu(ssn, task) {
            return None;
        }
        let pod = &ssn.snap.tasks.pod[task.idx()];
        let requests = vgpu::container_requests(pod);
        if requests.is_empty() {
            return None;
        }
        let rules = self.rules_of(ssn, task);
        let ask = PodAsk {
            pod,
            requests: &requests,
            rules: &rules,
        };
        Some(devices.place(&ask, self.args.schedule_policy))
    }
}

impl Plugin for DeviceShare {
    fn name(&self) -> &str {
        "deviceshare"
    }

    /// Builds every node's cards and accounts the pods already on it.
    fn on_session_open(&mut self, ssn: &SessionState) {
        let nodes = &ssn.snap.nodes;
        self.placed.clear();
        self.takes_cards = ssn
            .config
            .tiers
            .iter()
            .any(|tier| tier.plugins.iter().any(|p| p.name == "predicates"));
        self.nodes = (0..nodes.name.len())
            .map(|n| {
                let annotations = &nodes.annotations[n];
                let mut devices = NodeDevices {
                    gpushare: (self.args.gpu_sharing || self.args.gpu_number)
                        .then(|| GpuShareNode::of(&nodes.capacity[n], annotations))
                        .flatten(),
                    vgpu: self
                        .args
                        .vgpu
                        .then(|| VgpuNode::of(&nodes.name[n], &nodes.allocatable[n], annotations))
                        .flatten(),
                };
                if devices.gpushare.is_none() && devices.vgpu.is_none() {
                    return devices;
                }
                for &t in &ssn.nodes.tasks.as_slice()[n] {
                    let pod = &ssn.snap.tasks.pod[t.idx()];
                    if let Some(g) = &mut devices.gpushare {
                        g.add_placed(t, pod);
                    }
                    if let Some(v) = &mut devices.vgpu {
                        v.add_placed(t, pod, self.rules_of(ssn, t));
                    }
                }
                devices
            })
            .collect();
    }

    /// A task without a device ask passes whatever the session does; one with an ask depends
    /// on pod annotations and labels the node-search signature does not hold.
    fn node_local(&self, ssn: &SessionState, task: TaskId) -> bool {
        self.gpushare_ask(ssn, task).is_none() && !self.asks_vgpu(ssn, task)
    }

    fn predicate(&self, ssn: &SessionState, task: TaskId, node: NodeId) -> Result<(), FitError> {
        let unschedulable = |reason: String| FitError::new(StatusCode::Unschedulable, reason);
        let name = &ssn.snap.nodes.name[node.idx()];
        if let (Some(devices), Some(request)) = (
            self.nodes.get(node.idx()).and_then(|d| d.gpushare.as_ref()),
            self.gpushare_ask(ssn, task),
        ) {
            devices
                .filter(request, self.args.gpu_sharing, self.args.gpu_number, name)
                .map_err(unschedulable)?;
        }
        if let Some(Err(_)) = self.vgpu_placement(ssn, task, node) {
            return Err(unschedulable("hami-vgpuDeviceSharing error".into()));
        }
        Ok(())
    }

    /// The vGPU cards' score, rounded, times the weight; 0 without a positive weight (gpushare
    /// scores every node 0).
    fn node_order(
        &self,
        ssn: &SessionState,
        task: TaskId,
        node: NodeId,
    ) -> Option<Result<f64, String>> {
        if self.args.schedule_weight <= 0 {
            return Some(Ok(0.0));
        }
        let score = match self.vgpu_placement(ssn, task, node) {
            Some(Ok(p)) => p.score,
            _ => 0.0,
        };
        Some(Ok((score + 0.5).floor() * self.args.schedule_weight as f64))
    }

    /// Takes the task's cards on its node and keeps the annotations for its bind (with
    /// `predicates` in the tiers).
    fn on_allocate(&mut self, ssn: &SessionState, task: TaskId) -> Result<(), String> {
        let Some(node) = ssn.tasks.node[task].filter(|_| self.takes_cards) else {
            return Ok(());
        };
        let now = ssn.options.now.0;
        let name = ssn.snap.nodes.name[node.idx()].clone();
        let mut work = BindWork::default();
        let gpushare_ask = self.gpushare_ask(ssn, task);
        let vgpu_placement = self.vgpu_placement(ssn, task, node).transpose()?;
        let rules = self.rules_of(ssn, task);
        let Some(devices) = self.nodes.get_mut(node.idx()) else {
            return Ok(());
        };
        if let (Some(g), Some(request)) = (&mut devices.gpushare, gpushare_ask) {
            let ids = g.allocate(task, request, &name)?;
            if !ids.is_empty() {
                work.annotations
                    .extend(gpushare::annotations(&ids, now * 1_000_000_000));
            }
            if request.memory > 0 && self.args.node_lock {
                work.node_lock = Some(gpushare::NODE_LOCK);
            }
        }
        if let (Some(v), Some(placement)) = (&mut devices.vgpu, vgpu_placement) {
            let pod = &ssn.snap.tasks.pod[task.idx()];
            let requests = vgpu::container_requests(pod);
            let ask = PodAsk {
                pod,
                requests: &requests,
                rules: &rules,
            };
            work.annotations
                .extend(v.allocate(task, &ask, &placement, now));
            if self.args.node_lock {
                work.node_lock = Some(vgpu::NODE_LOCK);
            }
        }
        if !work.annotations.is_empty() || work.node_lock.is_some() {
            self.placed.insert(task, work);
        }
        Ok(())
    }

    /// Gives the task's cards back and drops its bind's annotations. gpushare frees the task
    /// wherever it is; vGPU frees what the pod's own annotation names, so the cards of a pod
    /// placed this session stay counted until the session ends, as in Volcano (Volcano:
    /// gpushare/device_info.go and vgpu/device_info.go, Release).
    fn on_deallocate(&mut self, ssn: &SessionState, task: TaskId) {
        self.placed.remove(&task);
        let Some(node) = ssn.tasks.node[task].filter(|_| self.takes_cards) else {
            return;
        };
        let Some(devices) = self.nodes.get_mut(node.idx()) else {
            return;
        };
        if let Some(g) = &mut devices.gpushare {
            g.remove(task);
        }
        if let Some(v) = &mut devices.vgpu {
            v.remove_placed(task, &ssn.snap.tasks.pod[task.idx()]);
        }
    }

    /// Leaves each placed task's annotations and node lock for its bind.
    fn on_session_close(&mut self, ssn: &mut SessionState) {
        for (task, work) in self.placed.drain() {
            ssn.bind_annotations
                .entry(task)
                .or_default()
                .extend(work.annotations);
            if let Some(lock) = work.node_lock {
                ssn.bind_node_locks.insert(task, lock);
            }
        }
    }
}

#[cfg(test)]
mod tests;
