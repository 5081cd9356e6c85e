//! The driver's side of the API server: an admin client, applying deploy/, and making the
//! objects scenarios need (nodes with status, queues, PodGroups, pods) and reading them back.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde_json::{Value, json};

use crate::env::Env;

/// Objects created at once when making many.
const CREATE_CONCURRENCY: usize = 32;

/// How long a pod naming a just-created PriorityClass is tried again (`Cluster::create`).
const PRIORITY_CLASS_SEEN: Duration = Duration::from_secs(10);

/// The admin connection.
#[derive(Clone)]
pub struct Cluster {
    pub client: Client,
}

/// The API resource of a kind the driver writes.
pub fn resource(api_version: &str, kind: &str) -> ApiResource {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let plural = match kind {
        "PriorityClass" => "priorityclasses".to_string(),
        "StorageClass" => "storageclasses".to_string(),
        k => format!("{}s", k.to_lowercase()),
    };
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), &plural)
}

/// Polls `check` every 200 ms until it returns true or `timeout` passes.
pub async fn wait_for<F, Fut>(what: &str, timeout: Duration, mut check: F) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool>>,
{
    let deadline = Instant::now() + timeout;
    let mut last_err = None;
    loop {
        match check().await {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) => last_err = Some(e),
        }
        if Instant::now() > deadline {
            match last_err {
                Some(e) => {
                    bail!("timed out after {timeout:?} waiting for {what} (last error: {e})")
                }
                None => bail!("timed out after {timeout:?} waiting for {what}"),
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The node a pod is bound to ("" when pending).
pub fn node_of(p: &Pod) -> &str {
    p.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or("")
}

impl Cluster {
    /// Connects as admin and waits until the server answers.
    pub async fn connect(env: &Env) -> Result<Cluster> {
        let path = env.work.join("admin.kubeconfig");
        std::fs::write(&path, env.admin_kubeconfig())?;
        let kc = Kubeconfig::read_from(&path)?;
        let config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await?;
        let client = Client::try_from(config)?;
        let c = Cluster { client };
        c.wait_ready(Duration::from_secs(120)).await?;
        Ok(c)
    }

    /// Waits until the server lists namespaces.
    pub async fn wait_ready(&self, timeout: Duration) -> Result<()> {
        let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(self.client.clone());
        wait_for("the API server", timeout, || {
            let api = api.clone();
            async move { Ok(api.get_opt("default").await?.is_some()) }
        })
        .await
    }

    fn dynamic(&self, ar: &ApiResource, namespace: &str) -> Api<DynamicObject> {
        if namespace.is_empty() {
            Api::all_with(self.client.clone(), ar)
        } else {
            Api::namespaced_with(self.client.clone(), namespace, ar)
        }
    }

    /// The API of an object given as JSON (`apiVersion`, `kind` and `metadata.name`
    /// required), with its kind, namespace and name.
    fn api_of(&self, object: &Value) -> Result<(Api<DynamicObject>, String, String, String)> {
        let api_version = object["apiVersion"].as_str().context("apiVersion")?;
        let kind = object["kind"].as_str().context("kind")?;
        let ns = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("");
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .context("metadata.name")?;
        let api = self.dynamic(&resource(api_version, kind), ns);
        Ok((api, kind.into(), ns.into(), name.into()))
    }

    /// Creates one object given as JSON (`apiVersion`, `kind` and `metadata` required);
    /// an object that exists already is left as it is. A pod naming a PriorityClass created a
    /// moment before is tried again for a while: the API server's priority admission reads the
    /// classes from its own informer, which may not hold the new one yet.
    pub async fn create(&self, object: &Value) -> Result<()> {
        let (api, kind, ns, name) = self.api_of(object)?;
        let o: DynamicObject = serde_json::from_value(object.clone())?;
        let start = Instant::now();
        loop {
            match api.create(&PostParams::default(), &o).await {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(s)) if s.code == 409 => return Ok(()),
                Err(kube::Error::Api(s))
                    if s.code == 403
                        && s.message.contains("no PriorityClass with name")
                        && start.elapsed() < PRIORITY_CLASS_SEEN =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(e).with_context(|| format!("create {kind} {ns}/{name}")),
            }
        }
    }

    /// Creates one object, or replaces the existing object of that kind and name with it
    /// whole (what `kubectl replace` does; the object keeps its identity, so a service
    /// account's tokens stay valid).
    pub async fn replace(&self, object: &Value) -> Result<()> {
        let (api, kind, ns, name) = self.api_of(object)?;
        let name = &name;
        let mut o: DynamicObject = serde_json::from_value(object.clone())?;
        let written = match api.get_opt(name).await? {
            None => api.create(&PostParams::default(), &o).await,
            Some(existing) => {
                o.metadata.resource_version = existing.metadata.resource_version;
                api.replace(name, &PostParams::default(), &o).await
            }
        };
        written.with_context(|| format!("replace {kind} {ns}/{name}"))?;
        Ok(())
    }

    /// Creates many objects, a few at a time.
    pub async fn create_all(&self, objects: Vec<Value>) -> Result<()> {
        futures::stream::iter(objects)
            .map(|o| async move { self.create(&o).await })
            .buffer_unordered(CREATE_CONCURRENCY)
            .try_collect::<Vec<_>>()
            .await
            .map(|_| ())
    }

    /// Applies every document of a YAML file.
    pub async fn apply_file(&self, path: &Path) -> Result<()> {
        let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
        let docs = tephra_adapters::manifest::parse_documents(&text, &path.display().to_string())?;
        for d in docs {
            self.create(&d).await?;
        }
        Ok(())
    }

    /// The service account token vc-scheduler runs with (TokenRequest API).
    pub async fn service_account_token(&self, namespace: &str, name: &str) -> Result<String> {
        let api: Api<k8s_openapi::api::core::v1::ServiceAccount> =
            Api::namespaced(self.client.clone(), namespace);
        let request = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 86400}});
        let answer: Value = api
            .create_subresource("token", name, &PostParams::default(), &request)
            .await?;
        answer
            .pointer("/status/token")
            .and_then(Value::as_str)
            .map(str::to_string)
            .context("no token in the TokenRequest answer")
    }

    /// A Ready node with `cpu` and `memory` allocatable, labelled `labels`; its status is
    /// written through the status subresource, as a kubelet would.
    pub async fn node(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
        cpu: &str,
        memory: &str,
    ) -> Result<()> {
        let resources = json!({"cpu": cpu, "memory": memory, "pods": "110"});
        self.node_with(name, labels, resources).await
    }

    /// A Ready node with `resources` allocatable (extended resources too), labelled `labels`.
    pub async fn node_with(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
        resources: Value,
    ) -> Result<()> {
        let mut labels = labels.clone();
        labels.insert("kubernetes.io/hostname".into(), name.into());
        self.create(&json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})).await?;
        let status = json!({"status": {"capacity": resources, "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "e2e node"}]}});
        let api: Api<Node> = Api::all(self.client.clone());
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .with_context(|| format!("status of node {name}"))?;
        Ok(())
    }

    /// Nodes `prefix-0..n`, labelled `e2e=<prefix>`.
    pub async fn nodes(&self, prefix: &str, n: usize, cpu: &str, memory: &str) -> Result<()> {
        let labels: BTreeMap<String, String> = [("e2e".to_string(), prefix.to_string())].into();
        futures::stream::iter(0..n)
            .map(|i| {
                let labels = labels.clone();
                async move {
                    self.node(&format!("{prefix}-{i}"), &labels, cpu, memory)
                        .await
                }
            })
            .buffer_unordered(CREATE_CONCURRENCY)
            .try_collect::<Vec<_>>()
            .await
            .map(|_| ())
    }

    pub async fn delete_nodes(&self, prefix: &str) -> Result<()> {
        let api: Api<Node> = Api::all(self.client.clone());
        api.delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels(&format!("e2e={prefix}")),
        )
        .await?;
        Ok(())
    }

    /// Deletes the namespace's pods at once (no kubelet would finish a graceful deletion)
    /// and its PodGroups.
    pub async fn clear_namespace(&self, ns: &str) -> Result<()> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        pods.delete_collection(
            &DeleteParams::default().grace_period(0),
            &ListParams::default(),
        )
        .await?;
        let pgs = self.dynamic(&resource("scheduling.volcano.sh/v1beta1", "PodGroup"), ns);
        pgs.delete_collection(&DeleteParams::default(), &ListParams::default())
            .await?;
        Ok(())
    }

    /// Deletes the namespace's pods one by one, a few at a time, then its PodGroups: a
    /// collection delete of tens of thousands of pods outlasts the API server's request
    /// timeout on a busy machine, and the server drops the connection.
    pub async fn clear_large_namespace(&self, ns: &str) -> Result<()> {
        let names: Vec<String> = self
            .pods(ns)
            .await?
            .into_iter()
            .filter_map(|p| p.metadata.name)
            .collect();
        futures::stream::iter(names)
            .map(|name| async move { self.delete_pod(ns, &name).await })
            .buffer_unordered(CREATE_CONCURRENCY)
            .try_collect::<Vec<_>>()
            .await?;
        self.clear_namespace(ns).await
    }

    pub async fn namespace(&self, ns: &str) -> Result<()> {
        self.create(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .await
    }

    pub async fn pods(&self, ns: &str) -> Result<Vec<Pod>> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        Ok(api.list(&ListParams::default()).await?.items)
    }

    pub async fn delete_pod(&self, ns: &str, name: &str) -> Result<()> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        match api
            .delete(name, &DeleteParams::default().grace_period(0))
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn events(&self, ns: &str) -> Result<Vec<Event>> {
        let api: Api<Event> = Api::namespaced(self.client.clone(), ns);
        Ok(api.list(&ListParams::default()).await?.items)
    }

    /// A PodGroup as JSON, as the API holds it.
    pub async fn pod_group(&self, ns: &str, name: &str) -> Result<Value> {
        let api = self.dynamic(&resource("scheduling.volcano.sh/v1beta1", "PodGroup"), ns);
        Ok(serde_json::to_value(api.get(name).await?)?)
    }

    /// The namespace's PodGroups as JSON, as the API holds them.
    pub async fn pod_groups(&self, ns: &str) -> Result<Vec<Value>> {
        let api = self.dynamic(&resource("scheduling.volcano.sh/v1beta1", "PodGroup"), ns);
        let list = api.list(&ListParams::default()).await?;
        list.items
            .into_iter()
            .map(|pg| Ok(serde_json::to_value(pg)?))
            .collect()
    }

    /// A cluster-scoped or namespaced object as JSON.
    pub async fn get(
        &self,
        api_version: &str,
        kind: &str,
        ns: &str,
        name: &str,
    ) -> Result<Option<Value>> {
        let api = self.dynamic(&resource(api_version, kind), ns);
        Ok(api
            .get_opt(name)
            .await?
            .map(serde_json::to_value)
            .transpose()?)
    }

    /// Merges `patch` into an object, or into its status through the status subresource.
    pub async fn merge(
        &self,
        (api_version, kind): (&str, &str),
        (ns, name): (&str, &str),
        status: bool,
        patch: &Value,
    ) -> Result<()> {
        let api = self.dynamic(&resource(api_version, kind), ns);
        let pp = PatchParams::default();
        let r = if status {
            api.patch_status(name, &pp, &Patch::Merge(patch)).await
        } else {
            api.patch(name, &pp, &Patch::Merge(patch)).await
        };
        r.with_context(|| format!("patch {kind} {ns}/{name}"))?;
        Ok(())
    }

    /// Deletes one object; one that is already gone is no error.
    pub async fn delete(&self, api_version: &str, kind: &str, ns: &str, name: &str) -> Result<()> {
        let api = self.dynamic(&resource(api_version, kind), ns);
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(e).with_context(|| format!("delete {kind} {ns}/{name}")),
        }
    }

    /// Merges `status` into the object's status through its status subresource, as the
    /// controller that owns that status would (a kubelet for pods, the disruption controller
    /// for PodDisruptionBudgets; the e2e cluster runs neither).
    pub async fn patch_status(
        &self,
        api_version: &str,
        kind: &str,
        ns: &str,
        name: &str,
        status: Value,
    ) -> Result<()> {
        let api = self.dynamic(&resource(api_version, kind), ns);
        api.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({ "status": status })),
        )
        .await
        .with_context(|| format!("status of {kind} {ns}/{name}"))?;
        Ok(())
    }

    /// Sets a pod's phase through the status subresource, as a kubelet would.
    pub async fn set_phase(&self, ns: &str, pod: &str, phase: &str) -> Result<()> {
        self.patch_status("v1", "Pod", ns, pod, json!({ "phase": phase }))
            .await
    }

    /// Posts a binding for a pod, as a plain client (the throughput ceiling measurement).
    pub async fn bind(&self, ns: &str, pod: &str, node: &str) -> Result<()> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod, "namespace": ns},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}});
        let _: Value = api
            .create_subresource("binding", pod, &PostParams::default(), &binding)
            .await?;
        Ok(())
    }
}

/// A queue object.
pub fn queue(name: &str, weight: i32) -> Value {
    json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
        "spec": {"weight": weight, "reclaimable": true}})
}

/// A PodGroup object.
pub fn pod_group(ns: &str, name: &str, queue: &str, min_member: i32) -> Value {
    json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"minMember": min_member, "queue": queue}})
}

/// A pod of PodGroup `group` for vc-scheduler, requesting `cpu` and `memory`.
pub fn pod(ns: &str, name: &str, group: &str, cpu: &str, memory: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "annotations": {"scheduling.k8s.io/group-name": group}},
        "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "e2e/none",
            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}})
}
