//! Interned names of scalar resource dimensions (`pods`, `nvidia.com/gpu`, ...).
//!
//! Resources carry scalars as small sorted vectors of `(Dim, f64)`; interning keeps them cheap to
//! compare and copy. The interner is process-wide and append-only.

use std::collections::HashMap;
use std::fmt;
use std::sync::{OnceLock, RwLock};

use foldhash::fast::FixedState;

/// An interned scalar resource name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dim(u32);

struct Interner {
    names: Vec<&'static str>,
    /// Hashed with foldhash: every pod's requests are interned as it arrives.
    ids: HashMap<&'static str, u32, FixedState>,
}

fn interner() -> &'static RwLock<Interner> {
    static I: OnceLock<RwLock<Interner>> = OnceLock::new();
    I.get_or_init(|| {
        let mut i = Interner {
            names: Vec::new(),
            ids: HashMap::default(),
        };
        i.names.push("pods");
        i.ids.insert("pods", 0);
        RwLock::new(i)
    })
}

impl Dim {
    /// The `pods` dimension: every task requests one.
    pub const PODS: Dim = Dim(0);

    /// Interns `name`.
    pub fn of(name: &str) -> Dim {
        if let Some(&id) = interner()
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .ids
            .get(name)
        {
            return Dim(id);
        }
        let mut w = interner().write().unwrap_or_else(|e| e.into_inner());
        if let Some(&id) = w.ids.get(name) {
            return Dim(id);
        }
        let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
        let id = w.names.len() as u32;
        w.names.push(leaked);
        w.ids.insert(leaked, id);
        Dim(id)
    }

    /// The resource name.
    pub fn name(self) -> &'static str {
        interner().read().unwrap_or_else(|e| e.into_inner()).names[self.0 as usize]
    }
}

impl fmt::Debug for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
