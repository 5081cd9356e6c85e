//! A library's descriptor, built at compile time from the names and builders given to
//! `export_plugins!`.

use std::ffi::c_void;

use crate::Builder;
use crate::abi::{self, ABI_VERSION, Str};

/// The descriptor a library hands to the host.
pub struct Exports {
    library: abi::Library,
}

// SAFETY: the descriptor only holds pointers to `'static` data (names, builders) and function
// pointers, all immutable, so sharing it between threads is sound.
unsafe impl Sync for Exports {}

impl Exports {
    /// Exports plugins `names[i]` built by `builders[i]`.
    pub const fn new(names: &'static [Str], builders: &'static [Builder]) -> Exports {
        assert!(names.len() == builders.len(), "one builder per plugin name");
        Exports {
            library: abi::Library {
                abi_version: ABI_VERSION,
                sdk_version: Str::new(env!("CARGO_PKG_VERSION")),
                plugin_names: names.as_ptr(),
                plugin_count: names.len(),
                builders: builders.as_ptr() as *const c_void,
                vtable: super::calls::VTABLE,
            },
        }
    }

    /// The descriptor the entry point returns.
    pub fn library(&'static self) -> *const abi::Library {
        &self.library
    }
}
