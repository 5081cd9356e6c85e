//! What every scenario gets: the environment, the admin connection, and helpers to write a
//! configuration file and start vc-scheduler with it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::cluster::{Cluster, wait_for};
use crate::env::Env;
use crate::proc::{SchedulerProc, chart_args};

/// The chart's default scheduler configuration.
pub const CHART_CONF: &str = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n  - name: conformance\n- plugins:\n  - name: overcommit\n  - name: drf\n    enablePreemptable: false\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n";

/// The shared test context.
pub struct Ctx {
    pub env: Env,
    pub cluster: Cluster,
    /// vc-scheduler's service account token.
    pub token: String,
}

impl Ctx {
    /// Applies deploy/ (CRDs, namespace, RBAC) and writes vc-scheduler's kubeconfig with its
    /// service account's token.
    pub async fn prepare(env: Env, cluster: Cluster) -> Result<Ctx> {
        cluster
            .apply_file(&env.deploy.join("crd-podgroups.yaml"))
            .await?;
        cluster
            .apply_file(&env.deploy.join("crd-queues.yaml"))
            .await?;
        cluster
            .apply_file(&env.deploy.join("crd-hypernodes.yaml"))
            .await?;
        cluster
            .apply_file(&env.deploy.join("crd-nodeshards.yaml"))
            .await?;
        cluster.namespace("volcano-system").await?;
        cluster.apply_file(&env.deploy.join("rbac.yaml")).await?;
        cluster
            .apply_file(&env.deploy.join("scheduler-config.yaml"))
            .await?;
        let c = cluster.clone();
        wait_for("the CRDs to be served", Duration::from_secs(60), || {
            let c = c.clone();
            async move {
                Ok(c.get("scheduling.volcano.sh/v1beta1", "Queue", "", "none")
                    .await
                    .is_ok()
                    && c.get("topology.volcano.sh/v1alpha1", "HyperNode", "", "none")
                        .await
                        .is_ok())
            }
        })
        .await?;
        let token = cluster
            .service_account_token("volcano-system", "volcano-scheduler")
            .await?;
        std::fs::write(
            env.work.join("scheduler.kubeconfig"),
            env.token_kubeconfig(&token),
        )?;
        Ok(Ctx {
            env,
            cluster,
            token,
        })
    }

    /// Writes `text` as `<work>/<dir>/volcano-scheduler.conf` (atomically, as a ConfigMap
    /// update lands) and returns the file's path.
    pub fn write_conf(&self, dir: &str, text: &str) -> Result<PathBuf> {
        let d = self.env.work.join(dir);
        std::fs::create_dir_all(&d)?;
        let tmp = d.join(".volcano-scheduler.conf.tmp");
        let path = d.join("volcano-scheduler.conf");
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path).with_context(|| path.display().to_string())?;
        Ok(path)
    }

    /// Starts vc-scheduler with the chart's arguments, `conf`, and `extra` flags.
    pub fn scheduler(
        &self,
        name: &str,
        conf: &std::path::Path,
        extra: &[&str],
    ) -> Result<SchedulerProc> {
        let mut args = chart_args(&conf.display().to_string());
        args.extend(extra.iter().map(|s| s.to_string()));
        SchedulerProc::start(
            &self.env,
            name,
            &args,
            &self.env.work.join("scheduler.kubeconfig"),
        )
    }

    /// Starts vc-scheduler as `scheduler` does, with another kubeconfig (a fault proxy's).
    pub fn scheduler_with_kubeconfig(
        &self,
        name: &str,
        conf: &std::path::Path,
        extra: &[&str],
        kubeconfig: &std::path::Path,
    ) -> Result<SchedulerProc> {
        let mut args = chart_args(&conf.display().to_string());
        args.extend(extra.iter().map(|s| s.to_string()));
        SchedulerProc::start(&self.env, name, &args, kubeconfig)
    }
}
