//! NodePorts: a pod's host ports must be free on the node. An empty host IP means all
//! addresses (`0.0.0.0`) and an empty protocol means TCP.

use std::collections::BTreeSet;

use crate::api::Pod;
use crate::framework::{Status, StatusCode};

/// kube's reason for a host-port clash.
pub const REASON: &str = "node(s) didn't have free ports for the requested pod ports";

const ALL_ADDRESSES: &str = "0.0.0.0";

/// One sanitised `(hostIP, protocol, hostPort)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct HostPort {
    pub ip: String,
    pub protocol: String,
    pub port: i32,
}

/// `GetHostPorts`: host ports of the containers and of the restartable init containers.
pub fn host_ports(pod: &Pod) -> Vec<HostPort> {
    let sidecars = pod
        .spec
        .init_containers
        .iter()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"));
    sidecars
        .chain(&pod.spec.containers)
        .flat_map(|c| &c.ports)
        .filter(|p| p.host_port > 0)
        .map(|p| HostPort {
            ip: if p.host_ip.is_empty() {
                ALL_ADDRESSES.into()
            } else {
                p.host_ip.clone()
            },
            protocol: if p.protocol.is_empty() {
                "TCP".into()
            } else {
                p.protocol.clone()
            },
            port: p.host_port,
        })
        .collect()
}

/// PreFilter: the wanted ports, `None` (Skip) when there are none.
pub fn pre_filter(pod: &Pod) -> Option<Vec<HostPort>> {
    let ports = host_ports(pod);
    (!ports.is_empty()).then_some(ports)
}

/// `HostPortInfo.CheckConflict`: an all-addresses port clashes with any address, a specific
/// address with itself and with all-addresses.
fn conflicts(want: &HostPort, used: &BTreeSet<HostPort>) -> bool {
    used.iter().any(|u| {
        u.protocol == want.protocol
            && u.port == want.port
            && (want.ip == ALL_ADDRESSES || u.ip == ALL_ADDRESSES || u.ip == want.ip)
    })
}

/// Filter: Unschedulable when a wanted port is taken on the node.
pub fn filter(wanted: &[HostPort], used: &BTreeSet<HostPort>) -> Result<(), Status> {
    if wanted.iter().any(|w| conflicts(w, used)) {
        Err(Status {
            code: StatusCode::Unschedulable,
            reason: REASON.into(),
        })
    } else {
        Ok(())
    }
}

/// The node's used ports (`NodeInfo.UsedPorts`) from the pods on it.
pub fn used_ports<'a>(pods: impl Iterator<Item = &'a Pod>) -> BTreeSet<HostPort> {
    pods.flat_map(host_ports).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_saphyr::from_str(yaml).unwrap()
    }

    fn port(ip: &str, protocol: &str, port: i32) -> HostPort {
        HostPort {
            ip: ip.into(),
            protocol: protocol.into(),
            port,
        }
    }

    #[test]
    fn host_ports_are_sanitised_and_include_sidecars_only() {
        let p = pod(concat!(
            "spec:\n",
            "  containers: [{ports: [{containerPort: 80, hostPort: 8080}, {containerPort: 81}]}]\n",
            "  initContainers:\n",
            "  - {restartPolicy: Always, ports: [{hostPort: 9000, hostIP: 10.0.0.1, protocol: UDP}]}\n",
            "  - {ports: [{hostPort: 9001}]}\n",
        ));
        assert_eq!(
            host_ports(&p),
            vec![port("10.0.0.1", "UDP", 9000), port("0.0.0.0", "TCP", 8080)]
        );
        assert!(pre_filter(&pod("{}")).is_none());
    }

    #[test]
    fn all_addresses_clash_with_any_address_on_the_same_protocol_and_port() {
        let used = BTreeSet::from([port("10.0.0.1", "TCP", 80)]);
        let err = filter(&[port("0.0.0.0", "TCP", 80)], &used).unwrap_err();
        assert_eq!(err.code, StatusCode::Unschedulable);
        assert_eq!(
            err.reason,
            "node(s) didn't have free ports for the requested pod ports"
        );
        assert!(filter(&[port("0.0.0.0", "UDP", 80)], &used).is_ok());
        assert!(filter(&[port("10.0.0.2", "TCP", 80)], &used).is_ok());
        assert!(filter(&[port("10.0.0.1", "TCP", 80)], &used).is_err());
        let any = BTreeSet::from([port("0.0.0.0", "TCP", 80)]);
        assert!(filter(&[port("10.0.0.2", "TCP", 80)], &any).is_err());
    }
}
