//! Who may change the code `--plugins-dir` loads. A plugin library runs inside the scheduler
//! with all its rights (its API credentials included), so the directory and every library in
//! it must be writable by nobody but their owner, and owned by this process's user or root:
//! otherwise another account could swap in its own code.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Permission bits that let group members or others write.
const GROUP_OR_OTHER_WRITE: u32 = 0o022;

/// The effective user of this process.
fn effective_uid() -> u32 {
    // SAFETY: `geteuid` takes no arguments, touches no memory of ours and cannot fail.
    #[allow(unsafe_code, reason = "geteuid is a system call")]
    unsafe {
        libc::geteuid()
    }
}

/// `Err` with the reason when the file or directory at `path` (a symbolic link is followed) may
/// be written by an account other than this process's user or root.
pub fn refuse_if_others_may_write(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    judge(meta.mode() & 0o7777, meta.uid(), effective_uid())
}

/// The verdict on a file of permission bits `mode` owned by `owner`, for a process of user `me`.
fn judge(mode: u32, owner: u32, me: u32) -> Result<(), String> {
    if mode & GROUP_OR_OTHER_WRITE != 0 {
        return Err(format!(
            "writable by group or others (mode {mode:04o}); plugin libraries run inside the scheduler, so allow only the owner to write (chmod go-w)"
        ));
    }
    if owner != me && owner != 0 {
        return Err(format!(
            "owned by uid {owner}, neither this process's user (uid {me}) nor root; plugin libraries run inside the scheduler, so only they may own them"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_file_only_its_owner_may_write_is_accepted() {
        let dir = TestDir::new(&[("lib.so", "x")]);
        chmod(&dir.join("lib.so"), 0o755);
        assert_eq!(refuse_if_others_may_write(&dir.join("lib.so")), Ok(()));
    }

    #[test]
    fn a_file_writable_by_group_or_others_is_refused_with_its_mode() {
        let dir = TestDir::new(&[("lib.so", "x")]);
        for mode in [0o775, 0o757] {
            chmod(&dir.join("lib.so"), mode);
            let e = refuse_if_others_may_write(&dir.join("lib.so")).unwrap_err();
            assert!(
                e.starts_with(&format!("writable by group or others (mode {mode:04o})")),
                "{e}"
            );
        }
    }

    #[test]
    fn a_file_of_another_user_is_refused_with_its_owner_and_roots_is_accepted() {
        assert_eq!(
            judge(0o755, 1000, 2000),
            Err("owned by uid 1000, neither this process's user (uid 2000) nor root; plugin libraries run inside the scheduler, so only they may own them".into())
        );
        assert_eq!(judge(0o755, 0, 2000), Ok(()));
        assert_eq!(judge(0o700, 2000, 2000), Ok(()));
    }
}
