//! The selectors of the cluster's Services, ReplicationControllers, ReplicaSets and
//! StatefulSets, from which kube-scheduler's PodTopologySpread builds the selector of its
//! system-default constraints for a pod that sets none (Volcano runs it with
//! `DefaultingType: SystemDefaulting`: pkg/scheduler/plugins/nodeorder/nodeorder.go,
//! `InitPlugin`; the selector: kube-scheduler pkg/scheduler/framework/plugins/helper/spread.go,
//! `DefaultSelector`).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::api::{
    ClusterObject, Pod, ReplicaSet, ReplicationController, Service, StatefulSet, WorkloadKind,
};
use crate::selector::Selector;

/// Services by namespace and name; the workloads by `namespace/name`. The cache keeps one
/// shared copy and changes it (copy on write) as events arrive, so a snapshot takes it as it is.
#[derive(Debug, Default, Clone)]
pub struct WorkloadSelectors {
    pub services: BTreeMap<String, BTreeMap<String, Arc<Service>>>,
    pub replication_controllers: BTreeMap<String, Arc<ReplicationController>>,
    pub replica_sets: BTreeMap<String, Arc<ReplicaSet>>,
    pub stateful_sets: BTreeMap<String, Arc<StatefulSet>>,
}

impl WorkloadSelectors {
    /// Stores one object under its key; any other object is handed back.
    pub fn upsert(&mut self, object: ClusterObject) -> Result<(), ClusterObject> {
        match object {
            ClusterObject::Service(o) => {
                self.services
                    .entry(o.metadata.namespace.clone())
                    .or_default()
                    .insert(o.metadata.name.clone(), Arc::from(o));
            }
            ClusterObject::ReplicationController(o) => {
                self.replication_controllers
                    .insert(o.metadata.key(), Arc::from(o));
            }
            ClusterObject::ReplicaSet(o) => {
                self.replica_sets.insert(o.metadata.key(), Arc::from(o));
            }
            ClusterObject::StatefulSet(o) => {
                self.stateful_sets.insert(o.metadata.key(), Arc::from(o));
            }
            other => return Err(other),
        }
        Ok(())
    }

    /// True when the cluster lists none of these objects: no pod has default constraints.
    pub fn is_empty(&self) -> bool {
        self.services.is_empty()
            && self.replication_controllers.is_empty()
            && self.replica_sets.is_empty()
            && self.stateful_sets.is_empty()
    }

    /// Removes the Service `namespace/name`; false when there was none.
    pub fn remove_service(&mut self, namespace: &str, name: &str) -> bool {
        let Some(in_namespace) = self.services.get_mut(namespace) else {
            return false;
        };
        let removed = in_namespace.remove(name).is_some();
        if in_namespace.is_empty() {
            self.services.remove(namespace);
        }
        removed
    }

    /// The selector of `pod`'s system-default spreading constraints: the label maps of the
    /// Services in its namespace that select it, merged, then its controlling workload's
    /// selector (a ReplicationController's map merged in, a ReplicaSet's or StatefulSet's
    /// requirements added). `None` when that selector is empty, which leaves the pod without
    /// default constraints: the common case of a batch pod that no Service selects and no such
    /// workload controls, answered without reading anything when the namespace has neither.
    pub fn default_selector(&self, pod: &Pod) -> Option<Selector> {
        let namespace = &pod.metadata.namespace;
        let services = self.services.get(namespace);
        let controller = pod.metadata.controller.as_deref();
        if services.is_none() && controller.is_none() {
            return None;
        }
        let labels = &pod.metadata.labels;
        let mut set = BTreeMap::new();
        for selector in services
            .into_iter()
            .flat_map(|s| s.values())
            .filter_map(|s| s.spec.selector.as_ref())
            .filter(|s| Selector::from_set(s).matches(labels))
        {
            set.extend(selector.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let mut added = Vec::new();
        if let Some(owner) = controller {
            let key = format!("{namespace}/{}", owner.name);
            let required = match owner.kind {
                WorkloadKind::ReplicationController => {
                    if let Some(rc) = self.replication_controllers.get(&key) {
                        set.extend(
                            rc.spec
                                .selector
                                .iter()
                                .flatten()
                                .map(|(k, v)| (k.clone(), v.clone())),
                        );
                    }
                    None
                }
                WorkloadKind::ReplicaSet => self.replica_sets.get(&key).map(|rs| &rs.spec.selector),
                WorkloadKind::StatefulSet => {
                    self.stateful_sets.get(&key).map(|ss| &ss.spec.selector)
                }
            };
            // A selector that does not parse, or a nil one, adds nothing.
            if let Some(Ok(Selector::All(reqs))) =
                required.map(|s| Selector::from_label_selector(s.as_ref()))
            {
                added = reqs;
            }
        }
        let Selector::All(mut reqs) = Selector::from_set(&set) else {
            return None;
        };
        reqs.extend(added);
        (!reqs.is_empty()).then_some(Selector::All(reqs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::StringMap;

    fn object(yaml: &str) -> ClusterObject {
        let v: serde_json::Value = serde_saphyr::from_str(yaml).unwrap();
        let kind = v["kind"].as_str().unwrap().to_string();
        match kind.as_str() {
            "Service" => ClusterObject::Service(Box::new(de(v))),
            "ReplicationController" => ClusterObject::ReplicationController(Box::new(de(v))),
            "ReplicaSet" => ClusterObject::ReplicaSet(Box::new(de(v))),
            "StatefulSet" => ClusterObject::StatefulSet(Box::new(de(v))),
            other => panic!("{other}"),
        }
    }

    fn de<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
        serde_json::from_value(v).unwrap()
    }

    fn table(objects: &[&str]) -> WorkloadSelectors {
        let mut t = WorkloadSelectors::default();
        for o in objects {
            t.upsert(object(o)).unwrap();
        }
        t
    }

    fn pod(yaml: &str) -> Pod {
        serde_saphyr::from_str(yaml).unwrap()
    }

    fn labels(pairs: &[(&str, &str)]) -> StringMap {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn services_selecting_the_pod_in_its_namespace_merge_their_maps() {
        let t = table(&[
            "{kind: Service, metadata: {name: web, namespace: ns}, spec: {selector: {app: web}}}",
            "{kind: Service, metadata: {name: tier, namespace: ns}, spec: {selector: {tier: front}}}",
            "{kind: Service, metadata: {name: other, namespace: ns}, spec: {selector: {app: db}}}",
            "{kind: Service, metadata: {name: none, namespace: ns}, spec: {}}",
            "{kind: Service, metadata: {name: web, namespace: elsewhere}, spec: {selector: {app: web}}}",
        ]);
        let p = pod("metadata: {name: p, namespace: ns, labels: {app: web, tier: front, x: y}}");
        let s = t.default_selector(&p).unwrap();
        assert!(s.matches(&labels(&[("app", "web"), ("tier", "front")])));
        assert!(
            !s.matches(&labels(&[("app", "web")])),
            "both services' labels"
        );
        let lone = pod("metadata: {name: q, namespace: ns, labels: {x: y}}");
        assert_eq!(t.default_selector(&lone), None, "no service selects it");
        let other_ns = pod("metadata: {name: r, namespace: quiet, labels: {app: web}}");
        assert_eq!(t.default_selector(&other_ns), None);
    }

    #[test]
    fn the_controlling_workloads_selector_joins_the_services() {
        let t = table(&[
            "{kind: Service, metadata: {name: web, namespace: ns}, spec: {selector: {app: web}}}",
            "{kind: ReplicaSet, metadata: {name: web-1, namespace: ns}, spec: {selector: {matchExpressions: [{key: rev, operator: In, values: ['1']}]}}}",
            "{kind: ReplicationController, metadata: {name: rc, namespace: ns}, spec: {selector: {rc: x}}}",
            "{kind: StatefulSet, metadata: {name: db, namespace: ns}, spec: {selector: {matchLabels: {app: db}}}}",
        ]);
        let owned = |kind: &str, api: &str, name: &str, labels: &str| {
            pod(&format!(
                "metadata: {{name: p, namespace: ns, labels: {{{labels}}}, ownerReferences: [{{apiVersion: {api}, kind: {kind}, name: {name}, controller: true}}]}}"
            ))
        };
        let rs = t
            .default_selector(&owned(
                "ReplicaSet",
                "apps/v1",
                "web-1",
                "app: web, rev: '1'",
            ))
            .unwrap();
        assert!(rs.matches(&labels(&[("app", "web"), ("rev", "1")])));
        assert!(!rs.matches(&labels(&[("app", "web"), ("rev", "2")])));
        let rc = t
            .default_selector(&owned("ReplicationController", "v1", "rc", "rc: x"))
            .unwrap();
        assert!(rc.matches(&labels(&[("rc", "x")])));
        assert!(!rc.matches(&labels(&[("rc", "y")])));
        let ss = t
            .default_selector(&owned("StatefulSet", "apps/v1", "db", "app: db"))
            .unwrap();
        assert!(ss.matches(&labels(&[("app", "db")])));
        assert_eq!(
            t.default_selector(&owned("ReplicaSet", "apps/v1", "gone", "z: z")),
            None,
            "an owner the cluster does not list adds nothing"
        );
    }

    #[test]
    fn removing_the_last_service_of_a_namespace_forgets_the_namespace() {
        let mut t = table(&[
            "{kind: Service, metadata: {name: web, namespace: ns}, spec: {selector: {app: web}}}",
        ]);
        assert!(t.remove_service("ns", "web"));
        assert!(!t.remove_service("ns", "web"));
        assert!(t.services.is_empty());
    }
}
