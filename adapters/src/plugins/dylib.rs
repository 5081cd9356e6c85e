//! `--plugins-dir`: every plugin library in a directory, loaded and registered by name like a
//! built-in (Volcano's `LoadCustomPlugins`). Libraries speak the SDK's versioned C ABI, so one
//! built by another compiler works as long as its ABI version matches.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tephra_engine::framework::PluginRegistry;
use tephra_plugin_sdk::abi::{ENTRY_SYMBOL, Entry};
use tephra_plugin_sdk::host::PluginLibrary;

/// A library that was loaded; it stays loaded while the registry or a plugin uses it.
pub type LoadedLibrary = Arc<PluginLibrary>;

/// A directory or library that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: cannot load plugins: {reason}", path.display())]
pub struct LoadError {
    pub path: PathBuf,
    pub reason: String,
}

fn error(path: &Path, reason: impl ToString) -> LoadError {
    LoadError {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

/// Loads every library (`*.so`, or the platform's extension) in `dir`, in name order, and
/// registers its plugins into `registry`, replacing same-named ones. The first library that
/// fails stops the load, so a scheduler never starts with a plugin silently missing.
pub fn load_plugins_dir(
    dir: &Path,
    registry: &mut PluginRegistry,
) -> Result<Vec<LoadedLibrary>, LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| error(dir, e))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| error(dir, e))?.path();
        if path.extension().and_then(|e| e.to_str()) == Some(std::env::consts::DLL_EXTENSION) {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let library = load_library(path)?;
            library.register(registry);
            Ok(library)
        })
        .collect()
}

/// Loads one library and checks its ABI version.
fn load_library(path: &Path) -> Result<LoadedLibrary, LoadError> {
    // SAFETY: loading runs the library's initialisers; a plugins directory holds code the
    // operator chose to run in the scheduler, as with Volcano's `--plugins-dir`.
    #[allow(unsafe_code)]
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| error(path, e))?;
    // SAFETY: `ENTRY_SYMBOL` is exported by `export_plugins!` with exactly the type `Entry`.
    #[allow(unsafe_code)]
    let entry: Entry = *unsafe { lib.get::<Entry>(ENTRY_SYMBOL.as_bytes()) }.map_err(|_| {
        error(
            path,
            format!("no `{ENTRY_SYMBOL}` symbol: not a tephra plugin library"),
        )
    })?;
    let exports = entry();
    // SAFETY: `exports` is what the entry point returned; `lib`, moved into the result, keeps it
    // mapped for as long as the library is in use.
    #[allow(unsafe_code)]
    let library = unsafe { PluginLibrary::new(exports, path.display().to_string(), Box::new(lib)) };
    library.map_err(|e| error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;

    #[test]
    fn a_missing_directory_is_reported_by_path() {
        let e = load_plugins_dir(
            Path::new("/nonexistent/plugins"),
            &mut PluginRegistry::new(),
        )
        .unwrap_err();
        assert_eq!(e.path, Path::new("/nonexistent/plugins"));
        assert!(
            e.to_string()
                .starts_with("/nonexistent/plugins: cannot load plugins: "),
            "{e}"
        );
    }

    #[test]
    fn a_file_that_is_no_library_is_reported_by_path_and_other_files_are_ignored() {
        let dir = TestDir::new(&[("broken.so", "not an ELF file"), ("README.md", "notes")]);
        let e = load_plugins_dir(dir.path(), &mut PluginRegistry::new()).unwrap_err();
        assert_eq!(e.path, dir.join("broken.so"));
    }

    #[test]
    fn an_empty_directory_loads_nothing() {
        let dir = TestDir::new(&[("README.md", "notes")]);
        let mut registry = PluginRegistry::new();
        assert!(
            load_plugins_dir(dir.path(), &mut registry)
                .unwrap()
                .is_empty()
        );
        assert_eq!(registry.names().count(), 0);
    }
}
