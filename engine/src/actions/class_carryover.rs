//! Equivalence classes carried from one session to the next. A class's rank of a node depends
//! only on the class's signature and that node's state (`Plugin::node_local`), so it is still
//! right in the next session for every node that changed neither during the session nor
//! between the two snapshots. Those nodes are known: each session's close leaves the nodes it
//! changed (`ClosedSession`), and the cache says which nodes changed between its snapshots
//! (`Snapshot::changed_since`). A class carried over ranks only the others again, instead of
//! every node.
//!
//! Allocate leaves its classes in the session's carryover (`leave`); the next allocate takes
//! them (`take`) only when the session that left them closed and its snapshot is the one the
//! new snapshot follows, under the same configuration. A chain with any gap carries nothing.
//! A class no task of a session asked for is carried on with the nodes that changed since its
//! ranks were right, until they are half of all nodes.

use std::collections::HashMap;
use std::sync::Arc;

use fixedbitset::FixedBitSet;
use foldhash::fast::FixedState;

use super::class_cache::Class;
use crate::config::SchedulerConfig;
use crate::framework::{ClosedSession, SessionState};
use crate::snapshot::SignatureId;

/// Classes left by allocate in the session on snapshot `serial`.
struct LeftClasses {
    serial: u64,
    config: Arc<SchedulerConfig>,
    classes: CarriedClasses,
}

/// Carried classes by their signature (ids are never reused, so a signature id seen again is
/// the same signature).
pub(super) type CarriedClasses = HashMap<SignatureId, CarriedClass, FixedState>;

/// A class carried over.
pub(super) struct CarriedClass {
    pub class: Class,
    /// Nodes whose ranks may be out of date: those changed since the session that last used
    /// the class, up to the one that left it.
    pub stale: FixedBitSet,
}

/// The classes taken over by a session.
pub(super) struct Carried {
    classes: CarriedClasses,
}

impl Carried {
    /// The classes the last session left, when `ssn`'s snapshot directly follows that
    /// session's, which closed, with the same node ids, under the same configuration.
    pub fn take(ssn: &SessionState) -> Option<Carried> {
        let carryover = &ssn.options.carryover;
        let left = carryover.take::<LeftClasses>()?;
        let nodes = ssn.snap.nodes.len();
        let closed = carryover
            .get::<ClosedSession>()
            .filter(|c| c.serial == left.serial && c.changed.len() == nodes);
        let since = ssn
            .snap
            .changed_since
            .as_ref()
            .filter(|c| c.since == left.serial);
        let same_config = Arc::ptr_eq(&left.config, &ssn.config) || *left.config == *ssn.config;
        let (Some(closed), Some(since), true) = (closed, since, same_config) else {
            free(left.classes);
            return None;
        };
        let mut changed = closed.changed;
        for n in &since.nodes {
            changed.insert(n.idx());
        }
        let mut classes = left.classes;
        for c in classes.values_mut() {
            c.stale.union_with(&changed);
        }
        let (classes, outdated): (CarriedClasses, CarriedClasses) = classes
            .into_iter()
            .partition(|(_, c)| !mostly_stale(&c.stale));
        free(outdated);
        Some(Carried { classes })
    }

    /// True when a class of `signature` is carried and not taken yet.
    pub fn has(&self, signature: SignatureId) -> bool {
        self.classes.contains_key(&signature)
    }

    /// The carried class of `signature`, taken out, with the nodes whose ranks may be out of
    /// date.
    pub fn class(&mut self, signature: SignatureId) -> Option<(Class, FixedBitSet)> {
        let c = self.classes.remove(&signature)?;
        Some((c.class, c.stale))
    }

    /// Leaves allocate's classes for the next session, with the classes taken over and not
    /// used again (`unused`).
    pub fn leave(ssn: &SessionState, mut classes: CarriedClasses, unused: Option<Carried>) {
        for (signature, class) in unused.into_iter().flat_map(|u| u.classes) {
            classes.entry(signature).or_insert(class);
        }
        let carryover = &ssn.options.carryover;
        if let Some(old) = carryover.take::<LeftClasses>() {
            free(old.classes);
        }
        carryover.put(LeftClasses {
            serial: ssn.snap.serial,
            config: ssn.config.clone(),
            classes,
        });
    }
}

/// True when more than half the nodes are stale: ranking them all afresh then costs less than
/// bringing a carried class up to date.
pub(super) fn mostly_stale(stale: &FixedBitSet) -> bool {
    stale.count_ones(..) * 2 > stale.len()
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

    use super::Carried;
    use crate::framework::Carryover;
    use crate::framework::{Session, SessionOptions};
    use crate::harness::Harness;

    const CONF: &str =
        "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n  - name: nodeorder\n";

    fn cluster(conf: &str) -> Harness {
        cluster_asking(conf, "1")
    }

    /// Five nodes and one pending pod asking for `cpu`.
    fn cluster_asking(conf: &str, cpu: &str) -> Harness {
        let nodes = ["n1", "n2", "n3", "n4", "n5"];
        let h = Harness::new(conf).queue("q", 1);
        let h = nodes.iter().fold(h, |h, n| h.node(n, "4", "8Gi", &[]));
        h.pod_group("ns", "pg", "q", 1)
            .pod("ns", "p", "pg", cpu, "1Gi")
    }

    fn with(carryover: &Arc<Carryover>) -> SessionOptions {
        SessionOptions {
            carryover: carryover.clone(),
            ..Default::default()
        }
    }

    /// Runs allocate and closes; returns the snapshot's serial and the node of the one bind.
    fn allocate_and_close(mut ssn: Session) -> (u64, String) {
        crate::actions::run(&mut ssn, crate::config::Action::Allocate);
        let node = ssn.state.snap.nodes.name[ssn.binds[0].1.idx()].clone();
        let serial = ssn.state.snap.serial;
        ssn.close();
        (serial, node)
    }

    #[test]
    fn the_next_session_takes_the_classes_with_the_nodes_changed_in_between() {
        let carryover = Arc::new(Carryover::default());
        let first = cluster(CONF).open_with(with(&carryover)).unwrap();
        let (serial, placed) = allocate_and_close(first);
        let next = cluster(CONF)
            .nodes_changed_since(serial, &["n3"])
            .open_with(with(&carryover))
            .unwrap();
        let carried = Carried::take(&next.state).expect("the snapshot follows");
        let classes: Vec<_> = carried.classes.values().collect();
        assert_eq!(classes.len(), 1);
        let names = &next.state.snap.nodes.name;
        let stale = classes[0].stale.ones();
        let mut changed: Vec<&str> = stale.map(|n| names[n].as_str()).collect();
        changed.sort_unstable();
        let mut expected = vec![placed.as_str(), "n3"];
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(changed, expected, "the placement's node and the listed one");
        assert!(Carried::take(&next.state).is_none(), "taken once");
    }

    #[test]
    fn nothing_is_carried_across_a_gap_an_unclosed_session_or_a_new_configuration() {
        let carryover = Arc::new(Carryover::default());
        let open = |since: Option<u64>, conf: &str| {
            let h = cluster(conf);
            let h = match since {
                Some(s) => h.nodes_changed_since(s, &[]),
                None => h,
            };
            h.open_with(with(&carryover)).unwrap()
        };
        let (serial, _) = allocate_and_close(open(None, CONF));
        assert!(Carried::take(&open(None, CONF).state).is_none(), "no list");
        let (serial, _) = allocate_and_close(open(Some(serial), CONF));
        assert!(
            Carried::take(&open(Some(serial + 1000), CONF).state).is_none(),
            "another snapshot"
        );
        let (serial, _) = allocate_and_close(open(Some(serial), CONF));
        let other = format!("{CONF}  - name: binpack\n");
        assert!(
            Carried::take(&open(Some(serial), &other).state).is_none(),
            "another configuration"
        );
        let mut unclosed = open(Some(serial), CONF);
        crate::actions::run(&mut unclosed, crate::config::Action::Allocate);
        let serial = unclosed.state.snap.serial;
        drop(unclosed);
        assert!(
            Carried::take(&open(Some(serial), CONF).state).is_none(),
            "not closed"
        );
        let (serial, _) = allocate_and_close(open(Some(serial), CONF));
        assert!(Carried::take(&open(Some(serial), CONF).state).is_some());
    }

    #[test]
    fn a_class_no_task_asked_for_is_carried_on_with_every_node_changed_since_it_was_used() {
        let carryover = Arc::new(Carryover::default());
        let signature = |ssn: &Session| ssn.state.snap.tasks.signature[0];
        let first = cluster_asking(CONF, "1")
            .open_with(with(&carryover))
            .unwrap();
        let one_cpu = signature(&first);
        let (serial, first_node) = allocate_and_close(first);
        let second = cluster_asking(CONF, "2")
            .nodes_changed_since(serial, &["n5"])
            .open_with(with(&carryover))
            .unwrap();
        let two_cpus = signature(&second);
        assert_ne!(one_cpu, two_cpus);
        let (serial, second_node) = allocate_and_close(second);
        let third = cluster_asking(CONF, "1")
            .nodes_changed_since(serial, &[])
            .open_with(with(&carryover))
            .unwrap();
        let carried = Carried::take(&third.state).expect("the snapshot follows");
        let names = &third.state.snap.nodes.name;
        let stale_of = |id| -> Vec<&str> {
            let c = &carried.classes[&id];
            c.stale.ones().map(|n| names[n].as_str()).collect()
        };
        let mut unused = vec![first_node.as_str(), "n5", second_node.as_str()];
        unused.sort_unstable();
        unused.dedup();
        assert_eq!(carried.classes.len(), 2);
        assert_eq!(stale_of(one_cpu), unused);
        assert_eq!(stale_of(two_cpus), vec![second_node.as_str()]);
    }
}
