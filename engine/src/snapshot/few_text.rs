//! Names a cluster has few of and many objects carry (namespaces, queues): one shared copy of
//! each for the life of the process. Hundreds of thousands of pods share a handful of
//! namespaces; a snapshot looks 50k jobs' queues up by name, and a shared copy is in the cache.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use foldhash::fast::FixedState;

/// The process's one copy of `text`.
pub(super) fn few_text(text: &str) -> Arc<str> {
    static TEXTS: OnceLock<Mutex<HashSet<Arc<str>, FixedState>>> = OnceLock::new();
    let mut texts = TEXTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(shared) = texts.get(text) {
        return shared.clone();
    }
    let shared: Arc<str> = text.into();
    texts.insert(shared.clone());
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_names_share_one_copy() {
        let a = few_text("few-text-test");
        let b = few_text(&String::from("few-text-test"));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &few_text("few-text-other")));
    }
}
