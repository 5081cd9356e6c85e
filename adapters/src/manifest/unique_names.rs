//! One object per kind, namespace and name, as in a cluster: a second one in the input would
//! silently replace the first, so it is refused with both places named.

use std::collections::HashMap;

use tephra_cache::{ObjectKind, meta_of};
use tephra_engine::api::ClusterObject;

/// The objects admitted so far, each with the place it came from.
#[derive(Debug, Default)]
pub struct UniqueNames {
    seen: HashMap<(ObjectKind, String, String), String>,
}

impl UniqueNames {
    /// Admits `object` found at `place` (`f.yaml: document 3`); `Err` with the message when an
    /// object of the same kind, namespace and name came earlier.
    pub fn admit(&mut self, object: &ClusterObject, place: &str) -> Result<(), String> {
        let meta = meta_of(object);
        let key = (
            ObjectKind::of(object),
            meta.namespace.to_string(),
            meta.name.to_string(),
        );
        match self.seen.get(&key) {
            Some(earlier) => Err(format!(
                "duplicate name: {earlier} already has this {} (names are unique per kind and namespace, as in a cluster)",
                key.0.name()
            )),
            None => {
                self.seen.insert(key, place.to_string());
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::api::{Pod, Queue};

    fn pod(ns: &str, name: &str) -> ClusterObject {
        let mut p = Pod::default();
        p.metadata.namespace = ns.into();
        p.metadata.name = name.into();
        ClusterObject::Pod(Box::new(p))
    }

    #[test]
    fn a_second_object_of_one_kind_namespace_and_name_is_refused_naming_the_first() {
        let mut names = UniqueNames::default();
        names.admit(&pod("ns", "p"), "a.yaml: document 0").unwrap();
        names
            .admit(&pod("other", "p"), "a.yaml: document 1")
            .unwrap();
        let mut q = Queue::default();
        q.metadata.name = "p".into();
        names
            .admit(&ClusterObject::Queue(Box::new(q)), "a.yaml: document 2")
            .unwrap();
        assert_eq!(
            names.admit(&pod("ns", "p"), "b.yaml: document 0"),
            Err("duplicate name: a.yaml: document 0 already has this Pod (names are unique per kind and namespace, as in a cluster)".into())
        );
    }
}
