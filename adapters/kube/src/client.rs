//! The API client: `--kubeconfig` (or in-cluster configuration / `$KUBECONFIG`), with
//! `--master` overriding the server URL, as Volcano's `BuildConfigFromFlags`.

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// Builds the client; the error names the flag or file at fault.
pub async fn build(kubeconfig: &str, master: &str) -> Result<Client, String> {
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
    Client::try_from(config).map_err(|e| format!("cannot build the API client: {e}"))
}
