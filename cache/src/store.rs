//! Objects of one kind in insertion order, so a snapshot sees them in the order the cluster
//! first reported them (Volcano's `NodeList` order matters for tie-breaks).

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use foldhash::fast::FixedState;

/// Objects keyed by `namespace/name`; an update keeps the object's place, a delete frees it.
#[derive(Debug, Clone)]
pub(crate) struct Store<T> {
    next: u64,
    /// Changes made so far (an object stored, replaced, lent for change or removed).
    changes: u64,
    by_seq: BTreeMap<u64, Arc<T>>,
    /// Hashed with foldhash: every event looks its object up here.
    seq_of: HashMap<String, u64, FixedState>,
}

impl<T> Default for Store<T> {
    fn default() -> Self {
        Store {
            next: 0,
            changes: 0,
            by_seq: BTreeMap::new(),
            seq_of: HashMap::default(),
        }
    }
}

impl<T: Clone> Store<T> {
    /// Inserts a new object at the end, or replaces an existing one in place; returns the
    /// stored version.
    pub fn upsert(&mut self, key: String, object: T) -> &Arc<T> {
        self.changes += 1;
        let seq = *self.seq_of.entry(key).or_insert_with(|| {
            self.next += 1;
            self.next
        });
        match self.by_seq.entry(seq) {
            Entry::Occupied(mut slot) => {
                slot.insert(Arc::new(object));
                slot.into_mut()
            }
            Entry::Vacant(slot) => slot.insert(Arc::new(object)),
        }
    }

    /// Removes the object; false when there was none.
    pub fn remove(&mut self, key: &str) -> bool {
        let removed = match self.seq_of.remove(key) {
            Some(seq) => self.by_seq.remove(&seq).is_some(),
            None => false,
        };
        self.changes += u64::from(removed);
        removed
    }

    /// The object under `key`.
    pub fn get(&self, key: &str) -> Option<&Arc<T>> {
        self.seq_of.get(key).and_then(|seq| self.by_seq.get(seq))
    }

    /// The object under `key`, for change: always a fresh copy, so a snapshot that still shares
    /// the old version keeps it, and values memoised on the old version are not carried over.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut T> {
        let seq = self.seq_of.get(key)?;
        let object = self.by_seq.get_mut(seq)?;
        self.changes += 1;
        Some(fresh_copy(object))
    }

    /// Changes made so far: equal counts, no change in between.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// Every object, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<T>> {
        self.by_seq.values()
    }

    /// The same objects in the same places, each a fresh copy, so nothing memoised on them is
    /// shared (a clone starts with an empty memo).
    pub fn fresh_copies(&self) -> Self {
        Store {
            next: self.next,
            changes: self.changes,
            by_seq: self
                .by_seq
                .iter()
                .map(|(&seq, o)| (seq, Arc::new(T::clone(o))))
                .collect(),
            seq_of: self.seq_of.clone(),
        }
    }

    /// Changes, in insertion order, every object `select` picks (each a fresh copy, as with
    /// `get_mut`); the others stay shared with earlier snapshots. `replaced` gets each changed
    /// object's old and new versions as it changes, so the old one can go at once.
    pub fn change_where(
        &mut self,
        select: impl Fn(&T) -> bool,
        mut change: impl FnMut(&mut T),
        mut replaced: impl FnMut(Arc<T>, &Arc<T>),
    ) {
        for object in self.by_seq.values_mut() {
            if select(object) {
                self.changes += 1;
                let old = object.clone();
                change(fresh_copy(object));
                replaced(old, object);
            }
        }
    }

    /// Keeps only the objects for which `keep` is true; returns the others.
    pub fn retain(&mut self, keep: impl Fn(&T) -> bool) -> Vec<Arc<T>> {
        let mut removed = Vec::new();
        self.by_seq.retain(|_, o| {
            let kept = keep(o);
            if !kept {
                removed.push(o.clone());
            }
            kept
        });
        // The key index is walked only when something went: the offline kubelet calls this
        // between every two simulated cycles, and it usually removes nothing.
        if !removed.is_empty() {
            let by_seq = &self.by_seq;
            self.seq_of.retain(|_, seq| by_seq.contains_key(seq));
        }
        self.changes += removed.len() as u64;
        removed
    }
}

/// Replaces the shared object by a copy of it and lends the copy for change.
fn fresh_copy<T: Clone>(object: &mut Arc<T>) -> &mut T {
    *object = Arc::new(T::clone(object));
    Arc::make_mut(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &Store<&'static str>) -> Vec<&'static str> {
        s.iter().map(|o| **o).collect()
    }

    #[test]
    fn fresh_copies_keep_places_and_share_no_object() {
        let mut s = Store::default();
        s.upsert("a".into(), "a1");
        s.upsert("b".into(), "b1");
        let copies = s.fresh_copies();
        assert_eq!(names(&copies), ["a1", "b1"]);
        assert!(s.iter().zip(copies.iter()).all(|(a, b)| !Arc::ptr_eq(a, b)));
        assert_eq!(copies.changes(), s.changes());
    }

    #[test]
    fn update_keeps_first_seen_position() {
        let mut s = Store::default();
        s.upsert("a".into(), "a1");
        s.upsert("b".into(), "b1");
        s.upsert("a".into(), "a2");
        assert_eq!(names(&s), ["a2", "b1"]);
    }

    #[test]
    fn re_added_object_goes_to_the_end() {
        let mut s = Store::default();
        s.upsert("a".into(), "a");
        s.upsert("b".into(), "b");
        assert!(s.remove("a"));
        assert!(!s.remove("a"));
        s.upsert("a".into(), "a");
        assert_eq!(names(&s), ["b", "a"]);
    }

    #[test]
    fn retain_drops_keys_too() {
        let mut s = Store::default();
        s.upsert("a".into(), "a");
        s.upsert("b".into(), "b");
        let removed = s.retain(|o| *o != "a");
        assert_eq!(removed.iter().map(|o| **o).collect::<Vec<_>>(), ["a"]);
        assert!(s.get("a").is_none());
        assert_eq!(names(&s), ["b"]);
    }

    #[test]
    fn get_mut_does_not_change_a_shared_copy() {
        let mut s = Store::default();
        s.upsert("a".into(), String::from("old"));
        let shared = s.get("a").cloned().unwrap();
        *s.get_mut("a").unwrap() = "new".into();
        assert_eq!(*shared, "old");
        assert_eq!(**s.get("a").unwrap(), "new");
    }

    #[test]
    fn a_changed_object_is_a_new_version_even_when_nobody_shares_it() {
        let mut s = Store::default();
        s.upsert("a".into(), String::from("old"));
        let before = Arc::as_ptr(s.get("a").unwrap());
        s.get_mut("a").unwrap().push('!');
        assert_ne!(Arc::as_ptr(s.get("a").unwrap()), before);
    }

    #[test]
    fn change_where_copies_only_the_selected_objects() {
        let mut s = Store::default();
        s.upsert("a".into(), String::from("a"));
        s.upsert("b".into(), String::from("b"));
        let b = s.get("b").cloned().unwrap();
        let mut changed = Vec::new();
        s.change_where(
            |o| o == "a",
            |o| o.push('!'),
            |old, new| changed.push((old, new.clone())),
        );
        assert_eq!(changed.len(), 1);
        assert_eq!((changed[0].0.as_str(), changed[0].1.as_str()), ("a", "a!"));
        assert_eq!(**s.get("a").unwrap(), "a!");
        assert!(Arc::ptr_eq(s.get("b").unwrap(), &b));
    }
}
