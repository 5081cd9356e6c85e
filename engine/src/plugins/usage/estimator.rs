//! The `usage` plugin's load arithmetic (Volcano: pkg/scheduler/plugins/usage/estimator.go):
//! what a pod not yet visible in the metrics will likely use, and a node's utilisation and
//! score once that is added to what the metrics show.

/// kube-scheduler's `MaxNodeScore`.
const MAX_NODE_SCORE: f64 = 100.0;

/// Weighted mean of cpu and memory composite utilisation (0..1); 0 without weights.
pub fn load_composite(cpu: f64, memory: f64, cpu_weight: i64, memory_weight: i64) -> f64 {
    let total = cpu_weight + memory_weight;
    if total == 0 {
        return 0.0;
    }
    (cpu * cpu_weight as f64 + memory * memory_weight as f64) / total as f64
}

/// The risk factor once the node's composite load reaches `threshold`, else 1; a factor
/// below 1 is never applied.
pub fn applied_risk_factor(load: f64, threshold: f64, factor: f64) -> f64 {
    if factor < 1.0 || load < threshold {
        1.0
    } else {
        factor
    }
}

/// A Guaranteed or Burstable pod's likely use of one resource: `(request × request_ratio +
/// (limit - request) × burst_ratio) × risk`, within `[0, effective limit]` (the request when
/// the limit is missing or below it).
pub fn pod_estimate(
    request: f64,
    limit: f64,
    request_ratio: f64,
    burst_ratio: f64,
    risk: f64,
) -> f64 {
    let request = request.max(0.0);
    let limit = if limit <= 0.0 || limit < request {
        request
    } else {
        limit
    };
    let burst = (limit - request).max(0.0);
    ((request * request_ratio + burst * burst_ratio) * risk).clamp(0.0, limit)
}

/// A BestEffort pod's likely use: the configured value × risk.
pub fn best_effort_estimate(configured: f64, risk: f64) -> f64 {
    configured.max(0.0) * risk
}

/// One resource's utilisation (0..1) from the metrics' percent and the estimated use of pods
/// they cannot show yet; 0 without capacity.
pub fn composite_utilisation(real_percent: f64, shadow: f64, capacity: f64) -> f64 {
    if capacity <= 0.0 {
        return 0.0;
    }
    ((real_percent / 100.0 * capacity + shadow) / capacity).clamp(0.0, 1.0)
}

/// The node's score: the weighted free share × 100 × `usage_weight`.
pub fn node_score(
    cpu: f64,
    memory: f64,
    cpu_weight: i64,
    memory_weight: i64,
    usage_weight: i64,
) -> f64 {
    let total = cpu_weight + memory_weight;
    if total == 0 {
        return 0.0;
    }
    let free =
        ((1.0 - cpu) * cpu_weight as f64 + (1.0 - memory) * memory_weight as f64) / total as f64;
    free * MAX_NODE_SCORE * usage_weight as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_estimate_weighs_request_and_burst_within_the_limit() {
        assert_eq!(pod_estimate(1000.0, 2000.0, 0.7, 0.5, 1.0), 1200.0);
        assert_eq!(pod_estimate(1000.0, 0.0, 0.7, 0.5, 1.0), 700.0, "no limit");
        assert_eq!(
            pod_estimate(1000.0, 1000.0, 1.0, 0.0, 1.5),
            1000.0,
            "capped"
        );
    }

    #[test]
    fn the_risk_factor_applies_from_the_threshold_and_never_below_one() {
        assert_eq!(applied_risk_factor(0.6, 0.6, 1.2), 1.2);
        assert_eq!(applied_risk_factor(0.59, 0.6, 1.2), 1.0);
        assert_eq!(applied_risk_factor(0.9, 0.6, 0.5), 1.0);
    }

    #[test]
    fn utilisation_adds_the_shadow_load_and_the_score_counts_what_is_free() {
        assert_eq!(composite_utilisation(50.0, 1000.0, 4000.0), 0.75);
        assert_eq!(composite_utilisation(90.0, 4000.0, 4000.0), 1.0);
        assert_eq!(node_score(0.3, 0.5, 1, 1, 5), 300.0);
        assert_eq!(load_composite(0.25, 0.75, 1, 3), 0.625);
    }
}
