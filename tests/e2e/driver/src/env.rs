//! What `tests/e2e/run` hands the driver: the API server's address, certificates, the
//! vc-scheduler binary, deploy/, helm, kwok, a work directory and the scripts that (re)start
//! the API server and etcd; with `VOLCANO_SRC`, Volcano's own vc-scheduler built from that
//! checkout.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// The test environment.
#[derive(Debug, Clone)]
pub struct Env {
    pub server: String,
    pub certs: PathBuf,
    pub work: PathBuf,
    pub deploy: PathBuf,
    pub vc_scheduler: PathBuf,
    pub helm: PathBuf,
    pub kwok: PathBuf,
    pub apiserver_start: PathBuf,
    pub etcd_start: PathBuf,
    pub versions: String,
    /// Volcano's own scheduler, when `tests/e2e/run` was given `VOLCANO_SRC`.
    pub volcano: Option<Volcano>,
}

/// Volcano's vc-scheduler built from a checkout, and that checkout's CRDs.
#[derive(Debug, Clone)]
pub struct Volcano {
    pub scheduler: PathBuf,
    /// `config/crd/volcano/bases` of the checkout.
    pub crds: PathBuf,
    /// The checkout's commit, or `unknown`.
    pub commit: String,
}

fn var(name: &str) -> Result<String> {
    std::env::var(name).with_context(|| format!("{name} is not set (run tests/e2e/run)"))
}

impl Env {
    pub fn from_env() -> Result<Env> {
        Ok(Env {
            server: var("TEPHRA_E2E_SERVER")?,
            certs: var("TEPHRA_E2E_CERTS")?.into(),
            work: var("TEPHRA_E2E_WORK")?.into(),
            deploy: var("TEPHRA_E2E_DEPLOY")?.into(),
            vc_scheduler: var("TEPHRA_E2E_VC_SCHEDULER")?.into(),
            helm: var("TEPHRA_E2E_HELM")?.into(),
            kwok: var("TEPHRA_E2E_KWOK")?.into(),
            apiserver_start: var("TEPHRA_E2E_APISERVER_START")?.into(),
            etcd_start: var("TEPHRA_E2E_ETCD_START")?.into(),
            versions: var("TEPHRA_E2E_VERSIONS").unwrap_or_default(),
            volcano: match var("TEPHRA_E2E_VOLCANO_SCHEDULER") {
                Err(_) => None,
                Ok(scheduler) => Some(Volcano {
                    scheduler: scheduler.into(),
                    crds: var("TEPHRA_E2E_VOLCANO_CRDS")?.into(),
                    commit: var("TEPHRA_E2E_VOLCANO_COMMIT")?,
                }),
            },
        })
    }

    /// A kubeconfig for the driver: the admin client certificate.
    pub fn admin_kubeconfig(&self) -> String {
        let c = self.certs.display();
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster:\n    server: {}\n    certificate-authority: {c}/ca.crt\nusers:\n- name: admin\n  user:\n    client-certificate: {c}/admin.crt\n    client-key: {c}/admin.key\ncontexts:\n- name: e2e\n  context: {{cluster: e2e, user: admin}}\ncurrent-context: e2e\n",
            self.server
        )
    }

    /// A kubeconfig for vc-scheduler: its service account's token, nothing more.
    pub fn token_kubeconfig(&self, token: &str) -> String {
        self.token_kubeconfig_at(&self.server, token)
    }

    /// The same for another address that serves the API server's certificate (a proxy).
    pub fn token_kubeconfig_at(&self, server: &str, token: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster:\n    server: {}\n    certificate-authority: {}/ca.crt\nusers:\n- name: volcano-scheduler\n  user:\n    token: {token}\ncontexts:\n- name: e2e\n  context: {{cluster: e2e, user: volcano-scheduler}}\ncurrent-context: e2e\n",
            server,
            self.certs.display()
        )
    }
}
