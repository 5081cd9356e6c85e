//! `config`: the scheduler configuration file, parsed and checked against every plugin a
//! tephra binary ships, as `--conf` and a scenario's `schedulerConf` are.

use std::sync::LazyLock;

use tephra_engine::config::SchedulerConfig;
use tephra_engine::framework::{PluginRegistry, Strictness, check_config};

static REGISTRY: LazyLock<PluginRegistry> = LazyLock::new(crate::plugins::registry);

/// Parses the bytes (when UTF-8) both ways a configuration is read and checks what parses,
/// setting parts aside and refusing them.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for parsed in [
        SchedulerConfig::parse(text),
        crate::scenario::parse_scenario_conf(text),
    ] {
        let Ok(conf) = parsed else {
            continue;
        };
        for strictness in [Strictness::SetAside, Strictness::Refuse] {
            let _ = check_config(conf.clone(), &REGISTRY, strictness);
        }
    }
}
