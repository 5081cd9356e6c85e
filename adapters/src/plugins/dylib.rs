//! `--plugins-dir`: every tephra plugin library in a directory, loaded and registered by name
//! like a built-in (where Volcano's `LoadCustomPlugins` loads Go plugins). Libraries speak the
//! SDK's versioned C ABI, so one built by another compiler works as long as its ABI version
//! matches. A file that is not one is refused with the reason: not an ELF object, a Go plugin,
//! the loader's own message, no tephra entry symbol, another ABI version. Before anything is
//! read, the directory and each library must be writable only by their owner, this process's
//! user or root (`ownership`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tephra_engine::framework::PluginRegistry;
use tephra_plugin_sdk::abi::{ENTRY_SYMBOL, Entry};
use tephra_plugin_sdk::host::PluginLibrary;

use super::library_file::refuse_before_loading;
use super::ownership::refuse_if_others_may_write;

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
    refuse_if_others_may_write(dir).map_err(|reason| error(dir, reason))?;
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

/// The loader's error with the reason it gives (`dlerror`), which libloading keeps apart.
fn with_cause(e: &libloading::Error) -> String {
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

/// Loads one library and checks its ABI version.
fn load_library(path: &Path) -> Result<LoadedLibrary, LoadError> {
    refuse_if_others_may_write(path).map_err(|reason| error(path, reason))?;
    refuse_before_loading(path).map_err(|reason| error(path, reason))?;
    // SAFETY: loading runs the library's initialisers; a plugins directory holds code the
    // operator chose to run in the scheduler, as with Volcano's `--plugins-dir`.
    #[allow(unsafe_code, reason = "loading a plugin library is dlopen and dlsym")]
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| error(path, with_cause(&e)))?;
    // SAFETY: `ENTRY_SYMBOL` is exported by `export_plugins!` with exactly the type `Entry`.
    #[allow(unsafe_code, reason = "loading a plugin library is dlopen and dlsym")]
    let entry: Entry = *unsafe { lib.get::<Entry>(ENTRY_SYMBOL.as_bytes()) }.map_err(|_| {
        error(
            path,
            format!("no `{ENTRY_SYMBOL}` symbol: not a tephra plugin library"),
        )
    })?;
    let exports = entry();
    // SAFETY: `exports` is what the entry point returned; `lib`, moved into the result, keeps it
    // mapped for as long as the library is in use.
    #[allow(unsafe_code, reason = "loading a plugin library is dlopen and dlsym")]
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
    fn a_directory_or_library_others_may_write_is_refused_by_path() {
        use std::os::unix::fs::PermissionsExt;
        let chmod = |p: &Path, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
        };
        let dir = TestDir::new(&[("a.so", "not loaded")]);
        chmod(dir.path(), 0o777);
        let e = load_plugins_dir(dir.path(), &mut PluginRegistry::new()).unwrap_err();
        assert_eq!(e.path, dir.path());
        assert!(
            e.reason
                .starts_with("writable by group or others (mode 0777)"),
            "{e}"
        );
        chmod(dir.path(), 0o755);
        chmod(&dir.join("a.so"), 0o666);
        let e = load_plugins_dir(dir.path(), &mut PluginRegistry::new()).unwrap_err();
        assert_eq!(e.path, dir.join("a.so"));
        assert!(
            e.reason
                .starts_with("writable by group or others (mode 0666)"),
            "{e}"
        );
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

    /// Builds `source` into `NAME.so` in `dir` with `cc`, the C compiler Rust links with.
    fn c_library(dir: &TestDir, name: &str, source: &str) -> PathBuf {
        let c = dir.join(&format!("{name}.c"));
        std::fs::write(&c, source).unwrap();
        let so = dir.join(&format!("{name}.so"));
        let status = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&so)
            .arg(&c)
            .status()
            .expect("cc runs");
        assert!(status.success(), "cc failed on {name}.c");
        so
    }

    fn refusal(path: &Path) -> String {
        load_library(path).unwrap_err().reason
    }

    #[test]
    fn a_text_file_named_like_a_library_is_not_an_elf_object() {
        let dir = TestDir::new(&[("x.so", "plain text")]);
        assert!(
            refusal(&dir.join("x.so")).starts_with("not an ELF shared object"),
            "{}",
            refusal(&dir.join("x.so"))
        );
    }

    #[test]
    fn a_go_plugin_is_named_before_it_is_opened() {
        let dir = TestDir::new(&[]);
        let path = dir.join("gang-go.so");
        let mut bytes = b"\x7fELF\x02\x01\x01".to_vec();
        bytes.extend([0u8; 57]);
        bytes.extend(b"\xff Go buildinf:\x08\x02");
        std::fs::write(&path, bytes).unwrap();
        let e = load_plugins_dir(dir.path(), &mut PluginRegistry::new()).unwrap_err();
        assert_eq!(e.path, path);
        assert_eq!(
            e.reason,
            "a Go plugin built for Volcano cannot be loaded by tephra; port it to the tephra SDK (docs/plugins.md)"
        );
    }

    #[test]
    fn a_broken_elf_file_is_refused_with_the_loaders_message() {
        let dir = TestDir::new(&[]);
        let path = dir.join("truncated.so");
        std::fs::write(&path, b"\x7fELF\x02\x01\x01\x00").unwrap();
        let reason = refusal(&path);
        assert!(reason.starts_with("dlopen failed: "), "{reason}");
        assert!(reason.contains("truncated.so"), "{reason}");
    }

    #[test]
    fn a_library_without_the_entry_symbol_is_not_a_tephra_plugin() {
        let dir = TestDir::new(&[]);
        let so = c_library(&dir, "plain", "int plain_value = 1;\n");
        assert_eq!(
            refusal(&so),
            "no `tephra_plugin_entry` symbol: not a tephra plugin library"
        );
    }

    #[test]
    fn a_library_of_another_abi_version_is_refused_with_both_versions() {
        let dir = TestDir::new(&[]);
        let so = c_library(
            &dir,
            "future",
            "struct library { unsigned int abi_version; };\n\
             static const struct library descriptor = { 99 };\n\
             const struct library *tephra_plugin_entry(void) { return &descriptor; }\n",
        );
        let reason = refusal(&so);
        assert!(
            reason.contains(&format!(
                "built for plugin ABI version 99, this tephra speaks version {}",
                tephra_plugin_sdk::abi::ABI_VERSION
            )),
            "{reason}"
        );
    }
}
