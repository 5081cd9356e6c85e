//! What the API server does to an object before any scheduler sees it, done offline so a
//! manifest behaves as it would in a cluster: values it would refuse are refused (negative
//! quantities, requests above limits, a negative `minMember`, a queue weight outside its CRD's
//! range), and container requests are defaulted from limits.
//!
//! Kubernetes: pkg/apis/core/v1/defaults.go, SetDefaults_Pod (requests from limits);
//! pkg/apis/core/validation/validation.go, ValidateResourceRequirements. Volcano:
//! config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml and _podgroups.yaml (the
//! `minimum` and `maximum` of `weight` and `minMember`).

use tephra_engine::api::{ClusterObject, Container, Node, Pod, PodGroup, Queue, ResourceList};

/// A refused field and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub field: String,
    pub message: String,
}

fn refuse(field: String, message: String) -> Refusal {
    Refusal { field, message }
}

/// The Queue CRD's bounds of `spec.weight`.
const QUEUE_WEIGHT_MAX: i32 = 65_535;

/// Checks `object` as the API server would and applies its defaults.
pub fn admit(object: &mut ClusterObject) -> Result<(), Refusal> {
    match object {
        ClusterObject::Pod(pod) => admit_pod(pod),
        ClusterObject::Node(node) => admit_node(node),
        ClusterObject::PodGroup(pg) => admit_pod_group(pg),
        ClusterObject::Queue(queue) => admit_queue(queue),
        _ => Ok(()),
    }
}

fn non_negative(list: &ResourceList, path: &str) -> Result<(), Refusal> {
    match list.iter().find(|(_, q)| q.is_negative()) {
        Some((name, q)) => Err(refuse(
            format!("{path}.{name}"),
            format!("must not be negative: {q} (the API server refuses it)"),
        )),
        None => Ok(()),
    }
}

fn admit_pod(pod: &mut Pod) -> Result<(), Refusal> {
    let spec = &mut pod.spec;
    for (list, containers) in [
        ("spec.containers", &mut spec.containers),
        ("spec.initContainers", &mut spec.init_containers),
    ] {
        for (i, c) in containers.iter_mut().enumerate() {
            admit_container(c, &format!("{list}[{i}].resources"))?;
        }
    }
    non_negative(&spec.overhead, "spec.overhead")
}

/// Refuses negative or inconsistent quantities, then defaults every request that is not given
/// to its limit.
fn admit_container(c: &mut Container, path: &str) -> Result<(), Refusal> {
    let r = &mut c.resources;
    non_negative(&r.requests, &format!("{path}.requests"))?;
    non_negative(&r.limits, &format!("{path}.limits"))?;
    for (name, request) in r.requests.iter() {
        if let Some(limit) = r.limits.get(name)
            && request.milli_value() > limit.milli_value()
        {
            return Err(refuse(
                format!("{path}.requests.{name}"),
                format!("{request} is above the limit {limit} (the API server refuses it)"),
            ));
        }
    }
    let missing: Vec<_> = r
        .limits
        .iter()
        .filter(|(name, _)| !r.requests.contains_key(name))
        .map(|(name, q)| (name.clone(), q.clone()))
        .collect();
    for (name, q) in missing {
        r.requests.insert(name, q);
    }
    Ok(())
}

fn admit_node(node: &Node) -> Result<(), Refusal> {
    non_negative(&node.status.capacity, "status.capacity")?;
    non_negative(&node.status.allocatable, "status.allocatable")
}

fn admit_pod_group(pg: &PodGroup) -> Result<(), Refusal> {
    let spec = &pg.spec;
    if spec.min_member < 0 {
        return Err(refuse(
            "spec.minMember".into(),
            format!(
                "must not be negative: {} (the PodGroup CRD's minimum is 0)",
                spec.min_member
            ),
        ));
    }
    if let Some((task, n)) = spec.min_task_member.iter().find(|(_, n)| **n < 0) {
        return Err(refuse(
            format!("spec.minTaskMember.{task}"),
            format!("must not be negative: {n}"),
        ));
    }
    match &spec.min_resources {
        Some(list) => non_negative(list, "spec.minResources"),
        None => Ok(()),
    }
}

fn admit_queue(queue: &Queue) -> Result<(), Refusal> {
    let spec = &queue.spec;
    if !(0..=QUEUE_WEIGHT_MAX).contains(&spec.weight) {
        return Err(refuse(
            "spec.weight".into(),
            format!(
                "{} is outside 1 to {QUEUE_WEIGHT_MAX} (the Queue CRD's range)",
                spec.weight
            ),
        ));
    }
    non_negative(&spec.capability, "spec.capability")?;
    non_negative(&spec.deserved, "spec.deserved")?;
    non_negative(&spec.guarantee.resource, "spec.guarantee.resource")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::harness::Harness;

    fn pod(yaml: &str) -> ClusterObject {
        ClusterObject::Pod(Box::new(Harness::parse(yaml)))
    }

    fn refusal(mut object: ClusterObject) -> String {
        let r = admit(&mut object).unwrap_err();
        format!("{}: {}", r.field, r.message)
    }

    #[test]
    fn a_negative_pod_request_is_refused_by_field() {
        let p =
            pod("spec: {containers: [{name: c, resources: {requests: {cpu: '1', memory: -1Gi}}}]}");
        assert_eq!(
            refusal(p),
            "spec.containers[0].resources.requests.memory: must not be negative: -1Gi (the API server refuses it)"
        );
    }

    #[test]
    fn a_negative_node_capacity_is_refused_by_field() {
        let n: Node = Harness::parse("status: {allocatable: {cpu: '-4'}}");
        assert_eq!(
            refusal(ClusterObject::Node(Box::new(n))),
            "status.allocatable.cpu: must not be negative: -4 (the API server refuses it)"
        );
    }

    #[test]
    fn a_request_above_its_limit_is_refused() {
        let p = pod(
            "spec: {initContainers: [{name: i, resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}}]}",
        );
        assert_eq!(
            refusal(p),
            "spec.initContainers[0].resources.requests.cpu: 2 is above the limit 1 (the API server refuses it)"
        );
    }

    #[test]
    fn requests_default_to_limits_as_the_api_server_does() {
        let mut p = pod(
            "spec: {containers: [{name: c, resources: {requests: {cpu: 500m}, limits: {cpu: '1', memory: 1Gi}}}]}",
        );
        admit(&mut p).unwrap();
        let ClusterObject::Pod(p) = p else {
            unreachable!("built as a pod")
        };
        let requests = &p.spec.containers[0].resources.requests;
        assert_eq!(requests.get("cpu").map(|q| q.milli_value()), Some(500));
        assert_eq!(
            requests.get("memory").map(|q| q.value()),
            Some(1 << 30),
            "memory had only a limit"
        );
    }

    #[test]
    fn a_negative_min_member_is_refused() {
        let pg: PodGroup = Harness::parse("spec: {minMember: -5}");
        assert_eq!(
            refusal(ClusterObject::PodGroup(Box::new(pg))),
            "spec.minMember: must not be negative: -5 (the PodGroup CRD's minimum is 0)"
        );
    }

    #[test]
    fn a_queue_weight_outside_the_crd_range_is_refused() {
        for w in [-1, 70_000] {
            let q: Queue = Harness::parse(&format!("spec: {{weight: {w}}}"));
            assert_eq!(
                refusal(ClusterObject::Queue(Box::new(q))),
                format!("spec.weight: {w} is outside 1 to 65535 (the Queue CRD's range)")
            );
        }
        let q: Queue = Harness::parse("spec: {capability: {cpu: '-1'}}");
        assert!(refusal(ClusterObject::Queue(Box::new(q))).starts_with("spec.capability.cpu"));
    }

    #[test]
    fn valid_objects_pass_unchanged() {
        let mut p = pod("spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}");
        let before = format!("{p:?}");
        admit(&mut p).unwrap();
        assert_eq!(format!("{p:?}"), before);
    }
}
