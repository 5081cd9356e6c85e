//! A plugin library as the host holds it: its descriptor checked against this host's ABI, its
//! plugins registered by name, and whatever keeps its code mapped.

use std::any::Any;
use std::sync::Arc;

use tephra_engine::config::{ArgumentError, Arguments};
use tephra_engine::framework::{Plugin, PluginRegistry};

use super::plugin::ExternalPlugin;
use crate::abi::{self, ABI_VERSION, FAILED, OK, PANICKED, Str};
use crate::wire::Reply;

/// Why a library's descriptor was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AbiError {
    #[error("its entry point returned no descriptor")]
    NoDescriptor,
    #[error("built for plugin ABI version {found}, this tephra speaks version {expected}")]
    Version { found: u32, expected: u32 },
    #[error("it exports no plugin")]
    NoPlugins,
    #[error("it exports a plugin with an empty name")]
    EmptyName,
}

/// A loaded plugin library. Registered builders and every plugin they build hold it, so the
/// library stays loaded as long as anything may call into it.
pub struct PluginLibrary {
    exports: *const abi::Library,
    origin: String,
    names: Vec<String>,
    sdk_version: String,
    /// Dropped last: keeps the library's code and `exports` mapped.
    _keep: Box<dyn Any + Send + Sync>,
}

// SAFETY: the descriptor is immutable `'static` data of the library, and the ABI requires every
// plugin function to be callable from any thread.
unsafe impl Send for PluginLibrary {}
// SAFETY: as for `Send`.
unsafe impl Sync for PluginLibrary {}

impl std::fmt::Debug for PluginLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginLibrary")
            .field("origin", &self.origin)
            .field("plugins", &self.names)
            .field("sdk_version", &self.sdk_version)
            .finish()
    }
}

impl PluginLibrary {
    /// Checks a library's descriptor: the ABI version first, then the plugin names.
    ///
    /// # Safety
    /// `exports` must be what the library's `abi::ENTRY_SYMBOL` returned (null, or a descriptor
    /// whose `abi_version` may be read), and stay valid while `keep` lives.
    pub unsafe fn new(
        exports: *const abi::Library,
        origin: impl Into<String>,
        keep: Box<dyn Any + Send + Sync>,
    ) -> Result<Arc<PluginLibrary>, AbiError> {
        if exports.is_null() {
            return Err(AbiError::NoDescriptor);
        }
        // SAFETY: the caller promises a descriptor; only `abi_version` is read before it is
        // known to have this ABI's layout.
        let found = unsafe { (*exports).abi_version };
        if found != ABI_VERSION {
            return Err(AbiError::Version {
                found,
                expected: ABI_VERSION,
            });
        }
        // SAFETY: same version, so the descriptor has this layout; its names are `plugin_count`
        // UTF-8 strings in static data.
        let (names, sdk_version) = unsafe {
            let lib = &*exports;
            let names: Vec<String> = (0..lib.plugin_count)
                .map(|i| {
                    (*lib.plugin_names.add(i))
                        .get()
                        .unwrap_or_default()
                        .to_string()
                })
                .collect();
            (names, lib.sdk_version.get().unwrap_or_default().to_string())
        };
        if names.is_empty() {
            return Err(AbiError::NoPlugins);
        }
        if names.iter().any(String::is_empty) {
            return Err(AbiError::EmptyName);
        }
        Ok(Arc::new(PluginLibrary {
            exports,
            origin: origin.into(),
            names,
            sdk_version,
            _keep: keep,
        }))
    }

    /// Where the library came from (its path), for messages.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The plugins it exports, in export order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The SDK version it was built with.
    pub fn sdk_version(&self) -> &str {
        &self.sdk_version
    }

    pub(super) fn exports(&self) -> &abi::Library {
        // SAFETY: checked in `new`, and kept mapped by `_keep` for as long as `self` lives.
        unsafe { &*self.exports }
    }

    /// Registers every plugin of the library under its name (replacing a same-named one).
    pub fn register(self: &Arc<Self>, registry: &mut PluginRegistry) {
        for (index, name) in self.names.iter().enumerate() {
            let library = Arc::clone(self);
            registry.register(name, move |args: &Arguments| {
                library.build(index as u32, args)
            });
        }
    }

    /// Builds plugin `index`; an argument the plugin refuses comes back as its `ArgumentError`.
    fn build(
        self: &Arc<Self>,
        index: u32,
        args: &Arguments,
    ) -> Result<Box<dyn Plugin>, ArgumentError> {
        let name = &self.names[index as usize];
        let json = serde_json::to_string(&args.0).unwrap_or_else(|_| "{}".into());
        let mut reply = Reply::default();
        let mut instance = std::ptr::null_mut();
        let lib = self.exports();
        // SAFETY: `lib` is the descriptor this library's entry point returned, still loaded;
        // the JSON and the `ReplyOut` live through the call.
        let status =
            unsafe { (lib.vtable.build)(lib, index, Str::new(&json), &mut instance, &reply.out()) };
        match status {
            OK if !instance.is_null() => Ok(Box::new(ExternalPlugin::new(
                Arc::clone(self),
                name.clone(),
                instance,
            ))),
            FAILED if !reply.text(1).is_empty() => Err(ArgumentError {
                key: reply.text(1).to_string(),
                value: reply.text(2).to_string(),
                reason: reply.text(3).to_string(),
            }),
            _ => {
                let what = if status == PANICKED {
                    "panicked"
                } else {
                    "failed"
                };
                Err(ArgumentError {
                    key: "(all)".into(),
                    value: json,
                    reason: format!(
                        "{what} while building in {}: {}",
                        self.origin,
                        reply.text(0)
                    ),
                })
            }
        }
    }
}
