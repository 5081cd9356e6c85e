//! Values derived from a snapshot once and shared by whoever needs them in the cycle (e.g. the
//! parsed pod data that both `predicates` and `nodeorder` read), keyed by type.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A per-snapshot cache of derived values, one per type.
#[derive(Default)]
pub struct Derived {
    values: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Derived")
    }
}

impl Derived {
    /// The value of type `T`, computed by `make` the first time it is asked for.
    pub fn get_or_init<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let id = TypeId::of::<T>();
        if let Some(v) = self
            .values
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            && let Ok(t) = v.clone().downcast::<T>()
        {
            return t;
        }
        let made: Arc<T> = Arc::new(make());
        self.values
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id)
            .or_insert_with(|| made.clone());
        made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_per_type() {
        let d = Derived::default();
        let a = d.get_or_init(|| 41u32);
        let b = d.get_or_init::<u32>(|| unreachable!("computed once"));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*d.get_or_init(|| String::from("x")), "x");
    }
}
