//! Whether a pod is in the Guaranteed QoS class, the only class whose containers may own CPUs
//! (kube's `v1qos.GetPodQOS`, as Volcano: pkg/scheduler/plugins/numaaware/numaaware.go asks it).

use crate::api::{Container, Pod, ResourceList};

const COMPUTE: [&str; 2] = ["cpu", "memory"];

/// A positive amount of `name` in `list`, in milli-units; 0 otherwise.
fn positive(list: &ResourceList, name: &str) -> i64 {
    list.get(name).map_or(0, |q| q.milli_value()).max(0)
}

/// True when every container (init containers included) sets CPU and memory limits, and the
/// summed positive requests equal the summed positive limits, name by name.
pub fn is_guaranteed(pod: &Pod) -> bool {
    let containers: Vec<&Container> = pod
        .spec
        .containers
        .iter()
        .chain(&pod.spec.init_containers)
        .collect();
    let total = |name: &str, limits: bool| -> i64 {
        containers
            .iter()
            .map(|c| {
                let r = &c.resources;
                positive(if limits { &r.limits } else { &r.requests }, name)
            })
            .sum()
    };
    let requests = COMPUTE.map(|n| total(n, false));
    let limits = COMPUTE.map(|n| total(n, true));
    if requests.iter().chain(&limits).all(|&v| v == 0) {
        return false;
    }
    let every_container_limits_both = containers
        .iter()
        .all(|c| COMPUTE.iter().all(|n| positive(&c.resources.limits, n) > 0));
    // Every requested name is limited at the same amount, and as many names are limited as
    // requested.
    every_container_limits_both
        && requests
            .iter()
            .zip(&limits)
            .all(|(&r, &l)| r == 0 || r == l)
        && requests.iter().filter(|&&r| r > 0).count() == limits.iter().filter(|&&l| l > 0).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(resources: &str) -> Pod {
        serde_saphyr::from_str(&format!(
            "spec: {{containers: [{{name: c, resources: {resources}}}]}}"
        ))
        .unwrap()
    }

    #[test]
    fn equal_cpu_and_memory_requests_and_limits_are_guaranteed() {
        let both = "{requests: {cpu: '2', memory: 1Gi}, limits: {cpu: '2', memory: 1Gi}}";
        assert!(is_guaranteed(&pod(both)));
        let lower = "{requests: {cpu: '1', memory: 1Gi}, limits: {cpu: '2', memory: 1Gi}}";
        assert!(!is_guaranteed(&pod(lower)));
        assert!(
            !is_guaranteed(&pod("{limits: {cpu: '2'}}")),
            "no memory limit"
        );
        assert!(!is_guaranteed(&pod("{}")), "best effort");
    }
}
