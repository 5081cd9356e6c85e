//! Equivalence classes carried from one session to the next. A class's rank of a node depends
//! only on the class's signature and that node's state (`Plugin::node_local`), so it is still
//! right in the next session for every node that changed neither during the session nor
//! between the two snapshots. Those nodes are known: the session logs the nodes it changes, and
//! the cache says which nodes changed between its snapshots (`Snapshot::changed_since`). A class
//! carried over ranks only the others again, instead of every node.
//!
//! The hand-over has three steps, each checked, so a chain with any gap carries nothing:
//! allocate leaves its classes (`leave`), the session's close seals them with the nodes it
//! changed (`seal`), and the next allocate takes them when its snapshot follows the sealed one
//! directly under the same configuration (`take`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use fixedbitset::FixedBitSet;
use foldhash::fast::FixedState;

use super::class_cache::{Class, Signature};
use crate::api::Pod;
use crate::config::SchedulerConfig;
use crate::framework::SessionState;
use crate::model::Resource;

/// What one session's classes leave to the next session of the same scheduler. The scheduler
/// loop owns one and hands it to every session (`SessionOptions::class_carryover`), as it does
/// the timers; a fresh one carries nothing.
#[derive(Default)]
pub struct ClassCarryover(Mutex<Stage>);

impl std::fmt::Debug for ClassCarryover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClassCarryover")
    }
}

#[derive(Default)]
enum Stage {
    #[default]
    Empty,
    /// Left by allocate in the session on snapshot `serial`, which has not closed yet.
    Left(Left),
    /// The session closed: `changed` holds the nodes it changed.
    Sealed(Left, FixedBitSet),
}

struct Left {
    serial: u64,
    config: Arc<SchedulerConfig>,
    classes: CarriedClasses,
}

/// Carried classes by their signature's hash.
pub(super) type CarriedClasses = HashMap<u64, Vec<CarriedClass>, FixedState>;

/// A class with its founder's pod and request, which stand for its signature.
pub(super) struct CarriedClass {
    pub founder: Arc<Pod>,
    pub request: Resource,
    pub class: Class,
}

/// The classes taken over by a session, and the nodes whose ranks may have moved since.
pub(super) struct Carried {
    classes: CarriedClasses,
    pub changed: FixedBitSet,
}

impl Carried {
    /// The carried class of signature `sig` (hashed to `hash`), taken out.
    pub fn take(&mut self, hash: u64, sig: &Signature) -> Option<Class> {
        let same = self.classes.get_mut(&hash)?;
        let i = same
            .iter()
            .position(|c| Signature::new(&c.founder, &c.request) == *sig)?;
        Some(same.swap_remove(i).class)
    }
}

impl ClassCarryover {
    /// The classes left by the session before, when `ssn`'s snapshot follows that session's
    /// directly, with the same node ids, under the same configuration.
    pub(super) fn take(&self, ssn: &SessionState) -> Option<Carried> {
        let stage = std::mem::take(&mut *self.lock());
        let Stage::Sealed(left, mut changed) = stage else {
            return None;
        };
        let usable = ssn.snap.changed_since.as_ref().filter(|c| {
            c.since == left.serial
                && changed.len() == ssn.snap.nodes.len()
                && (Arc::ptr_eq(&left.config, &ssn.config) || *left.config == *ssn.config)
        });
        let Some(since) = usable else {
            free(left.classes);
            return None;
        };
        for n in &since.nodes {
            changed.insert(n.idx());
        }
        Some(Carried {
            classes: left.classes,
            changed,
        })
    }

    /// Allocate's classes, for the next session once this one is sealed. Classes taken over
    /// and not used again are let go.
    pub(super) fn leave(
        &self,
        ssn: &SessionState,
        classes: CarriedClasses,
        unused: Option<Carried>,
    ) {
        if let Some(unused) = unused {
            free(unused.classes);
        }
        let left = Left {
            serial: ssn.snap.serial,
            config: ssn.config.clone(),
            classes,
        };
        if let Stage::Left(old) | Stage::Sealed(old, _) =
            std::mem::replace(&mut *self.lock(), Stage::Left(left))
        {
            free(old.classes);
        }
    }

    /// The session on `ssn`'s snapshot closes: what its allocate left is sealed with every node
    /// the session changed. Anything else is let go.
    pub fn seal(&self, ssn: &SessionState) {
        let mut stage = self.lock();
        *stage = match std::mem::take(&mut *stage) {
            Stage::Left(left) if left.serial == ssn.snap.serial && ssn.snap.serial != 0 => {
                let mut changed = FixedBitSet::with_capacity(ssn.snap.nodes.len());
                for n in &ssn.node_changes {
                    changed.insert(n.idx());
                }
                Stage::Sealed(left, changed)
            }
            Stage::Left(old) | Stage::Sealed(old, _) => {
                free(old.classes);
                Stage::Empty
            }
            Stage::Empty => Stage::Empty,
        };
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stage> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Frees classes on the thread pool: each holds a rank per node.
fn free(classes: CarriedClasses) {
    if !classes.is_empty() {
        rayon::spawn(move || drop(classes));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::ClassCarryover;
    use crate::framework::{Session, SessionOptions};
    use crate::harness::Harness;

    const CONF: &str =
        "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n  - name: nodeorder\n";

    fn cluster(conf: &str) -> Harness {
        Harness::new(conf)
            .queue("q", 1)
            .node("n1", "4", "8Gi", &[])
            .node("n2", "4", "8Gi", &[])
            .node("n3", "4", "8Gi", &[])
            .pod_group("ns", "pg", "q", 1)
            .pod("ns", "p", "pg", "1", "1Gi")
    }

    fn with(carryover: &Arc<ClassCarryover>) -> SessionOptions {
        SessionOptions {
            class_carryover: carryover.clone(),
            ..Default::default()
        }
    }

    /// Runs allocate and closes; returns the snapshot's serial and the node of the one bind.
    fn allocate_and_close(mut ssn: Session) -> (u64, String) {
        crate::actions::run(&mut ssn, "allocate");
        let node = ssn.state.snap.nodes.name[ssn.binds[0].1.idx()].clone();
        let serial = ssn.state.snap.serial;
        ssn.close();
        (serial, node)
    }

    #[test]
    fn the_next_session_takes_the_classes_with_the_nodes_changed_in_between() {
        let carryover = Arc::new(ClassCarryover::default());
        let first = cluster(CONF).open_with(with(&carryover)).unwrap();
        let (serial, placed) = allocate_and_close(first);
        let next = cluster(CONF)
            .nodes_changed_since(serial, &["n3"])
            .open_with(with(&carryover))
            .unwrap();
        let carried = carryover.take(&next.state).expect("the snapshot follows");
        assert_eq!(carried.classes.values().flatten().count(), 1);
        let names = &next.state.snap.nodes.name;
        let mut changed: Vec<&str> = carried.changed.ones().map(|n| names[n].as_str()).collect();
        changed.sort_unstable();
        let mut expected = vec![placed.as_str(), "n3"];
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(changed, expected, "the placement's node and the listed one");
        assert!(carryover.take(&next.state).is_none(), "taken once");
    }

    #[test]
    fn nothing_is_carried_across_a_gap_an_unclosed_session_or_a_new_configuration() {
        let carryover = Arc::new(ClassCarryover::default());
        let open = |since: Option<u64>, conf: &str| {
            let h = cluster(conf);
            let h = match since {
                Some(s) => h.nodes_changed_since(s, &[]),
                None => h,
            };
            h.open_with(with(&carryover)).unwrap()
        };
        let (serial, _) = allocate_and_close(open(None, CONF));
        assert!(carryover.take(&open(None, CONF).state).is_none(), "no list");
        let (serial, _) = allocate_and_close(open(Some(serial), CONF));
        assert!(
            carryover
                .take(&open(Some(serial + 1000), CONF).state)
                .is_none(),
            "another snapshot"
        );
        let (serial, _) = allocate_and_close(open(Some(serial), CONF));
        let other = format!("{CONF}  - name: binpack\n");
        assert!(
            carryover.take(&open(Some(serial), &other).state).is_none(),
            "another configuration"
        );
        let mut unclosed = open(Some(serial), CONF);
        crate::actions::run(&mut unclosed, "allocate");
        let serial = unclosed.state.snap.serial;
        drop(unclosed);
        assert!(
            carryover.take(&open(Some(serial), CONF).state).is_none(),
            "not sealed"
        );
        let (serial, _) = allocate_and_close(open(Some(serial), CONF));
        assert!(carryover.take(&open(Some(serial), CONF).state).is_some());
    }
}
