//! The cluster's namespaces by name, for the labels an inter-pod affinity term's
//! `namespaceSelector` is matched against (kube-scheduler:
//! pkg/scheduler/framework/plugins/interpodaffinity, `GetNamespaceLabelsSnapshot`).

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use crate::api::{Namespace, StringMap};

/// Labels of a namespace the cluster does not list: none, as kube-scheduler's snapshot of an
/// unknown namespace's labels has none.
static NO_LABELS: LazyLock<StringMap> = LazyLock::new(StringMap::new);

/// Namespaces by name.
#[derive(Debug, Clone, Default)]
pub struct NamespaceTable {
    by_name: BTreeMap<String, Arc<Namespace>>,
}

impl NamespaceTable {
    pub fn insert(&mut self, namespace: &Arc<Namespace>) {
        self.by_name
            .insert(namespace.metadata.name.clone(), namespace.clone());
    }

    /// The labels of namespace `name`; none when the cluster does not list it.
    pub fn labels(&self, name: &str) -> &StringMap {
        self.by_name
            .get(name)
            .map_or(&NO_LABELS, |n| &n.metadata.labels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_namespace_has_its_labels_and_an_unknown_one_has_none() {
        let mut t = NamespaceTable::default();
        let mut ns = Namespace::default();
        ns.metadata.name = "team-a".into();
        ns.metadata.labels.insert("team".into(), "a".into());
        t.insert(&Arc::new(ns));
        assert_eq!(
            t.labels("team-a").get("team").map(String::as_str),
            Some("a")
        );
        assert!(t.labels("other").is_empty());
    }
}
