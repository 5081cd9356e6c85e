//! Values derived from one version of an object, computed once and kept with it.
//!
//! The cache hands the same `Arc<Pod>` to every snapshot until the pod changes, so what a cycle
//! derives from a pod alone (its request, its parsed affinity terms) can be kept on the object and
//! reused by the next cycle: only pods that changed are derived again. A changed object is a new
//! value, and a clone starts with an empty memo, so a memoised value never outlives the version
//! it was derived from.

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex};

/// A small type-keyed store of derived values, one per type.
#[derive(Default)]
pub struct Memo {
    values: Mutex<Vec<(TypeId, Arc<dyn Any + Send + Sync>)>>,
}

impl Memo {
    /// The value of type `T`, computed by `make` the first time it is asked for.
    pub fn get_or_init<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let id = TypeId::of::<T>();
        if let Some(found) = self.find::<T>(id) {
            return found;
        }
        let made = Arc::new(make());
        let mut values = self.values.lock().unwrap_or_else(|p| p.into_inner());
        match values.iter().find(|(t, _)| *t == id) {
            Some((_, v)) => v.clone().downcast::<T>().unwrap_or(made),
            None => {
                values.push((id, made.clone()));
                made
            }
        }
    }

    fn find<T: Any + Send + Sync>(&self, id: TypeId) -> Option<Arc<T>> {
        let values = self.values.lock().unwrap_or_else(|p| p.into_inner());
        let (_, v) = values.iter().find(|(t, _)| *t == id)?;
        v.clone().downcast::<T>().ok()
    }
}

/// A copy is a new version of the object: it starts with nothing memoised.
impl Clone for Memo {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

/// Derived values are not part of an object's identity.
impl PartialEq for Memo {
    fn eq(&self, _: &Memo) -> bool {
        true
    }
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_per_type() {
        let m = Memo::default();
        let a = m.get_or_init(|| 41u32);
        let b = m.get_or_init::<u32>(|| unreachable!("computed once"));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*m.get_or_init(|| String::from("x")), "x");
    }

    #[test]
    fn a_clone_forgets_what_was_memoised() {
        let m = Memo::default();
        m.get_or_init(|| 1u8);
        assert_eq!(*m.clone().get_or_init(|| 2u8), 2);
    }
}
