//! The scheduler configuration (Volcano: pkg/scheduler/scheduler.go, loadSchedulerConf and watchSchedulerConf): Volcano's default first unless
//! `--disable-default-scheduler-config`, then the `--scheduler-conf` file; a file that cannot be
//! read or is refused keeps the configuration already installed, and says why. A file naming an
//! unknown plugin or a wrongly typed plugin argument is installed without that part, which is
//! logged as an error once per load (Volcano: pkg/scheduler/framework/framework.go,
//! OpenSession), unless `--strict-config` refuses it.

use std::path::PathBuf;

use tephra_engine::config::{DEFAULT_SCHEDULER_CONF, SchedulerConfig};
use tephra_engine::framework::{CheckedConfig, PluginRegistry, Strictness, check_config};

/// Why a configuration file was not installed; the message names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {reason}")]
pub struct ConfError {
    pub file: String,
    pub reason: String,
}

/// Loads and reloads the configuration file.
#[derive(Debug, Clone)]
pub struct ConfSource {
    path: Option<PathBuf>,
    fallback_allowed: bool,
    strictness: Strictness,
    /// The text last read, so a directory event that left the file as it was changes nothing.
    last_text: Option<String>,
}

/// Parses `text` and checks it as tephra will run it: actions, plugins and their arguments.
pub fn parse_checked(
    text: &str,
    registry: &PluginRegistry,
    strictness: Strictness,
) -> Result<CheckedConfig, String> {
    let conf = SchedulerConfig::parse(text.trim()).map_err(|e| e.to_string())?;
    check_config(conf, registry, strictness).map_err(|e| e.to_string())
}

impl ConfSource {
    /// `path` empty means no file; `fallback_allowed` is `!--disable-default-scheduler-config`;
    /// `strictness` is `--strict-config`.
    pub fn new(path: &str, fallback_allowed: bool, strictness: Strictness) -> Self {
        ConfSource {
            path: (!path.is_empty()).then(|| PathBuf::from(path)),
            fallback_allowed,
            strictness,
            last_text: None,
        }
    }

    /// The directory to watch for changes (a ConfigMap volume swaps a symlink in it).
    pub fn watch_dir(&self) -> Option<PathBuf> {
        let path = self.path.as_ref()?;
        Some(match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        })
    }

    /// The configuration at start-up: the file when valid, else Volcano's default; an error
    /// only when the file is refused and falling back is disabled.
    pub fn initial(&mut self, registry: &PluginRegistry) -> Result<CheckedConfig, ConfError> {
        match self.read_file(registry) {
            Some(Ok(conf)) => Ok(conf),
            Some(Err(e)) if !self.fallback_allowed => Err(e),
            Some(Err(e)) => {
                tracing::warn!("{e}; using the default scheduler configuration");
                Ok(default_conf(registry))
            }
            None => Ok(default_conf(registry)),
        }
    }

    /// Re-reads the file: `Ok(Some)` to install, `Ok(None)` when there is no file or its text
    /// is unchanged, `Err` when the file is refused (the caller keeps its configuration; fatal
    /// without fallback).
    pub fn reload(
        &mut self,
        registry: &PluginRegistry,
    ) -> Result<Option<CheckedConfig>, ConfError> {
        self.read_file(registry).transpose()
    }

    /// Whether a refused file must stop the scheduler.
    pub fn refusal_is_fatal(&self) -> bool {
        !self.fallback_allowed
    }

    /// Reads and checks the file; `None` when there is none, or when its text is the one
    /// read last time. Each part set aside is logged here, so once per load.
    fn read_file(&mut self, registry: &PluginRegistry) -> Option<Result<CheckedConfig, ConfError>> {
        let path = self.path.clone()?;
        let blame = |reason: String| ConfError {
            file: path.display().to_string(),
            reason,
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                self.last_text = None;
                return Some(Err(blame(format!("cannot read: {e}"))));
            }
        };
        if self.last_text.as_deref() == Some(text.as_str()) {
            return None;
        }
        let parsed = parse_checked(&text, registry, self.strictness).map_err(blame);
        if let Ok(checked) = &parsed {
            for part in &checked.set_aside {
                tracing::error!("{}: {part}", path.display());
            }
        }
        self.last_text = Some(text);
        Some(parsed)
    }
}

fn default_conf(registry: &PluginRegistry) -> CheckedConfig {
    parse_checked(DEFAULT_SCHEDULER_CONF, registry, Strictness::Refuse)
        .expect("Volcano's built-in default configuration is valid")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::plugins::builtin_registry;

    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let d = std::env::temp_dir().join(format!("tephra-conf-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&d).unwrap();
            Dir(d)
        }
        fn write(&self, text: &str) -> String {
            let p = self.0.join("volcano-scheduler.conf");
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const BINPACK: &str =
        "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: binpack\n";

    #[test]
    fn an_unchanged_file_is_not_reloaded() {
        let dir = Dir::new("unchanged");
        let mut src = ConfSource::new(&dir.write(BINPACK), true, Strictness::SetAside);
        src.initial(&builtin_registry()).unwrap();
        assert!(src.reload(&builtin_registry()).unwrap().is_none());
        dir.write(&format!("{BINPACK}  - name: predicates\n"));
        assert!(src.reload(&builtin_registry()).unwrap().is_some());
    }

    #[test]
    fn no_file_means_volcanos_default() {
        let conf = ConfSource::new("", true, Strictness::SetAside)
            .initial(&builtin_registry())
            .unwrap();
        assert_eq!(conf.config.actions, ["enqueue", "allocate", "backfill"]);
    }

    #[test]
    fn a_valid_file_is_installed() {
        let dir = Dir::new("valid");
        let mut src = ConfSource::new(&dir.write(BINPACK), true, Strictness::SetAside);
        assert_eq!(
            src.initial(&builtin_registry()).unwrap().config.actions,
            ["enqueue", "allocate"]
        );
        assert_eq!(src.watch_dir().unwrap(), dir.0);
    }

    const UNKNOWN_PLUGIN: &str =
        "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nosuch\n  - name: gang\n";

    #[test]
    fn a_refused_file_falls_back_to_the_default_at_start_up() {
        let dir = Dir::new("fallback");
        let mut src = ConfSource::new(
            &dir.write("actions: \"allocate, nosuchaction\"\n"),
            true,
            Strictness::SetAside,
        );
        let conf = src.initial(&builtin_registry()).unwrap();
        assert_eq!(conf.config.actions, ["enqueue", "allocate", "backfill"]);
        assert!(conf.set_aside.is_empty());
    }

    #[test]
    fn an_unknown_plugin_is_set_aside_and_the_rest_of_the_file_installed() {
        let dir = Dir::new("unknown-plugin");
        let mut src = ConfSource::new(&dir.write(UNKNOWN_PLUGIN), true, Strictness::SetAside);
        let conf = src.initial(&builtin_registry()).unwrap();
        assert_eq!(conf.config.actions, ["allocate"]);
        assert_eq!(conf.config.tiers[0].plugins.len(), 1);
        assert_eq!(conf.config.tiers[0].plugins[0].name, "gang");
        assert_eq!(conf.set_aside.len(), 1);
        assert_eq!(conf.set_aside[0].kind(), "unknown_plugin");
    }

    #[test]
    fn strict_config_refuses_an_unknown_plugin_with_todays_error() {
        let dir = Dir::new("strict");
        let path = dir.write(UNKNOWN_PLUGIN);
        let mut strict = ConfSource::new(&path, false, Strictness::Refuse);
        let e = strict.initial(&builtin_registry()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{path}: unknown plugin \"nosuch\" in tier 0")
        );
        let mut with_fallback = ConfSource::new(&path, true, Strictness::Refuse);
        let conf = with_fallback.initial(&builtin_registry()).unwrap();
        assert_eq!(
            conf.config.actions,
            ["enqueue", "allocate", "backfill"],
            "refused, so Volcano's default runs"
        );
    }

    #[test]
    fn refusal_names_the_file_and_the_culprit() {
        let dir = Dir::new("culprit");
        let path = dir.write("actions: \"allocate, nosuchaction\"\n");
        let mut src = ConfSource::new(&path, false, Strictness::SetAside);
        let e = src.initial(&builtin_registry()).unwrap_err();
        assert_eq!(e.file, path);
        assert!(e.reason.contains("nosuchaction"), "{e}");
        assert!(src.refusal_is_fatal());
    }

    #[test]
    fn reload_reports_a_broken_file_instead_of_replacing() {
        let dir = Dir::new("reload");
        let path = dir.write(BINPACK);
        let mut src = ConfSource::new(&path, true, Strictness::SetAside);
        assert!(src.reload(&builtin_registry()).unwrap().is_some());
        dir.write("actions: [unclosed\n");
        assert!(src.reload(&builtin_registry()).is_err());
        assert!(
            src.reload(&builtin_registry()).unwrap().is_none(),
            "the same broken text is reported once"
        );
        std::fs::remove_file(&path).unwrap();
        let e = src.reload(&builtin_registry()).unwrap_err();
        assert!(e.reason.contains("cannot read"), "{e}");
    }
}
