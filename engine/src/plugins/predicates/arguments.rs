//! The `predicates` plugin's arguments: which kube filters run, the stable-filter cache, and
//! how long a bind waits for its volumes. Every filter is on unless switched off, as Volcano's
//! `predicateEnable` defaults them (Volcano: pkg/scheduler/plugins/predicates/predicates.go,
//! New; the volume binding arguments: predicates/helper.go, setUpVolumeBindingArgs).

use std::time::Duration;

use crate::config::{ArgumentError, Arguments};

/// Parsed arguments; every filter is on by default, the cache off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PredicateArgs {
    pub node_affinity: bool,
    pub node_ports: bool,
    pub taint_toleration: bool,
    pub pod_affinity: bool,
    pub pod_topology_spread: bool,
    pub node_volume_limits: bool,
    pub volume_zone: bool,
    pub volume_binding: bool,
    pub cache: bool,
    /// `volumebinding.bindTimeoutSeconds`, 600 by default; a negative value waits no time.
    pub bind_timeout: Duration,
}

impl PredicateArgs {
    /// Reads the `predicate.*Enable` switches; a non-boolean value is refused.
    pub fn parse(args: &Arguments) -> Result<PredicateArgs, ArgumentError> {
        let flag = |key: &str, default: bool| args.bool(key).map(|v| v.unwrap_or(default));
        Ok(PredicateArgs {
            node_affinity: flag("predicate.NodeAffinityEnable", true)?,
            node_ports: flag("predicate.NodePortsEnable", true)?,
            taint_toleration: flag("predicate.TaintTolerationEnable", true)?,
            pod_affinity: flag("predicate.PodAffinityEnable", true)?,
            pod_topology_spread: flag("predicate.PodTopologySpreadEnable", true)?,
            node_volume_limits: flag("predicate.NodeVolumeLimitsEnable", true)?,
            volume_zone: flag("predicate.VolumeZoneEnable", true)?,
            volume_binding: flag("predicate.VolumeBindingEnable", true)?,
            cache: flag("predicate.CacheEnable", false)?,
            bind_timeout: Duration::from_secs(
                args.int("volumebinding.bindTimeoutSeconds")?
                    .unwrap_or(600)
                    .max(0) as u64,
            ),
        })
    }

    /// True when some volume filter runs (a pod's claims then matter).
    pub fn volumes(&self) -> bool {
        self.node_volume_limits || self.volume_zone || self.volume_binding
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
                && a.node_volume_limits
                && a.volume_zone
                && a.volume_binding
        );
        assert!(!a.cache);
        assert_eq!(a.bind_timeout, Duration::from_secs(600));
    }

    #[test]
    fn the_volume_bind_timeout_is_read_in_seconds() {
        let a = PredicateArgs::parse(&args("volumebinding.bindTimeoutSeconds: 30\n")).unwrap();
        assert_eq!(a.bind_timeout, Duration::from_secs(30));
        let e =
            PredicateArgs::parse(&args("volumebinding.bindTimeoutSeconds: soon\n")).unwrap_err();
        assert_eq!(e.key, "volumebinding.bindTimeoutSeconds");
    }

    #[test]
    fn switches_are_read_and_bad_values_refused() {
        let a = PredicateArgs::parse(&args(
            "predicate.NodePortsEnable: false\npredicate.CacheEnable: 'true'\n",
        ))
        .unwrap();
        assert!(!a.node_ports && a.cache);
        let a = PredicateArgs::parse(&args("predicate.VolumeBindingEnable: false\n")).unwrap();
        assert!(!a.volume_binding && a.volume_zone && a.volumes());
        let e = PredicateArgs::parse(&args("predicate.VolumeZoneEnable: maybe\n")).unwrap_err();
        assert_eq!(e.key, "predicate.VolumeZoneEnable");
    }
}
