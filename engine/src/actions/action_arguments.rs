//! The arguments actions read from their `configurations` entry. Each is parsed strictly (a
//! wrongly typed value is an error naming its key), so the configuration check can name it once
//! at load, and leniently where the action runs, where such a value keeps its default as in
//! Volcano (pkg/scheduler/framework/arguments.go, GetBool / GetInt log and keep the default;
//! each action's `parseArguments`).

use crate::config::{ArgumentError, Arguments};

/// `predicateErrorCacheEnable`, read by allocate, backfill, reclaim and preempt (default on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCacheArgs {
    pub error_cache: bool,
}

impl Default for ErrorCacheArgs {
    fn default() -> Self {
        ErrorCacheArgs { error_cache: true }
    }
}

impl ErrorCacheArgs {
    pub fn parse(a: &Arguments) -> Result<Self, ArgumentError> {
        Ok(ErrorCacheArgs {
            error_cache: a.bool("predicateErrorCacheEnable")?.unwrap_or(true),
        })
    }
}

/// `preempt`'s arguments (Volcano: pkg/scheduler/actions/preempt/preempt.go, parseArguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreemptArgs {
    pub error_cache: bool,
    pub topology_aware: bool,
    pub min_candidate_pct: i64,
    pub min_candidate_abs: i64,
    pub max_candidate_abs: i64,
}

impl Default for PreemptArgs {
    fn default() -> Self {
        PreemptArgs {
            error_cache: true,
            topology_aware: false,
            min_candidate_pct: 10,
            min_candidate_abs: 1,
            max_candidate_abs: 100,
        }
    }
}

impl PreemptArgs {
    pub fn parse(a: &Arguments) -> Result<Self, ArgumentError> {
        let d = PreemptArgs::default();
        Ok(PreemptArgs {
            error_cache: ErrorCacheArgs::parse(a)?.error_cache,
            topology_aware: a
                .bool("enableTopologyAwarePreemption")?
                .unwrap_or(d.topology_aware),
            min_candidate_pct: a
                .int("minCandidateNodesPercentage")?
                .unwrap_or(d.min_candidate_pct),
            min_candidate_abs: a
                .int("minCandidateNodesAbsolute")?
                .unwrap_or(d.min_candidate_abs),
            max_candidate_abs: a
                .int("maxCandidateNodesAbsolute")?
                .unwrap_or(d.max_candidate_abs),
        })
    }
}

/// `gangpreempt`'s and `gangreclaim`'s own arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GangEvictionArgs {
    /// Eviction domains tried per job; a value below 1 keeps the default.
    pub max_domains: usize,
    pub allow_whole_bundle: bool,
}

impl Default for GangEvictionArgs {
    fn default() -> Self {
        GangEvictionArgs {
            max_domains: 8,
            allow_whole_bundle: true,
        }
    }
}

impl GangEvictionArgs {
    pub fn parse(a: &Arguments) -> Result<Self, ArgumentError> {
        let d = GangEvictionArgs::default();
        let max_domains = a
            .int("maxDomains")?
            .filter(|&m| m > 0)
            .map_or(d.max_domains, |m| usize::try_from(m).unwrap_or(usize::MAX));
        Ok(GangEvictionArgs {
            max_domains,
            allow_whole_bundle: a.bool("allowWholeBundle")?.unwrap_or(d.allow_whole_bundle),
        })
    }
}

/// Parses `args` with `parse`, dropping each key it refuses until it succeeds: the value and
/// the refusals. A refusal naming no present key leaves every key out (all defaults).
pub fn lenient<T: Default>(
    args: &Arguments,
    parse: impl Fn(&Arguments) -> Result<T, ArgumentError>,
) -> (T, Vec<ArgumentError>) {
    let mut args = args.clone();
    let mut refused = Vec::new();
    loop {
        match parse(&args) {
            Ok(value) => return (value, refused),
            Err(e) => {
                if args.remove(&e.key).is_none() {
                    refused.push(e);
                    return (T::default(), refused);
                }
                refused.push(e);
            }
        }
    }
}

/// The arguments of `action`'s configuration entry that it refuses (and would run without).
pub fn refused_arguments(action: &str, args: &Arguments) -> Vec<ArgumentError> {
    match action {
        "allocate" | "backfill" | "reclaim" => lenient(args, ErrorCacheArgs::parse).1,
        "preempt" => lenient(args, PreemptArgs::parse).1,
        "gangpreempt" | "gangreclaim" => lenient(args, GangEvictionArgs::parse).1,
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(yaml: &str) -> Arguments {
        Arguments(serde_saphyr::from_str(yaml).unwrap())
    }

    #[test]
    fn a_wrongly_typed_value_keeps_its_default_and_the_others_are_read() {
        let (p, refused) = lenient(
            &args("enableTopologyAwarePreemption: true\nminCandidateNodesPercentage: many\n"),
            PreemptArgs::parse,
        );
        assert!(p.topology_aware);
        assert_eq!(p.min_candidate_pct, 10);
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].key, "minCandidateNodesPercentage");
    }

    #[test]
    fn each_action_names_its_refused_arguments() {
        let bad_cache = args("predicateErrorCacheEnable: sometimes\n");
        for action in ["allocate", "backfill", "reclaim", "preempt"] {
            let refused = refused_arguments(action, &bad_cache);
            assert_eq!(refused.len(), 1, "{action}");
        }
        let gang = args("maxDomains: '4'\nallowWholeBundle: 3\n");
        let refused = refused_arguments("gangreclaim", &gang);
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].key, "allowWholeBundle");
        assert!(refused_arguments("enqueue", &bad_cache).is_empty());
        let (g, _) = lenient(&gang, GangEvictionArgs::parse);
        assert_eq!(g.max_domains, 4, "a number written as a string is read");
    }
}
