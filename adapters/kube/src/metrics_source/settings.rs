//! The configuration's `metrics:` section, read as Volcano reads its `metricsConf` map
//! (Volcano: pkg/scheduler/metrics/source/metrics_client.go, NewMetricsClient, and the
//! constructors of each client).

use std::collections::BTreeMap;
use std::time::Duration;

use tephra_engine::model::parse_go_duration;

/// How often the source is polled when `interval` is absent, unparsable or not positive
/// (Volcano: pkg/scheduler/cache/cache.go, defaultMetricsInternal).
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);

/// The monitoring systems Volcano reads node usage from (`type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceType {
    /// PromQL queries against `address`.
    Prometheus,
    /// The custom metrics API (`custom.metrics.k8s.io`) of the cluster, as a Prometheus
    /// adapter serves it; `address` is not used.
    PrometheusAdaptor,
    /// A search with averages over an index at `address`.
    Elasticsearch,
}

/// What one collection needs from the section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSettings {
    pub source: SourceType,
    pub address: String,
    /// `tls.insecureSkipVerify: "true"`.
    pub insecure_skip_verify: bool,
    /// `elasticsearch.index`, `metricbeat-*` when absent.
    pub es_index: String,
    /// `elasticsearch.hostnameFieldName`, `host.hostname` when absent.
    pub es_hostname_field: String,
    pub es_username: String,
    pub es_password: String,
}

/// `interval`: the polling period, read once when polling starts, as Volcano does.
pub fn interval_of(section: &BTreeMap<String, String>) -> Duration {
    section
        .get("interval")
        .and_then(|s| parse_go_duration(s).ok())
        .filter(|secs| *secs > 0.0)
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .unwrap_or(DEFAULT_INTERVAL)
}

/// The settings of a collection: `Ok(None)` when `type` is absent or empty (nothing is
/// collected); an error naming the culprit when `type` is unknown or a source that needs an
/// `address` has none.
pub fn read(section: &BTreeMap<String, String>) -> Result<Option<SourceSettings>, String> {
    let value = |key: &str| section.get(key).cloned().unwrap_or_default();
    let or = |key: &str, default: &str| {
        Some(value(key))
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_string())
    };
    let source = match value("type").as_str() {
        "" => return Ok(None),
        "prometheus" => SourceType::Prometheus,
        "prometheus_adaptor" => SourceType::PrometheusAdaptor,
        "elasticsearch" => SourceType::Elasticsearch,
        other => {
            return Err(format!(
                "metrics type {other:?} is not supported; the supported types are \
                 elasticsearch, prometheus and prometheus_adaptor"
            ));
        }
    };
    let address = value("address");
    if address.is_empty() && source != SourceType::PrometheusAdaptor {
        return Err("metrics address is empty".to_string());
    }
    Ok(Some(SourceSettings {
        source,
        address,
        insecure_skip_verify: value("tls.insecureSkipVerify") == "true",
        es_index: or("elasticsearch.index", "metricbeat-*"),
        es_hostname_field: or("elasticsearch.hostnameFieldName", "host.hostname"),
        es_username: value("elasticsearch.username"),
        es_password: value("elasticsearch.password"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn interval_defaults_to_thirty_seconds_unless_a_positive_duration() {
        assert_eq!(interval_of(&section(&[])), DEFAULT_INTERVAL);
        assert_eq!(
            interval_of(&section(&[("interval", "soon")])),
            DEFAULT_INTERVAL
        );
        assert_eq!(
            interval_of(&section(&[("interval", "0s")])),
            DEFAULT_INTERVAL
        );
        assert_eq!(
            interval_of(&section(&[("interval", "-5s")])),
            DEFAULT_INTERVAL
        );
        assert_eq!(
            interval_of(&section(&[("interval", "1m30s")])),
            Duration::from_secs(90)
        );
    }

    #[test]
    fn no_type_collects_nothing() {
        assert_eq!(read(&section(&[("address", "http://p:9090")])), Ok(None));
        assert_eq!(read(&section(&[("type", "")])), Ok(None));
    }

    #[test]
    fn an_unknown_type_is_refused_by_name() {
        let e = read(&section(&[("type", "prometheus_adapt")])).unwrap_err();
        assert!(e.contains("\"prometheus_adapt\""), "{e}");
    }

    #[test]
    fn prometheus_and_elasticsearch_need_an_address_the_adaptor_does_not() {
        for t in ["prometheus", "elasticsearch"] {
            assert_eq!(
                read(&section(&[("type", t)])),
                Err("metrics address is empty".to_string())
            );
        }
        let adaptor = read(&section(&[("type", "prometheus_adaptor")])).unwrap();
        assert_eq!(
            adaptor.map(|s| s.source),
            Some(SourceType::PrometheusAdaptor)
        );
    }

    #[test]
    fn elasticsearch_keys_default_as_in_volcano() {
        let s = read(&section(&[
            ("type", "elasticsearch"),
            ("address", "http://es:9200"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(s.es_index, "metricbeat-*");
        assert_eq!(s.es_hostname_field, "host.hostname");
        assert!(!s.insecure_skip_verify);
        let s = read(&section(&[
            ("type", "elasticsearch"),
            ("address", "https://es:9200"),
            ("elasticsearch.index", "nodes-*"),
            ("elasticsearch.hostnameFieldName", "host.name"),
            ("elasticsearch.username", "u"),
            ("elasticsearch.password", "p"),
            ("tls.insecureSkipVerify", "true"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            (s.es_index.as_str(), s.es_hostname_field.as_str()),
            ("nodes-*", "host.name")
        );
        assert_eq!((s.es_username.as_str(), s.es_password.as_str()), ("u", "p"));
        assert!(s.insecure_skip_verify);
    }
}
