//! The `predicates` plugin's arguments: which kube filters run, and the stable-filter cache.
//!
//! The volume filters (`NodeVolumeLimits`, `VolumeZone`, `VolumeBinding`) are accepted but have
//! nothing to run on: tephra models no volumes, PVCs or CSI nodes, and for a pod without volumes
//! kube's PreFilters of all three answer Skip, so they never change an outcome.

use crate::config::{ArgumentError, Arguments};

/// Parsed arguments; every filter is on by default, the cache off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PredicateArgs {
    pub node_affinity: bool,
    pub node_ports: bool,
    pub taint_toleration: bool,
    pub pod_affinity: bool,
    pub pod_topology_spread: bool,
    pub cache: bool,
}

const VOLUME_KEYS: [&str; 3] = [
    "predicate.NodeVolumeLimitsEnable",
    "predicate.VolumeZoneEnable",
    "predicate.VolumeBindingEnable",
];

impl PredicateArgs {
    /// Reads the `predicate.*Enable` switches; a non-boolean value is refused.
    pub fn parse(args: &Arguments) -> Result<PredicateArgs, ArgumentError> {
        let flag = |key: &str, default: bool| args.bool(key).map(|v| v.unwrap_or(default));
        for key in VOLUME_KEYS {
            flag(key, true)?;
        }
        Ok(PredicateArgs {
            node_affinity: flag("predicate.NodeAffinityEnable", true)?,
            node_ports: flag("predicate.NodePortsEnable", true)?,
            taint_toleration: flag("predicate.TaintTolerationEnable", true)?,
            pod_affinity: flag("predicate.PodAffinityEnable", true)?,
            pod_topology_spread: flag("predicate.PodTopologySpreadEnable", true)?,
            cache: flag("predicate.CacheEnable", false)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(yaml: &str) -> Arguments {
        Arguments(serde_saphyr::from_str(yaml).unwrap())
    }

    #[test]
    fn filters_default_on_and_cache_off() {
        let a = PredicateArgs::parse(&args("{}")).unwrap();
        assert!(
            a.node_affinity
                && a.node_ports
                && a.taint_toleration
                && a.pod_affinity
                && a.pod_topology_spread
        );
        assert!(!a.cache);
    }

    #[test]
    fn switches_are_read_and_bad_values_refused() {
        let a = PredicateArgs::parse(&args(
            "predicate.NodePortsEnable: false\npredicate.CacheEnable: 'true'\n",
        ))
        .unwrap();
        assert!(!a.node_ports && a.cache);
        let e = PredicateArgs::parse(&args("predicate.VolumeZoneEnable: maybe\n")).unwrap_err();
        assert_eq!(e.key, "predicate.VolumeZoneEnable");
    }
}
