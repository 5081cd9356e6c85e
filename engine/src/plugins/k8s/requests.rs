//! A pod's requests as kube-scheduler computes them (`resourcehelper.PodRequests`), in kube
//! units: cpu in millicores, memory in bytes, every other resource in whole units.
//!
//! These are not Volcano's `Resreq` (scalars in milli-units, `pods: 1`): the kube scorers
//! compare them with the node's kube allocatable. Each container's quantity is rounded to its
//! unit before summing, where kube sums exact quantities first; the two differ only for requests
//! finer than a millicore or a byte.

use std::collections::BTreeMap;

use smallvec::SmallVec;

use crate::api::{Container, Pod, ResourceList};
use crate::model::{Dim, Quantity, Resource, ResourceName};

/// Amount per resource name, in kube units.
pub type Amounts = BTreeMap<String, i64>;

/// Default cpu request (millicores) of a container that names none, for the non-zero variant.
pub const DEFAULT_MILLI_CPU: i64 = 100;
/// Default memory request (bytes, 200Mi) of a container that names none.
pub const DEFAULT_MEMORY: i64 = 200 * 1024 * 1024;

fn amount(name: &str, q: &Quantity) -> i64 {
    if name == "cpu" {
        q.milli_value()
    } else {
        q.value()
    }
}

fn add(into: &mut Amounts, from: &Amounts) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

fn max(into: &mut Amounts, from: &Amounts) {
    for (k, v) in from {
        let e = into.entry(k.clone()).or_insert(*v);
        *e = (*e).max(*v);
    }
}

fn amounts(list: &ResourceList) -> Amounts {
    list.iter()
        .map(|(k, q)| (k.clone(), amount(k, q)))
        .collect()
}

/// One container's requests; with `non_zero`, a missing cpu or memory key gets the default.
fn container_requests(c: &Container, non_zero: bool) -> Amounts {
    let mut r = amounts(&c.resources.requests);
    if non_zero {
        r.entry("cpu".into()).or_insert(DEFAULT_MILLI_CPU);
        r.entry("memory".into()).or_insert(DEFAULT_MEMORY);
    }
    r
}

/// `PodRequests`: containers, plus restartable init containers, at least every init container's
/// peak (with the sidecars started before it), plus overhead.
pub fn pod_requests(pod: &Pod, non_zero: bool) -> Amounts {
    let mut reqs = Amounts::new();
    for c in &pod.spec.containers {
        add(&mut reqs, &container_requests(c, non_zero));
    }
    let mut sidecars = Amounts::new();
    let mut init_peak = Amounts::new();
    for ic in &pod.spec.init_containers {
        let r = container_requests(ic, non_zero);
        let candidate = if ic.restart_policy.as_deref() == Some("Always") {
            add(&mut reqs, &r);
            add(&mut sidecars, &r);
            sidecars.clone()
        } else {
            let mut tmp = r;
            add(&mut tmp, &sidecars);
            tmp
        };
        max(&mut init_peak, &candidate);
    }
    max(&mut reqs, &init_peak);
    add(&mut reqs, &amounts(&pod.spec.overhead));
    reqs
}

/// Amounts by interned resource name. Up to three (cpu, memory and one device) are kept inline:
/// session open sums the pods of every changed node, and a separate allocation per pod was a
/// third of those reads' cache misses.
pub type NamedAmounts = SmallVec<[(&'static str, i64); 3]>;

/// `PodInfo.CalculateResource`: real requests plus the non-zero cpu and memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodResource {
    /// Real requests by resource name (names interned: every pod of the cluster keeps one).
    pub requested: NamedAmounts,
    pub non0_cpu: i64,
    pub non0_mem: i64,
}

impl PodResource {
    /// Computes both variants for `pod`.
    pub fn of(pod: &Pod) -> PodResource {
        let non0 = pod_requests(pod, true);
        PodResource {
            requested: pod_requests(pod, false)
                .into_iter()
                .map(|(name, v)| (Dim::of(&name).name(), v))
                .collect(),
            non0_cpu: non0.get("cpu").copied().unwrap_or(0),
            non0_mem: non0.get("memory").copied().unwrap_or(0),
        }
    }

    /// The real request of `name` (0 when absent).
    pub fn get(&self, name: &str) -> i64 {
        self.requested
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, v)| *v)
    }
}

/// A node's allocatable in kube units, from Volcano's resource (scalars are milli-units there,
/// so they are rounded up to whole units as `Quantity.Value()` would). `None`: not on the node.
pub fn allocatable(res: &Resource, name: &str) -> Option<i64> {
    match ResourceName::of(name) {
        ResourceName::Cpu => Some(res.milli_cpu as i64),
        ResourceName::Memory => Some(res.memory as i64),
        ResourceName::Scalar(d) => res.scalar(d).map(|milli| (milli / 1000.0).ceil() as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn containers_lacking_cpu_or_memory_get_defaults_in_the_non_zero_variant() {
        let p = pod("spec:\n  containers:\n  - resources: {requests: {cpu: 250m}}\n  - {}\n");
        let r = PodResource::of(&p);
        assert_eq!(r.get("cpu"), 250);
        assert_eq!(r.get("memory"), 0);
        assert_eq!(r.non0_cpu, 350);
        assert_eq!(r.non0_mem, 2 * DEFAULT_MEMORY);
    }

    #[test]
    fn explicit_zero_is_kept_in_the_non_zero_variant() {
        let p = pod("spec:\n  containers:\n  - resources: {requests: {cpu: '0', memory: '0'}}\n");
        let r = PodResource::of(&p);
        assert_eq!((r.non0_cpu, r.non0_mem), (0, 0));
    }

    #[test]
    fn init_containers_raise_the_request_to_their_peak_with_sidecars_added() {
        let p = pod(concat!(
            "spec:\n",
            "  containers:\n  - resources: {requests: {cpu: '1'}}\n",
            "  initContainers:\n",
            "  - restartPolicy: Always\n    resources: {requests: {cpu: 500m}}\n",
            "  - resources: {requests: {cpu: '2', nvidia.com/gpu: '1'}}\n",
            "  overhead: {cpu: 100m}\n",
        ));
        let r = pod_requests(&p, false);
        assert_eq!(r["cpu"], 2600, "max(1 + 0.5, 2 + 0.5) + overhead");
        assert_eq!(r["nvidia.com/gpu"], 1);
    }

    #[test]
    fn scalar_allocatable_is_in_whole_units() {
        let mut res = Resource::cpu_mem(2000.0, 1024.0);
        res.set_scalar(crate::model::Dim::of("nvidia.com/gpu"), 4000.0);
        assert_eq!(allocatable(&res, "cpu"), Some(2000));
        assert_eq!(allocatable(&res, "nvidia.com/gpu"), Some(4));
        assert_eq!(allocatable(&res, "example.com/foo"), None);
    }
}
