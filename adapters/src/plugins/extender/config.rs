//! The extender's arguments (Volcano: pkg/scheduler/plugins/extender/extender.go): where it listens, which verbs it serves, whether its
//! failures may be ignored, and which pods it cares about.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;
use tephra_engine::api::Pod;

use super::client::ca_bundle;
use tephra_engine::config::{ArgumentError, Arguments};
use tephra_engine::model::parse_go_duration;

/// The parsed arguments. An empty verb means the extender does not serve that point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtenderConfig {
    pub url_prefix: String,
    pub http_timeout: Duration,
    pub on_session_open_verb: String,
    pub on_session_close_verb: String,
    pub predicate_verb: String,
    pub prioritize_verb: String,
    pub preemptable_verb: String,
    pub reclaimable_verb: String,
    pub queue_overused_verb: String,
    pub job_enqueueable_verb: String,
    pub job_enqueued_verb: String,
    pub job_ready_verb: String,
    pub allocate_func_verb: String,
    pub deallocate_func_verb: String,
    pub ignorable: bool,
    pub managed_resources: BTreeSet<String>,
    /// tephra: `extender.caFile`, the CA bundle (PEM) an `https://` extender's certificate
    /// must chain to, read at parse time (DER certificates); empty for the system's trust
    /// store. Volcano's extender has no such key: it trusts the system's store only.
    pub ca: Vec<Vec<u8>>,
}

fn refused(key: &str, value: &Value, reason: &str) -> ArgumentError {
    ArgumentError {
        key: key.into(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

impl ExtenderConfig {
    /// Reads `extender.*` arguments; a wrong type is refused (Volcano would ignore it).
    pub fn parse(args: &Arguments) -> Result<Self, ArgumentError> {
        let verb = |name: &str| -> Result<String, ArgumentError> {
            Ok(args
                .string(&format!("extender.{name}"))?
                .unwrap_or_default())
        };
        let http_timeout = match args.string("extender.httpTimeout")? {
            None => Duration::from_secs(1),
            Some(s) => parse_go_duration(&s)
                .ok()
                .filter(|secs| *secs > 0.0)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| {
                    refused(
                        "extender.httpTimeout",
                        &Value::String(s),
                        "expected a positive Go duration",
                    )
                })?,
        };
        let url_prefix = verb("urlPrefix")?;
        let ca = match args.string("extender.caFile")? {
            None => Vec::new(),
            Some(path) => {
                let refuse =
                    |reason: &str| refused("extender.caFile", &Value::String(path.clone()), reason);
                if !url_prefix.starts_with("https://") {
                    return Err(refuse("applies to an https:// extender.urlPrefix only"));
                }
                ca_bundle(&path).map_err(|e| refuse(&e))?
            }
        };
        Ok(ExtenderConfig {
            url_prefix,
            ca,
            http_timeout,
            on_session_open_verb: verb("onSessionOpenVerb")?,
            on_session_close_verb: verb("onSessionCloseVerb")?,
            predicate_verb: verb("predicateVerb")?,
            prioritize_verb: verb("prioritizeVerb")?,
            preemptable_verb: verb("preemptableVerb")?,
            reclaimable_verb: verb("reclaimableVerb")?,
            queue_overused_verb: verb("queueOverusedVerb")?,
            job_enqueueable_verb: verb("jobEnqueueableVerb")?,
            job_enqueued_verb: verb("jobEnqueuedVerb")?,
            job_ready_verb: verb("jobReadyVerb")?,
            allocate_func_verb: verb("allocateFuncVerb")?,
            deallocate_func_verb: verb("deallocateFuncVerb")?,
            ignorable: args.bool("extender.ignorable")?.unwrap_or(false),
            managed_resources: managed_resources(args)?,
        })
    }

    /// `IsInterested`: with no managed resources every pod; else pods whose containers or init
    /// containers request or limit one of them.
    pub fn interested(&self, pod: &Pod) -> bool {
        if self.managed_resources.is_empty() {
            return true;
        }
        pod.spec
            .containers
            .iter()
            .chain(&pod.spec.init_containers)
            .flat_map(|c| c.resources.requests.keys().chain(c.resources.limits.keys()))
            .any(|name| self.managed_resources.contains(name))
    }
}

/// `extender.managedResources`: a list of resource names.
fn managed_resources(args: &Arguments) -> Result<BTreeSet<String>, ArgumentError> {
    const KEY: &str = "extender.managedResources";
    let Some(v) = args.raw(KEY) else {
        return Ok(BTreeSet::new());
    };
    let list = v
        .as_array()
        .ok_or_else(|| refused(KEY, v, "expected a list of resource names"))?;
    list.iter()
        .map(|item| {
            item.as_str()
                .map(str::to_string)
                .ok_or_else(|| refused(KEY, v, "expected a list of resource names"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::harness::Harness;

    fn args(yaml: &str) -> Arguments {
        Arguments::new(serde_saphyr::from_str(yaml).unwrap())
    }

    #[test]
    fn volcano_defaults_and_every_key_are_read() {
        let c = ExtenderConfig::parse(&args(
            "extender.urlPrefix: http://127.0.0.1:8713\nextender.predicateVerb: predicate\nextender.ignorable: true\nextender.httpTimeout: 100ms\nextender.managedResources: [nvidia.com/gpu]\n",
        ))
        .unwrap();
        assert_eq!(c.url_prefix, "http://127.0.0.1:8713");
        assert_eq!(c.predicate_verb, "predicate");
        assert_eq!(c.prioritize_verb, "");
        assert!(c.ignorable);
        assert_eq!(c.http_timeout, Duration::from_millis(100));
        assert!(c.managed_resources.contains("nvidia.com/gpu"));
        assert_eq!(
            ExtenderConfig::parse(&args("{}")).unwrap().http_timeout,
            Duration::from_secs(1)
        );
    }

    #[test]
    fn bad_values_are_refused_by_key() {
        let e = ExtenderConfig::parse(&args("extender.httpTimeout: soon\n")).unwrap_err();
        assert_eq!(e.key, "extender.httpTimeout");
        let e = ExtenderConfig::parse(&args("extender.managedResources: nvidia.com/gpu\n"))
            .unwrap_err();
        assert_eq!(e.key, "extender.managedResources");
        let e = ExtenderConfig::parse(&args("extender.predicateVerb: 3\n")).unwrap_err();
        assert_eq!(e.key, "extender.predicateVerb");
    }

    #[test]
    fn a_ca_file_is_read_for_an_https_extender_and_refused_otherwise() {
        let e = ExtenderConfig::parse(&args(
            "extender.urlPrefix: http://e\nextender.caFile: /etc/ca.pem\n",
        ))
        .unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.reason.as_str()),
            (
                "extender.caFile",
                "applies to an https:// extender.urlPrefix only"
            )
        );
        let e = ExtenderConfig::parse(&args(
            "extender.urlPrefix: https://e\nextender.caFile: /nonexistent/ca.pem\n",
        ))
        .unwrap_err();
        assert!(e.reason.starts_with("cannot read: "), "{e:?}");
    }

    #[test]
    fn only_pods_with_a_managed_resource_interest_the_extender() {
        let gpu: Pod = Harness::parse(
            "metadata: {name: g}\nspec: {initContainers: [{name: i, resources: {limits: {nvidia.com/gpu: '1'}}}], containers: [{name: c}]}\n",
        );
        let cpu: Pod = Harness::parse(
            "metadata: {name: c}\nspec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n",
        );
        let managed =
            ExtenderConfig::parse(&args("extender.managedResources: [nvidia.com/gpu]\n")).unwrap();
        assert!(managed.interested(&gpu));
        assert!(!managed.interested(&cpu));
        assert!(ExtenderConfig::default().interested(&cpu));
    }
}
