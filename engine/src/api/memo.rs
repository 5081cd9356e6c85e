//! Values derived from one version of an object, computed once and kept with it.
//!
//! The cache hands the same `Arc<Pod>` to every snapshot until the pod changes, so what a cycle
//! derives from a pod alone (its request, its parsed affinity terms) can be kept on the object and
//! reused by the next cycle: only pods that changed are derived again. A changed object is a new
//! value, and a clone starts with an empty memo, so a memoised value never outlives the version
//! it was derived from.

use std::any::{Any, TypeId};
use std::cell::LazyCell;
use std::sync::{Arc, OnceLock};

/// How many derived types one object keeps by default; a value of one more type is computed
/// every time it is asked for (correct, just not memoised).
const SLOTS: usize = 4;

/// A memoised value, of the type its entry's id names.
type Value = Arc<dyn Any + Send + Sync>;

type Entry = (TypeId, Value);

/// A small type-keyed store of derived values, one per type. Reads take no lock: every cycle
/// reads each pod's values from several threads.
pub struct Memo<const N: usize = SLOTS> {
    slots: [OnceLock<Entry>; N],
}

impl<const N: usize> Default for Memo<N> {
    fn default() -> Self {
        Memo {
            slots: std::array::from_fn(|_| OnceLock::new()),
        }
    }
}

impl<const N: usize> Memo<N> {
    /// The value of type `T`, computed by `make` the first time it is asked for.
    pub fn get_or_init<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        match self.slot(make) {
            Ok(value) => match Arc::clone(value).downcast::<T>() {
                Ok(found) => found,
                Err(_) => unreachable!("a slot holds a value of the type its id names"),
            },
            Err(made) => made,
        }
    }

    /// Like `get_or_init`, but lends the value instead of sharing it, so no reference count is
    /// touched (a snapshot reads every pod's values each cycle); `None` when every slot already
    /// holds another type.
    pub fn get_or_init_ref<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Option<&T> {
        self.slot(make).ok()?.downcast_ref::<T>()
    }

    /// The value of type `T`, lent where a slot holds it (no reference count touched), else
    /// shared, made once either way.
    pub fn lend<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Lent<'_, T> {
        match self.slot(make) {
            Ok(value) => match value.downcast_ref::<T>() {
                Some(found) => Lent::Borrowed(found),
                None => unreachable!("a slot holds a value of the type its id names"),
            },
            Err(made) => Lent::Shared(made),
        }
    }

    /// The value of type `T` in its slot, made by `make` into the first free slot when no slot
    /// holds one yet; `Err(value)`, made and not kept, when every slot holds another type.
    fn slot<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Result<&Value, Arc<T>> {
        let id = TypeId::of::<T>();
        let made = LazyCell::new(|| Arc::new(make()));
        for slot in &self.slots {
            let (t, value) = slot.get_or_init(|| (id, Arc::clone(&*made) as Value));
            if *t == id {
                return Ok(value);
            }
        }
        Err(Arc::clone(&*made))
    }
}

/// A memoised value, lent by its memo, or shared when the memo had no slot left for its type.
pub enum Lent<'a, T> {
    Borrowed(&'a T),
    Shared(Arc<T>),
}

impl<T> std::ops::Deref for Lent<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self {
            Lent::Borrowed(value) => value,
            Lent::Shared(value) => value,
        }
    }
}

/// A copy is a new version of the object: it starts with nothing memoised.
impl<const N: usize> Clone for Memo<N> {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

/// Derived values are not part of an object's identity.
impl<const N: usize> PartialEq for Memo<N> {
    fn eq(&self, _: &Memo<N>) -> bool {
        true
    }
}

impl<const N: usize> std::fmt::Debug for Memo<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lends_the_value_it_shares() {
        let m: Memo = Memo::default();
        let shared = m.get_or_init(|| 7u64);
        let lent = m.get_or_init_ref::<u64>(|| unreachable!("computed once"));
        assert!(std::ptr::eq(lent.unwrap(), &*shared));
        assert_eq!(m.get_or_init_ref(|| 'x'), Some(&'x'));
    }

    #[test]
    fn lends_nothing_once_the_slots_are_full() {
        let m: Memo = Memo::default();
        m.get_or_init(|| 1u8);
        m.get_or_init(|| 1u16);
        m.get_or_init(|| 1u32);
        m.get_or_init(|| 1u64);
        assert_eq!(m.get_or_init_ref(|| 1i8), None);
        assert_eq!(m.get_or_init_ref::<u16>(|| 2), Some(&1));
    }

    #[test]
    fn a_one_slot_memo_keeps_one_type_and_still_gives_others() {
        let m: Memo<1> = Memo::default();
        assert_eq!(m.get_or_init_ref(|| 1u8), Some(&1));
        assert_eq!(m.get_or_init_ref(|| 2u16), None);
        assert_eq!(*m.get_or_init(|| 2u16), 2);
        assert_eq!(m.get_or_init_ref::<u8>(|| unreachable!("kept")), Some(&1));
    }

    #[test]
    fn lends_a_kept_value_and_shares_one_made_once_when_no_slot_is_left() {
        let m: Memo<1> = Memo::default();
        assert!(matches!(m.lend(|| 1u8), Lent::Borrowed(&1)));
        let made = std::cell::Cell::new(0);
        let other = m.lend(|| {
            made.set(made.get() + 1);
            2u16
        });
        assert!(matches!(other, Lent::Shared(_)));
        assert_eq!((*other, made.get()), (2, 1));
    }

    #[test]
    fn computes_once_per_type() {
        let m: Memo = Memo::default();
        let a = m.get_or_init(|| 41u32);
        let b = m.get_or_init::<u32>(|| unreachable!("computed once"));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*m.get_or_init(|| String::from("x")), "x");
    }

    #[test]
    fn values_of_more_types_than_slots_are_still_given() {
        let m: Memo = Memo::default();
        assert_eq!(*m.get_or_init(|| 1u8), 1);
        assert_eq!(*m.get_or_init(|| 2u16), 2);
        assert_eq!(*m.get_or_init(|| 3u32), 3);
        assert_eq!(*m.get_or_init(|| 4u64), 4);
        assert_eq!(*m.get_or_init(|| 5i8), 5);
        assert_eq!(*m.get_or_init(|| 6i8), 6, "not memoised beyond the slots");
        assert_eq!(*m.get_or_init::<u8>(|| unreachable!("memoised")), 1);
    }

    #[test]
    fn a_clone_forgets_what_was_memoised() {
        let m: Memo = Memo::default();
        m.get_or_init(|| 1u8);
        assert_eq!(*m.clone().get_or_init(|| 2u8), 2);
    }
}
