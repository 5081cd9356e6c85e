//! What a file in `--plugins-dir` is, told from its bytes before `dlopen` runs any of its code:
//! a file that is not an ELF object is named as such, and so is a Go plugin built for Volcano,
//! which tephra cannot load (`dlopen` alone would start a second Go runtime in the process, or
//! fail with a loader message that does not say why).

use std::path::Path;

/// The first bytes of every ELF object.
const ELF_MAGIC: &[u8] = b"\x7fELF";

/// The marker Go's linker writes at the start of a binary's build information (the
/// `.go.buildinfo` section); every Go binary since Go 1.13 carries it, plugins included.
const GO_BUILD_INFO_MAGIC: &[u8] = b"\xff Go buildinf:";

/// Why a Go plugin is refused, and what to do instead.
pub const GO_PLUGIN: &str = "a Go plugin built for Volcano cannot be loaded by tephra; port it to the tephra SDK (docs/plugins.md)";

/// `Err` with the reason when the file at `path` cannot be a tephra plugin library.
pub fn refuse_before_loading(path: &Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    if !bytes.starts_with(ELF_MAGIC) {
        return Err(
            "not an ELF shared object (a tephra plugin library is a cdylib built with tephra-plugin-sdk, docs/plugins.md)".into(),
        );
    }
    if bytes
        .windows(GO_BUILD_INFO_MAGIC.len())
        .any(|w| w == GO_BUILD_INFO_MAGIC)
    {
        return Err(GO_PLUGIN.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;

    #[test]
    fn a_text_file_is_not_an_elf_object() {
        let dir = TestDir::new(&[("x.so", "not a library\n")]);
        let e = refuse_before_loading(&dir.join("x.so")).unwrap_err();
        assert!(e.starts_with("not an ELF shared object"), "{e}");
    }

    #[test]
    fn an_elf_file_with_go_build_information_is_a_go_plugin() {
        let dir = TestDir::new(&[]);
        let path = dir.join("volcano-plugin.so");
        let mut bytes = ELF_MAGIC.to_vec();
        bytes.extend([0u8; 60]);
        bytes.extend(GO_BUILD_INFO_MAGIC);
        bytes.extend([8u8, 2, 0, 0]);
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(refuse_before_loading(&path), Err(GO_PLUGIN.to_string()));
    }

    #[test]
    fn an_elf_file_without_go_build_information_may_be_loaded() {
        let dir = TestDir::new(&[]);
        let path = dir.join("lib.so");
        let mut bytes = ELF_MAGIC.to_vec();
        bytes.extend(b"\xff Go buildin");
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(refuse_before_loading(&path), Ok(()));
    }

    #[test]
    fn an_unreadable_file_is_named_as_such() {
        let e = refuse_before_loading(Path::new("/nonexistent/x.so")).unwrap_err();
        assert!(e.starts_with("cannot read: "), "{e}");
    }
}
