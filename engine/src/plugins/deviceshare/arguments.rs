//! The plugin's arguments (Volcano: pkg/scheduler/plugins/deviceshare/deviceshare.go,
//! enablePredicate; gpuexclusive.go, loadGPUExclusiveConfig).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::StringMap;
use crate::config::{ArgumentError, Arguments};

pub const GPU_SHARING_ENABLE: &str = "deviceshare.GPUSharingEnable";
pub const GPU_NUMBER_ENABLE: &str = "deviceshare.GPUNumberEnable";
pub const VGPU_ENABLE: &str = "deviceshare.VGPUEnable";
pub const NODE_LOCK_ENABLE: &str = "deviceshare.NodeLockEnable";
pub const SCHEDULE_POLICY: &str = "deviceshare.SchedulePolicy";
pub const SCHEDULE_WEIGHT: &str = "deviceshare.ScheduleWeight";
pub const GPU_EXCLUSIVE_RULES: &str = "deviceshare.GPUExclusiveRules";

/// How vGPU cards are ordered and scored (`deviceshare.SchedulePolicy`); any other word is
/// Volcano's default branch: cards tried from the highest index down, every card scored 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedulePolicy {
    Binpack,
    Spread,
    Unset,
}

impl SchedulePolicy {
    fn parse(s: &str) -> SchedulePolicy {
        match s {
            "binpack" => SchedulePolicy::Binpack,
            "spread" => SchedulePolicy::Spread,
            _ => SchedulePolicy::Unset,
        }
    }
}

/// A set of pod labels: pods carrying all of them never share a vGPU card with each other.
pub type ExclusiveRule = BTreeMap<String, String>;

/// The arguments as Volcano reads them, with its defaults (everything off, weight 0). The
/// Ascend switches and the device ConfigMap's name and namespace
/// (`deviceshare.KnownGeometriesCMName`, `...Namespace`) are not read: Ascend devices are not
/// modelled, and the ConfigMap's defaults hold.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceShareArgs {
    pub gpu_sharing: bool,
    pub gpu_number: bool,
    pub vgpu: bool,
    /// Lock the node (a node annotation) before binding a pod to its cards.
    pub node_lock: bool,
    pub schedule_policy: SchedulePolicy,
    pub schedule_weight: i64,
    pub exclusive_rules: Vec<ExclusiveRule>,
}

impl DeviceShareArgs {
    /// Reads the arguments. Volcano stops the scheduler when GPU sharing and GPU number are both
    /// on, or either with vGPU; here that configuration is refused.
    pub fn parse(args: &Arguments) -> Result<DeviceShareArgs, ArgumentError> {
        let flag = |key: &str| args.bool(key).map(|v| v.unwrap_or(false));
        let parsed = DeviceShareArgs {
            gpu_sharing: flag(GPU_SHARING_ENABLE)?,
            gpu_number: flag(GPU_NUMBER_ENABLE)?,
            vgpu: flag(VGPU_ENABLE)?,
            node_lock: flag(NODE_LOCK_ENABLE)?,
            schedule_policy: SchedulePolicy::parse(
                &args.string(SCHEDULE_POLICY)?.unwrap_or_default(),
            ),
            schedule_weight: args.int(SCHEDULE_WEIGHT)?.unwrap_or(0),
            exclusive_rules: args.raw(GPU_EXCLUSIVE_RULES).map(rules).unwrap_or_default(),
        };
        let refuse = |key: &str, reason: &str| ArgumentError {
            key: key.into(),
            value: "true".into(),
            reason: reason.into(),
        };
        if parsed.gpu_sharing && parsed.gpu_number {
            return Err(refuse(
                GPU_NUMBER_ENABLE,
                "GPU sharing and GPU number cannot both be enabled",
            ));
        }
        if (parsed.gpu_sharing || parsed.gpu_number) && parsed.vgpu {
            return Err(refuse(
                VGPU_ENABLE,
                "gpu-share and vgpu cannot be used together",
            ));
        }
        Ok(parsed)
    }
}

/// The exclusivity rules: a list of label maps; string values only, empty maps and anything
/// that is not a list of maps ignored, as Volcano does (Volcano: gpuexclusive.go,
/// parseExclusiveRules).
fn rules(raw: &Value) -> Vec<ExclusiveRule> {
    let Value::Array(items) = raw else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let Value::Object(map) = item else {
                return None;
            };
            let labels: ExclusiveRule = map
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect();
            (!labels.is_empty()).then_some(labels)
        })
        .collect()
}

/// The indices of the rules whose every label the pod carries with the same value.
pub fn matching_rules(rules: &[ExclusiveRule], labels: &StringMap) -> Vec<usize> {
    rules
        .iter()
        .enumerate()
        .filter(|(_, rule)| rule.iter().all(|(k, v)| labels.get(k) == Some(v)))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: &str) -> Arguments {
        Arguments::new(serde_json::from_str(json).unwrap())
    }

    #[test]
    fn defaults_are_all_off_with_weight_zero() {
        let a = DeviceShareArgs::parse(&args("{}")).unwrap();
        assert!(!a.gpu_sharing && !a.gpu_number && !a.vgpu);
        assert_eq!(a.schedule_policy, SchedulePolicy::Unset);
        assert_eq!(a.schedule_weight, 0);
    }

    #[test]
    fn sharing_and_number_together_are_refused() {
        let e = DeviceShareArgs::parse(&args(
            r#"{"deviceshare.GPUSharingEnable": true, "deviceshare.GPUNumberEnable": true}"#,
        ))
        .unwrap_err();
        assert_eq!(e.key, GPU_NUMBER_ENABLE);
    }

    #[test]
    fn gpu_share_with_vgpu_is_refused() {
        let e = DeviceShareArgs::parse(&args(
            r#"{"deviceshare.GPUSharingEnable": true, "deviceshare.VGPUEnable": true}"#,
        ))
        .unwrap_err();
        assert_eq!(e.key, VGPU_ENABLE);
    }

    #[test]
    fn exclusive_rules_keep_string_labels_and_drop_empty_rules() {
        let a = DeviceShareArgs::parse(&args(
            r#"{"deviceshare.GPUExclusiveRules": [{"app": "train", "n": 1}, {}, "x"]}"#,
        ))
        .unwrap();
        assert_eq!(a.exclusive_rules.len(), 1);
        assert_eq!(
            a.exclusive_rules[0].get("app").map(String::as_str),
            Some("train")
        );
        assert!(!a.exclusive_rules[0].contains_key("n"));
    }
}
