//! Values one session leaves for the next session of the same scheduler, one per type, as
//! `Derived` keeps values for one snapshot. The scheduler loop owns one `Carryover` and hands it
//! to every session (`SessionOptions::carryover`); a fresh one holds nothing.
//!
//! A carried value describes an earlier snapshot, so whoever takes it checks that it still
//! applies: the new snapshot says which nodes changed since which earlier one
//! (`Snapshot::changed_since`), and every session's close leaves the nodes it changed
//! (`ClosedSession`).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use fixedbitset::FixedBitSet;

use super::SessionState;

/// Values left by earlier sessions, by type.
#[derive(Default)]
pub struct Carryover(Mutex<HashMap<TypeId, Box<dyn Any + Send>>>);

impl std::fmt::Debug for Carryover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Carryover")
    }
}

impl Carryover {
    /// The value of type `T`, taken out.
    pub fn take<T: Any + Send>(&self) -> Option<T> {
        let value = self.lock().remove(&TypeId::of::<T>())?;
        value.downcast::<T>().ok().map(|v| *v)
    }

    /// A copy of the value of type `T`, left in place.
    pub fn get<T: Any + Send + Clone>(&self) -> Option<T> {
        let values = self.lock();
        values.get(&TypeId::of::<T>())?.downcast_ref::<T>().cloned()
    }

    /// Leaves `value` for the next session, in place of the last value of its type.
    pub fn put<T: Any + Send>(&self, value: T) {
        self.lock().insert(TypeId::of::<T>(), Box::new(value));
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<TypeId, Box<dyn Any + Send>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The last session that closed: its snapshot's serial and the nodes it changed (allocations,
/// pipelines, evictions, and any of them undone).
#[derive(Debug, Clone, Default)]
pub struct ClosedSession {
    pub serial: u64,
    pub changed: FixedBitSet,
}

impl ClosedSession {
    /// Leaves the closing session's serial and changed nodes in its carryover.
    pub fn leave(ssn: &SessionState) {
        let mut changed = FixedBitSet::with_capacity(ssn.snap.nodes.len());
        for n in ssn.nodes.changes() {
            changed.insert(n.idx());
        }
        let serial = ssn.snap.serial;
        ssn.options.carryover.put(ClosedSession { serial, changed });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_one_value_per_type_until_taken() {
        let c = Carryover::default();
        assert_eq!(c.take::<u32>(), None);
        c.put(1u32);
        c.put(2u32);
        c.put("x");
        assert_eq!(c.get::<u32>(), Some(2), "the last one, left in place");
        assert_eq!(c.take::<u32>(), Some(2));
        assert_eq!(c.take::<u32>(), None);
        assert_eq!(c.take::<&str>(), Some("x"));
    }
}
