//! Volcano's own vc-scheduler beside tephra's (`VOLCANO_SRC` of `tests/e2e/run`): the CRDs of
//! its checkout, in the place of deploy/'s while it is compared, and its API writes as its
//! client-go metrics count them.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Result;

use crate::cluster::wait_for;
use crate::ctx::Ctx;
use crate::env::Volcano;
use crate::rendered::Rendered;

/// The API version and kind of a CRD.
const CRD: (&str, &str) = ("apiextensions.k8s.io/v1", "CustomResourceDefinition");

/// The CRDs Volcano's scheduler watches (pkg/scheduler/cache/cache.go, `addEventHandler`:
/// PodGroups, Queues, Numatopologies under its default `ResourceTopology` gate, HyperNodes; no
/// NodeShards without sharding), as files of the checkout's `config/crd/volcano/bases`, each
/// with deploy/'s file that `Ctx::prepare` applies in its place, if any.
const CRDS: &[(&str, Option<&str>)] = &[
    (
        "scheduling.volcano.sh_podgroups.yaml",
        Some("crd-podgroups.yaml"),
    ),
    ("scheduling.volcano.sh_queues.yaml", Some("crd-queues.yaml")),
    (
        "topology.volcano.sh_hypernodes.yaml",
        Some("crd-hypernodes.yaml"),
    ),
    ("nodeinfo.volcano.sh_numatopologies.yaml", None),
];

/// Replaces deploy/'s CRDs with Volcano's (the same names, Volcano's full schemas), so both
/// schedulers meet the same API server, and waits until each is established.
pub async fn put_crds(ctx: &Ctx, volcano: &Volcano) -> Result<()> {
    let mut names = Vec::new();
    for (file, _) in CRDS {
        for crd in Rendered::load(&volcano.crds.join(file))?.objects {
            ctx.cluster.replace(&crd).await?;
            names.push(
                crd["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    for name in &names {
        let c = ctx.cluster.clone();
        wait_for(
            &format!("CRD {name} to be established"),
            Duration::from_secs(60),
            || {
                let c = c.clone();
                async move {
                    let crd = c.get(CRD.0, CRD.1, "", name).await?.unwrap_or_default();
                    let conditions = crd.pointer("/status/conditions").and_then(|c| c.as_array());
                    Ok(conditions.is_some_and(|cs| {
                        cs.iter()
                            .any(|c| c["type"] == "Established" && c["status"] == "True")
                    }))
                }
            },
        )
        .await?;
    }
    Ok(())
}

/// Puts deploy/'s CRDs back, and removes those deploy/ has none in the place of.
pub async fn restore_crds(ctx: &Ctx, volcano: &Volcano) -> Result<()> {
    for (file, deployed) in CRDS {
        match deployed {
            Some(d) => {
                for crd in Rendered::load(&ctx.env.deploy.join(d))?.objects {
                    ctx.cluster.replace(&crd).await?;
                }
            }
            None => {
                for crd in Rendered::load(&volcano.crds.join(file))?.objects {
                    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
                    ctx.cluster.delete(CRD.0, CRD.1, "", name).await?;
                }
            }
        }
    }
    Ok(())
}

/// The queues the schedulers make at start (Volcano's `newDefaultAndRootQueue`, tephra's the
/// same), as tephra's run left them.
const QUEUES: &[&str] = &["default", "root"];

/// Opens the queues as Volcano's queue controller would (pkg/controllers/queue/
/// queue_controller_action.go, `openQueue`: status `state: Open`); the e2e runs no
/// vc-controller-manager, and Volcano's proportion plugin allocates nothing in a queue not
/// Open.
pub async fn open_queues(ctx: &Ctx) -> Result<()> {
    let queue = ("scheduling.volcano.sh/v1beta1", "Queue");
    for name in QUEUES {
        if ctx.cluster.get(queue.0, queue.1, "", name).await?.is_some() {
            let open = serde_json::json!({"status": {"state": "Open"}});
            ctx.cluster.merge(queue, ("", name), true, &open).await?;
        }
    }
    Ok(())
}

/// Volcano's API writes from its metrics text, by HTTP method: client-go's
/// `rest_client_requests_total{code,host,method}` (registered by cmd/scheduler/app/server.go
/// through component-base's restclient metrics) counts requests by method only, so writes of
/// every kind and answer are summed per method.
pub fn writes_by_method(metrics: &str) -> BTreeMap<String, f64> {
    let mut writes = BTreeMap::new();
    for line in metrics.lines() {
        let Some((labels, n)) = line
            .strip_prefix("rest_client_requests_total{")
            .and_then(|l| l.split_once("} "))
        else {
            continue;
        };
        let method = labels
            .split(',')
            .find_map(|p| p.strip_prefix("method=\""))
            .map(|m| m.trim_end_matches('"'));
        if let (Some(m @ ("POST" | "PUT" | "PATCH" | "DELETE")), Ok(n)) =
            (method, n.trim().parse::<f64>())
        {
            *writes.entry(m.to_string()).or_default() += n;
        }
    }
    writes
}

/// tephra's writes by `verb resource` (its `tephra_api_writes_total`) summed by the HTTP method
/// each verb is sent with, to set beside `writes_by_method`.
pub fn by_method(writes: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (what, n) in writes {
        let method = match what.split(' ').next() {
            Some("create") => "POST",
            Some("update") => "PUT",
            Some("patch") => "PATCH",
            Some("delete") => "DELETE",
            _ => continue,
        };
        *out.entry(method.to_string()).or_default() += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_summed_per_method_over_codes_and_hosts_and_reads_left_out() {
        let text = "# TYPE rest_client_requests_total counter\n\
            rest_client_requests_total{code=\"201\",host=\"127.0.0.1:6443\",method=\"POST\"} 500\n\
            rest_client_requests_total{code=\"409\",host=\"127.0.0.1:6443\",method=\"POST\"} 3\n\
            rest_client_requests_total{code=\"200\",host=\"127.0.0.1:6443\",method=\"PUT\"} 40\n\
            rest_client_requests_total{code=\"200\",host=\"127.0.0.1:6443\",method=\"GET\"} 9\n\
            rest_client_request_size_bytes_count{host=\"h\",verb=\"POST\"} 7\n";
        let w = writes_by_method(text);
        assert_eq!(w.get("POST"), Some(&503.0));
        assert_eq!(w.get("PUT"), Some(&40.0));
        assert_eq!(w.len(), 2);
    }

    #[test]
    fn tephra_writes_group_by_the_method_of_their_verb() {
        let writes: BTreeMap<String, f64> = [
            ("create pods/binding".to_string(), 100.0),
            ("create events".to_string(), 10.0),
            ("update podgroups".to_string(), 20.0),
        ]
        .into();
        let m = by_method(&writes);
        assert_eq!(m.get("POST"), Some(&110.0));
        assert_eq!(m.get("PUT"), Some(&20.0));
        assert_eq!(m.len(), 2);
    }
}
