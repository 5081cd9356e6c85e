//! Pods grouped by the PodGroup they name, each group in task order.
//!
//! A snapshot lists a job's tasks together, ordered by pod UID, namespace and name. Grouping and
//! sorting every pod at every cycle would make the snapshot's work proportional to the cluster,
//! so the cache keeps this index as pods come and go and a snapshot reads the groups as they
//! stand.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use foldhash::fast::FixedState;
use rayon::prelude::*;

use super::build::GROUP_NAME_ANNOTATION;
use super::group_key::GroupKey;
use crate::api::Pod;

/// The PodGroup a pod names (`scheduling.k8s.io/group-name`), empty when it names none.
pub fn group_name(pod: &Pod) -> &str {
    pod.metadata
        .annotations
        .get(GROUP_NAME_ANNOTATION)
        .map(String::as_str)
        .unwrap_or_default()
}

/// The task order within a job: pod UID (empty when the pod has none), namespace, name.
pub fn task_order(a: &Pod, b: &Pod) -> Ordering {
    fn key(p: &Pod) -> (&str, &str, &str) {
        let m = &p.metadata;
        (&m.uid, &m.namespace, &m.name)
    }
    key(a).cmp(&key(b))
}

/// Pods by namespace, then by the PodGroup they name (`""` for none), each group in task order;
/// a group or namespace left empty is dropped.
#[derive(Debug, Clone, Default)]
pub struct PodsByGroup {
    namespaces: HashMap<String, Groups, FixedState>,
}

/// One namespace's groups, by PodGroup name (hashed with foldhash: a snapshot looks up every
/// job's group, 50k short strings).
type Groups = HashMap<GroupKey, Vec<Arc<Pod>>, FixedState>;

impl PodsByGroup {
    /// The index of `pods`, grouped and sorted in parallel.
    pub fn from_pods<'a>(pods: impl IntoIterator<Item = &'a Arc<Pod>>) -> Self {
        let mut index = PodsByGroup::default();
        for pod in pods {
            index.group_mut(pod).push(pod.clone());
        }
        let mut groups: Vec<&mut Vec<Arc<Pod>>> = index
            .namespaces
            .values_mut()
            .flat_map(|groups| groups.values_mut())
            .collect();
        groups
            .par_iter_mut()
            .for_each(|g| g.sort_by(|a, b| task_order(a, b)));
        index
    }

    /// Number of pods.
    pub fn len(&self) -> usize {
        self.groups().map(|(_, _, pods)| pods.len()).sum()
    }

    /// True when there are no pods.
    pub fn is_empty(&self) -> bool {
        self.namespaces.is_empty()
    }

    /// Adds `pod` at its place in its group.
    pub fn insert(&mut self, pod: Arc<Pod>) {
        let group = self.group_mut(&pod);
        let at = group.partition_point(|p| task_order(p, &pod) != Ordering::Greater);
        group.insert(at, pod);
    }

    /// Removes this very version of `pod`; false when the index does not hold it.
    pub fn remove(&mut self, pod: &Arc<Pod>) -> bool {
        let namespace = pod.metadata.namespace.as_str();
        let Some(groups) = self.namespaces.get_mut(namespace) else {
            return false;
        };
        let name = group_name(pod);
        let Some(group) = groups.get_mut(name.as_bytes()) else {
            return false;
        };
        let Some(at) = position(group, pod) else {
            return false;
        };
        group.remove(at);
        if group.is_empty() {
            groups.remove(name.as_bytes());
            if groups.is_empty() {
                self.namespaces.remove(namespace);
            }
        }
        true
    }

    /// Puts `new` where `old` was when both name the same PodGroup and keep their place in task
    /// order (a status change, a binding), else removes `old` and inserts `new`.
    pub fn replace(&mut self, old: &Arc<Pod>, new: Arc<Pod>) {
        let same_place = old.metadata.namespace == new.metadata.namespace
            && group_name(old) == group_name(&new)
            && task_order(old, &new) == Ordering::Equal;
        if same_place
            && let Some(group) = self
                .namespaces
                .get_mut(old.metadata.namespace.as_str())
                .and_then(|groups| groups.get_mut(group_name(old).as_bytes()))
            && let Some(at) = position(group, old)
        {
            group[at] = new;
            return;
        }
        self.remove(old);
        self.insert(new);
    }

    /// The pods that name PodGroup `name` in `namespace`, in task order.
    pub fn members(&self, namespace: &str, name: &str) -> &[Arc<Pod>] {
        self.namespaces
            .get(namespace)
            .and_then(|groups| groups.get(name.as_bytes()))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// Every group: namespace, PodGroup name (`""` for pods naming none), members in task order.
    pub fn groups(&self) -> impl Iterator<Item = (&str, &str, &[Arc<Pod>])> {
        self.namespaces.iter().flat_map(|(namespace, groups)| {
            groups
                .iter()
                .map(|(name, pods)| (namespace.as_str(), name.as_str(), pods.as_slice()))
        })
    }

    fn group_mut(&mut self, pod: &Pod) -> &mut Vec<Arc<Pod>> {
        let namespace = &pod.metadata.namespace;
        if !self.namespaces.contains_key(namespace) {
            self.namespaces.insert(namespace.clone(), Groups::default());
        }
        let groups = self.namespaces.get_mut(namespace).expect("inserted above");
        groups.entry(GroupKey::new(group_name(pod))).or_default()
    }
}

/// Groups up to this size are searched by address alone: comparing order keys reads every
/// probed pod's strings, a cache miss or two each, more than the scan of a small group.
const SCANNED_GROUP: usize = 64;

/// Where this very version of `pod` sits in `group`.
fn position(group: &[Arc<Pod>], pod: &Arc<Pod>) -> Option<usize> {
    if group.len() <= SCANNED_GROUP {
        return group.iter().position(|p| Arc::ptr_eq(p, pod));
    }
    let from = group.partition_point(|p| task_order(p, pod) == Ordering::Less);
    group[from..]
        .iter()
        .take_while(|p| task_order(p, pod) == Ordering::Equal)
        .position(|p| Arc::ptr_eq(p, pod))
        .map(|offset| from + offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(namespace: &str, name: &str, uid: &str, group: &str) -> Arc<Pod> {
        let mut p = Pod::default();
        p.metadata.namespace = namespace.into();
        p.metadata.name = name.into();
        p.metadata.uid = uid.into();
        if !group.is_empty() {
            p.metadata
                .annotations
                .insert(GROUP_NAME_ANNOTATION.into(), group.into());
        }
        Arc::new(p)
    }

    fn names(pods: &[Arc<Pod>]) -> Vec<&str> {
        pods.iter().map(|p| p.metadata.name.as_str()).collect()
    }

    #[test]
    fn groups_keep_task_order_whatever_the_arrival_order() {
        let (a, b, c) = (
            pod("ns", "a", "u3", "g"),
            pod("ns", "b", "u1", "g"),
            pod("ns", "c", "u2", "g"),
        );
        let mut index = PodsByGroup::default();
        for p in [&a, &b, &c] {
            index.insert(p.clone());
        }
        assert_eq!(names(index.members("ns", "g")), ["b", "c", "a"]);
        let bulk = PodsByGroup::from_pods([&c, &a, &b]);
        assert_eq!(names(bulk.members("ns", "g")), ["b", "c", "a"]);
        assert_eq!((index.len(), bulk.len()), (3, 3));
    }

    #[test]
    fn pods_are_grouped_by_namespace_and_group_name() {
        let index = PodsByGroup::from_pods(&[
            pod("ns", "a", "", "g"),
            pod("other", "b", "", "g"),
            pod("ns", "c", "", ""),
        ]);
        assert_eq!(names(index.members("ns", "g")), ["a"]);
        assert_eq!(names(index.members("other", "g")), ["b"]);
        assert_eq!(names(index.members("ns", "")), ["c"]);
        assert_eq!(index.groups().count(), 3);
    }

    #[test]
    fn remove_takes_out_only_the_version_given() {
        let old = pod("ns", "a", "u", "g");
        let new = pod("ns", "a", "u", "g");
        let mut index = PodsByGroup::from_pods([&old]);
        assert!(!index.remove(&new));
        index.insert(new.clone());
        assert!(index.remove(&old));
        assert!(Arc::ptr_eq(&index.members("ns", "g")[0], &new));
        assert!(index.remove(&new));
        assert!(index.is_empty());
        assert_eq!(index.groups().count(), 0);
    }

    #[test]
    fn replace_keeps_the_place_or_moves_to_the_new_group() {
        let (a, b) = (pod("ns", "a", "u1", "g"), pod("ns", "b", "u2", "g"));
        let mut index = PodsByGroup::from_pods([&a, &b]);
        let a2 = pod("ns", "a", "u1", "g");
        index.replace(&a, a2.clone());
        assert!(Arc::ptr_eq(&index.members("ns", "g")[0], &a2));
        let a3 = pod("ns", "a", "u1", "h");
        index.replace(&a2, a3.clone());
        assert_eq!(names(index.members("ns", "g")), ["b"]);
        assert!(Arc::ptr_eq(&index.members("ns", "h")[0], &a3));
        let b2 = pod("ns", "b", "u0", "h");
        index.replace(&b, b2.clone());
        assert_eq!(names(index.members("ns", "h")), ["b", "a"]);
        assert_eq!(index.groups().count(), 1);
    }

    #[test]
    fn large_groups_are_searched_by_order_key() {
        let pods: Vec<Arc<Pod>> = (0..3 * SCANNED_GROUP)
            .map(|i| pod("ns", &format!("p{i:04}"), "", "g"))
            .collect();
        let mut index = PodsByGroup::from_pods(&pods);
        let twin = pod("ns", "p0100", "", "g");
        assert!(!index.remove(&twin));
        let new = pod("ns", "p0100", "", "g");
        index.replace(&pods[100], new.clone());
        assert!(Arc::ptr_eq(&index.members("ns", "g")[100], &new));
        assert!(index.remove(&new));
        assert!(index.remove(&pods[0]));
        assert_eq!(index.len(), pods.len() - 2);
    }
}
