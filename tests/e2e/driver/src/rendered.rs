//! A Helm chart's scheduler objects as rendered: Volcano's, kept in deploy/volcano-chart/, or
//! tephra's, from `helm template`; and what scenarios read from them (the Deployment's
//! arguments, the ConfigMap it mounts and where).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The rendered objects, in the order of the output.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub objects: Vec<Value>,
}

impl Rendered {
    /// The documents of `text` (`origin` names it in errors).
    pub fn parse(text: &str, origin: &str) -> Result<Rendered> {
        let objects = tephra_adapters::manifest::parse_documents(text, origin)?;
        Ok(Rendered { objects })
    }

    pub fn load(path: &Path) -> Result<Rendered> {
        let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
        Rendered::parse(&text, &path.display().to_string())
    }

    /// The only object of `kind`.
    pub fn one(&self, kind: &str) -> Result<&Value> {
        let mut of_kind = self.objects.iter().filter(|o| o["kind"] == kind);
        match (of_kind.next(), of_kind.next()) {
            (Some(o), None) => Ok(o),
            (None, _) => bail!("no {kind} among the rendered objects"),
            (Some(_), Some(_)) => bail!("more than one {kind} among the rendered objects"),
        }
    }

    /// The object of `kind` named `name`.
    pub fn named(&self, kind: &str, name: &str) -> Option<&Value> {
        self.objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
    }

    /// The Deployment's only container.
    pub fn container(&self) -> Result<&Value> {
        let containers = self.one("Deployment")?["spec"]["template"]["spec"]["containers"]
            .as_array()
            .context("the Deployment has no containers")?;
        match containers.as_slice() {
            [c] => Ok(c),
            _ => bail!("the Deployment has {} containers, not 1", containers.len()),
        }
    }

    /// The container's arguments, as given.
    pub fn args(&self) -> Result<Vec<String>> {
        self.container()?["args"]
            .as_array()
            .context("the scheduler container has no args")?
            .iter()
            .map(|a| {
                a.as_str()
                    .map(str::to_string)
                    .with_context(|| format!("argument {a} is not a string"))
            })
            .collect()
    }

    /// The directory the container mounts the ConfigMap's files in.
    pub fn config_mount_dir(&self) -> Result<String> {
        let config_map = self.one("ConfigMap")?["metadata"]["name"].clone();
        let volumes = self.one("Deployment")?["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .context("the Deployment has no volumes")?;
        let volume = volumes
            .iter()
            .find(|v| v["configMap"]["name"] == config_map)
            .with_context(|| {
                format!("no volume of the Deployment mounts ConfigMap {config_map}")
            })?;
        self.container()?["volumeMounts"]
            .as_array()
            .and_then(|ms| ms.iter().find(|m| m["name"] == volume["name"]))
            .and_then(|m| m["mountPath"].as_str())
            .map(str::to_string)
            .with_context(|| format!("the container does not mount volume {}", volume["name"]))
    }

    /// The ConfigMap's files: name → text.
    pub fn config_files(&self) -> Result<BTreeMap<String, String>> {
        let data = self.one("ConfigMap")?["data"]
            .as_object()
            .context("the ConfigMap has no data")?;
        data.iter()
            .map(|(k, v)| {
                let text = v
                    .as_str()
                    .with_context(|| format!("ConfigMap data {k} is not text"))?;
                Ok((k.clone(), text.to_string()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHART: &str = "---\n# Source: volcano/templates/scheduler.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: s-configmap}\ndata:\n  s.conf: |\n    actions: \"allocate\"\n---\nkind: Deployment\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n      containers:\n      - name: s\n        args: [\"--scheduler-conf=/conf/s.conf\", \"2>&1\"]\n        volumeMounts: [{name: sock, mountPath: /tmp}, {name: cfg, mountPath: /conf}]\n      volumes:\n      - {name: sock, emptyDir: {}}\n      - {name: cfg, configMap: {name: s-configmap}}\n";

    #[test]
    fn arguments_configuration_and_its_mount_are_read_from_the_objects() {
        let r = Rendered::parse(CHART, "chart").unwrap();
        assert_eq!(r.args().unwrap(), ["--scheduler-conf=/conf/s.conf", "2>&1"]);
        assert_eq!(r.config_mount_dir().unwrap(), "/conf");
        assert_eq!(
            r.config_files().unwrap(),
            BTreeMap::from([("s.conf".to_string(), "actions: \"allocate\"\n".to_string())])
        );
    }

    #[test]
    fn a_missing_kind_is_named() {
        let r = Rendered::parse("kind: Service\n", "chart").unwrap();
        assert!(r.args().unwrap_err().to_string().contains("no Deployment"));
    }
}
