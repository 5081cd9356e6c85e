//! The cache's pods: the store, plus the same pods grouped by PodGroup in task order
//! (`PodsByGroup`), which every change keeps in step so a snapshot need not group or sort them.

use std::collections::HashSet;
use std::sync::Arc;

use tephra_engine::api::Pod;
use tephra_engine::snapshot::PodsByGroup;

use crate::store::Store;

/// Pods by `namespace/name`, in the order first seen, and by group.
#[derive(Debug, Clone, Default)]
pub(crate) struct PodStore {
    pods: Store<Pod>,
    by_group: PodsByGroup,
    /// Nodes a pod came to, left or changed on since the last `take_touched_nodes`.
    touched_nodes: HashSet<String>,
}

impl PodStore {
    /// Stores a created or replaced pod; returns the stored version.
    pub fn upsert(&mut self, key: String, pod: Pod) -> Arc<Pod> {
        let old = self.pods.get(&key).cloned();
        let new = self.pods.upsert(key, pod).clone();
        self.touch(&new);
        match old {
            Some(old) => {
                self.touch(&old);
                self.by_group.replace(&old, new.clone());
            }
            None => self.by_group.insert(new.clone()),
        }
        new
    }

    /// Removes the pod; false when there was none.
    pub fn remove(&mut self, key: &str) -> bool {
        let Some(old) = self.pods.get(key).cloned() else {
            return false;
        };
        self.touch(&old);
        self.by_group.remove(&old);
        self.pods.remove(key)
    }

    /// The pod under `key`.
    pub fn get(&self, key: &str) -> Option<&Arc<Pod>> {
        self.pods.get(key)
    }

    /// Changes the pod under `key` (a fresh copy, see `Store::get_mut`); returns the new version.
    pub fn change(&mut self, key: &str, change: impl FnOnce(&mut Pod)) -> Option<Arc<Pod>> {
        let old = self.pods.get(key)?.clone();
        change(self.pods.get_mut(key)?);
        let new = self.pods.get(key)?.clone();
        self.touch(&old);
        self.touch(&new);
        self.by_group.replace(&old, new.clone());
        Some(new)
    }

    /// Changes every pod `select` picks (see `Store::change_where`); returns the new versions.
    pub fn change_where(
        &mut self,
        select: impl Fn(&Pod) -> bool,
        change: impl FnMut(&mut Pod),
    ) -> Vec<Arc<Pod>> {
        let mut changed = Vec::new();
        let (by_group, touched) = (&mut self.by_group, &mut self.touched_nodes);
        self.pods.change_where(select, change, |old, new| {
            touch(touched, &old);
            touch(touched, new);
            by_group.replace(&old, new.clone());
            changed.push(new.clone());
        });
        changed
    }

    /// Keeps only the pods for which `keep` is true.
    pub fn retain(&mut self, keep: impl Fn(&Pod) -> bool) {
        for old in self.pods.retain(keep) {
            self.touch(&old);
            self.by_group.remove(&old);
        }
    }

    /// The nodes whose pods changed since the last call (by name; the pods' bound nodes).
    pub fn take_touched_nodes(&mut self) -> HashSet<String> {
        std::mem::take(&mut self.touched_nodes)
    }

    fn touch(&mut self, pod: &Pod) {
        touch(&mut self.touched_nodes, pod);
    }

    /// Every pod, in the order first seen.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Pod>> {
        self.pods.iter()
    }

    /// Changes made so far: equal counts, no change in between.
    pub fn changes(&self) -> u64 {
        self.pods.changes()
    }

    /// The same pods, each a fresh copy, grouped afresh (not kept in step change by change).
    pub fn fresh_copies(&self) -> Self {
        let pods = self.pods.fresh_copies();
        let by_group = PodsByGroup::from_pods(pods.iter());
        PodStore {
            pods,
            by_group,
            touched_nodes: HashSet::new(),
        }
    }

    /// The pods grouped by PodGroup, each group in task order.
    pub fn by_group(&self) -> &PodsByGroup {
        &self.by_group
    }
}

/// Records the node `pod` is bound to, if any.
fn touch(touched: &mut HashSet<String>, pod: &Pod) {
    let node = &pod.spec.node_name;
    if !node.is_empty() && !touched.contains(node) {
        touched.insert(node.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::snapshot::GROUP_NAME_ANNOTATION;

    fn pod(name: &str, uid: &str, group: &str) -> Pod {
        let mut p = Pod::default();
        p.metadata.namespace = "ns".into();
        p.metadata.name = name.into();
        p.metadata.uid = uid.into();
        p.metadata
            .annotations
            .insert(GROUP_NAME_ANNOTATION.into(), group.into());
        p
    }

    /// The group index holds exactly the store's current versions.
    fn assert_in_step(s: &PodStore) {
        let mut stored: Vec<*const Pod> = s.iter().map(Arc::as_ptr).collect();
        let mut grouped: Vec<*const Pod> = s
            .by_group()
            .groups()
            .flat_map(|g| g.2.iter().map(Arc::as_ptr))
            .collect();
        stored.sort();
        grouped.sort();
        assert_eq!(stored, grouped);
    }

    fn members(s: &PodStore, group: &str) -> Vec<String> {
        let pods = s.by_group().members("ns", group);
        pods.iter().map(|p| p.metadata.name.clone()).collect()
    }

    #[test]
    fn every_change_keeps_the_group_index_in_step() {
        let mut s = PodStore::default();
        s.upsert("ns/a".into(), pod("a", "u2", "g"));
        s.upsert("ns/b".into(), pod("b", "u1", "g"));
        assert_eq!(members(&s, "g"), ["b", "a"]);
        s.upsert("ns/a".into(), pod("a", "u2", "h"));
        assert_eq!(
            (members(&s, "g"), members(&s, "h")),
            (vec!["b".into()], vec!["a".into()])
        );
        s.change("ns/b", |p| p.spec.node_name = "n1".into());
        assert_eq!(s.by_group().members("ns", "g")[0].spec.node_name, "n1");
        let started = s.change_where(
            |p| !p.spec.node_name.is_empty(),
            |p| p.status.phase = "Running".into(),
        );
        assert_eq!(started.len(), 1);
        assert_in_step(&s);
        s.retain(|p| p.metadata.name != "b");
        assert!(members(&s, "g").is_empty());
        assert!(s.remove("ns/a"));
        assert!(!s.remove("ns/a"));
        assert_in_step(&s);
        assert!(s.by_group().is_empty());
    }

    #[test]
    fn every_change_records_the_nodes_of_the_versions_it_replaces_and_stores() {
        let on = |name: &str, node: &str| {
            let mut p = pod(name, name, "g");
            p.spec.node_name = node.into();
            p
        };
        let mut s = PodStore::default();
        let touched = |s: &mut PodStore| {
            let mut names: Vec<String> = s.take_touched_nodes().into_iter().collect();
            names.sort();
            names
        };
        s.upsert("ns/a".into(), on("a", "n1"));
        s.upsert("ns/b".into(), on("b", ""));
        assert_eq!(touched(&mut s), ["n1"], "a pending pod touches no node");
        assert!(touched(&mut s).is_empty(), "taken");
        s.upsert("ns/a".into(), on("a", "n2"));
        assert_eq!(
            touched(&mut s),
            ["n1", "n2"],
            "left one node, came to another"
        );
        s.change("ns/b", |p| p.spec.node_name = "n3".into());
        assert_eq!(touched(&mut s), ["n3"]);
        s.change_where(
            |p| p.spec.node_name == "n3",
            |p| p.spec.node_name = "n4".into(),
        );
        assert_eq!(touched(&mut s), ["n3", "n4"]);
        s.retain(|p| p.metadata.name != "b");
        assert_eq!(touched(&mut s), ["n4"]);
        s.remove("ns/a");
        assert_eq!(touched(&mut s), ["n2"]);
    }
}
