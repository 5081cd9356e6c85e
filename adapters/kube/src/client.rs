//! The API client: `--kubeconfig` (or in-cluster configuration / `$KUBECONFIG`), with
//! `--master` overriding the server URL, as Volcano's `BuildConfigFromFlags`.

use kube::client::ClientBuilder;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::metrics::RestClientMetrics;

/// Builds the client, its requests measured into `metrics`; the error names the flag or file
/// at fault. Returns the client and the API server's `host:port`.
pub async fn build(
    kubeconfig: &str,
    master: &str,
    metrics: &RestClientMetrics,
) -> Result<(Client, String), String> {
    let mut config = if kubeconfig.is_empty() {
        Config::infer()
            .await
            .map_err(|e| format!("no cluster configuration (in-cluster or $KUBECONFIG): {e}"))?
    } else {
        let kc = Kubeconfig::read_from(kubeconfig)
            .map_err(|e| format!("--kubeconfig={kubeconfig}: {e}"))?;
        Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
            .await
            .map_err(|e| format!("--kubeconfig={kubeconfig}: {e}"))?
    };
    if !master.is_empty() {
        config.cluster_url = master
            .parse()
            .map_err(|e| format!("--master={master}: {e}"))?;
    }
    let host = config
        .cluster_url
        .authority()
        .map(|a| a.as_str().to_string())
        .unwrap_or_default();
    let client = ClientBuilder::try_from(config)
        .map_err(|e| format!("cannot build the API client: {e}"))?
        .with_layer(&metrics.layer(&host))
        .build();
    Ok((client, host))
}
