//! Scratch directories with given files, removed when dropped (tests only).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory under the system temp dir, unique per process and call.
pub struct TestDir(PathBuf);

impl TestDir {
    /// Creates the directory with `files` (`relative path`, `text`).
    pub fn new(files: &[(&str, &str)]) -> TestDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("tephra-test-{}-{n}", std::process::id()));
        for (name, text) in files {
            let p = root.join(name);
            std::fs::create_dir_all(p.parent().expect("a file has a parent"))
                .expect("create test dir");
            std::fs::write(p, text).expect("write test file");
        }
        std::fs::create_dir_all(&root).expect("create test dir");
        TestDir(root)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A path inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
