//! Hot reload (Volcano: pkg/scheduler/scheduler.go, loadSchedulerConf and watchSchedulerConf): the configuration file's directory is watched, so a ConfigMap
//! volume's symlink swap is seen too; any create or write in it asks for a reload.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

/// A flag raised by file-system events, lowered when the scheduler reloads.
#[derive(Debug)]
pub struct ReloadWatch {
    _watcher: RecommendedWatcher,
    pending: Arc<AtomicBool>,
}

impl ReloadWatch {
    /// Watches `dir`; the error names it.
    pub fn start(dir: &Path) -> Result<ReloadWatch, String> {
        let pending = Arc::new(AtomicBool::new(false));
        let flag = pending.clone();
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            if let Ok(e) = res
                && matches!(
                    e.kind,
                    EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
                )
            {
                flag.store(true, Ordering::SeqCst);
            }
        })
        .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
        watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
        Ok(ReloadWatch {
            _watcher: watcher,
            pending,
        })
    }

    /// True once after each burst of changes.
    pub fn take(&self) -> bool {
        self.pending.swap(false, Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn writing_a_file_in_the_directory_asks_for_a_reload() {
        let dir = std::env::temp_dir().join(format!("tephra-reload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let w = ReloadWatch::start(&dir).unwrap();
        assert!(!w.take());
        std::fs::write(dir.join("volcano-scheduler.conf"), "actions: allocate\n").unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !w.take() {
            assert!(Instant::now() < deadline, "no reload asked for");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_directory_is_named() {
        let e = ReloadWatch::start(Path::new("/no/such/dir")).unwrap_err();
        assert!(e.contains("/no/such/dir"), "{e}");
    }
}
