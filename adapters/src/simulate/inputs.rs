//! The inputs of a simulation: scenario files and plain manifests merged into one object list,
//! and the scheduler configuration to use.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tephra_cache::Sharding;
use tephra_engine::api::ClusterObject;
use tephra_engine::config::{ConfigError, DEFAULT_SCHEDULER_CONF, SchedulerConfig};
use tephra_engine::framework::{PluginRegistry, Strictness, check_config};

use crate::InputError;
use crate::manifest::{self, UniqueNames, decode_documents, describe_object, parse_documents};
use crate::scenario::{is_scenario, parse_scenario, parse_scenario_conf};

/// Objects of every file in order, notes about skipped documents, and the configuration text
/// a scenario file carried (with the file it came from).
#[derive(Debug, Default)]
pub struct Inputs {
    pub objects: Vec<ClusterObject>,
    pub notes: Vec<String>,
    pub scenario_conf: Option<(String, String)>,
    /// The sharding flags a scenario file carried (with the file it came from).
    pub sharding: Option<(String, Sharding)>,
}

/// Loads `files`; an empty file, two objects of one kind and name, and two scenario files with
/// different configurations are refused.
pub fn load_inputs(files: &[PathBuf]) -> Result<Inputs, InputError> {
    let mut loader = InputLoader::default();
    for path in files {
        loader.add(&path.display().to_string(), &manifest::read_text(path)?)?;
    }
    Ok(loader.inputs)
}

/// Loads one file's text as `load_inputs` loads a file; `origin` names it in errors and notes.
pub fn load_text(origin: &str, text: &str) -> Result<Inputs, InputError> {
    let mut loader = InputLoader::default();
    loader.add(origin, text)?;
    Ok(loader.inputs)
}

/// The inputs so far, and where each object came from.
#[derive(Default)]
struct InputLoader {
    inputs: Inputs,
    names: UniqueNames,
}

impl InputLoader {
    /// Adds the objects of one file's text, a scenario or a manifest.
    fn add(&mut self, origin: &str, text: &str) -> Result<(), InputError> {
        let inputs = &mut self.inputs;
        let docs = parse_documents(text, origin)?;
        let first_new = inputs.objects.len();
        if docs.is_empty() {
            return Err(InputError::new(origin, manifest::EMPTY_FILE));
        }
        if let [doc] = docs.as_slice()
            && is_scenario(doc)
        {
            let scenario = parse_scenario(doc.clone(), origin)?;
            inputs.objects.extend(scenario.objects);
            inputs.notes.extend(scenario.skipped);
            if scenario.sharding != Sharding::default() {
                match &inputs.sharding {
                    Some((first, earlier)) if *earlier != scenario.sharding => {
                        return Err(InputError::new(
                            origin,
                            format!("sharding differs from the one in {first}"),
                        ));
                    }
                    Some(_) => {}
                    None => inputs.sharding = Some((origin.to_string(), scenario.sharding)),
                }
            }
            if let Some(text) = scenario.scheduler_conf {
                match &inputs.scenario_conf {
                    Some((first, earlier)) if *earlier != text => {
                        return Err(InputError::new(
                            origin,
                            format!(
                                "schedulerConf differs from the one in {first}; pass --conf to choose"
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => inputs.scenario_conf = Some((origin.to_string(), text)),
                }
            }
        } else {
            let m = decode_documents(docs, origin)?;
            inputs.objects.extend(m.objects);
            inputs.notes.extend(m.skipped);
        }
        for o in &inputs.objects[first_new..] {
            self.names
                .admit(o, origin)
                .map_err(|e| InputError::new(origin, e).object(describe_object(o)))?;
        }
        Ok(())
    }
}

/// Pods listed by name in a note before "and N more".
const NAMED_IN_NOTE: usize = 5;

/// Removes the pending pods another scheduler is to place, as vc-scheduler's `--scheduler-name`
/// filter does: a pod stays when it is bound (it uses its node's resources whoever placed it) or
/// its `schedulerName` is one of `names`. A pod without a `schedulerName` stays too: the API
/// server would have set `default-scheduler`, but a hand-written manifest means this one.
/// Returns one note per other scheduler.
pub fn keep_own_pods(objects: &mut Vec<ClusterObject>, names: &[String]) -> Vec<String> {
    let mut others: BTreeMap<String, Vec<String>> = BTreeMap::new();
    objects.retain(|o| match o {
        ClusterObject::Pod(p)
            if p.spec.node_name.is_empty()
                && !p.spec.scheduler_name.is_empty()
                && !names.contains(&p.spec.scheduler_name) =>
        {
            others
                .entry(p.spec.scheduler_name.clone())
                .or_default()
                .push(format!("{}/{}", p.metadata.namespace, p.metadata.name));
            false
        }
        _ => true,
    });
    others
        .into_iter()
        .map(|(scheduler, pods)| {
            let mut listed = pods[..pods.len().min(NAMED_IN_NOTE)].join(", ");
            if pods.len() > NAMED_IN_NOTE {
                listed.push_str(&format!(" and {} more", pods.len() - NAMED_IN_NOTE));
            }
            format!(
                "{} pending pods name schedulerName {scheduler:?}, not {} (--scheduler-name), and are left to it: {listed}",
                pods.len(),
                names.join(", ")
            )
        })
        .collect()
}

/// A configuration as the offline commands run it, and a warning for each part of it set
/// aside (an unknown plugin, a wrongly typed argument), naming the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedConf {
    pub config: SchedulerConfig,
    pub warnings: Vec<String>,
}

/// The configuration: `--conf` first, else the scenario's, else Volcano's default; checked
/// against the registry and the implemented actions. A part Volcano would skip is set aside
/// with a warning, or refuses the configuration under `Strictness::Refuse`.
pub fn resolve_conf(
    conf_flag: Option<&Path>,
    scenario_conf: Option<&(String, String)>,
    registry: &PluginRegistry,
    strictness: Strictness,
) -> Result<ResolvedConf, InputError> {
    let (origin, location, parsed) = match (conf_flag, scenario_conf) {
        (Some(path), _) => (
            path.display().to_string(),
            None,
            SchedulerConfig::parse(&manifest::read_text(path)?),
        ),
        (None, Some((origin, text))) => (
            origin.clone(),
            Some("schedulerConf"),
            parse_scenario_conf(text),
        ),
        (None, None) => (
            "default scheduler configuration".into(),
            None,
            SchedulerConfig::parse(DEFAULT_SCHEDULER_CONF),
        ),
    };
    let blame = |e: ConfigError| {
        let err = InputError::new(origin.clone(), e);
        match location {
            Some(l) => err.at(l),
            None => err,
        }
    };
    let conf = parsed.map_err(blame)?;
    let checked = check_config(conf, registry, strictness).map_err(blame)?;
    let place = location.map_or(origin.clone(), |l| format!("{origin}: {l}"));
    Ok(ResolvedConf {
        warnings: checked
            .set_aside
            .iter()
            .map(|part| format!("{place}: {part}"))
            .collect(),
        config: checked.config,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;

    const SCENARIO: &str =
        "schedulerConf: \"actions: allocate\"\nobjects:\n- kind: Node\n  metadata: {name: n1}\n";
    const OTHER_CONF: &str = "schedulerConf: \"actions: enqueue\"\nobjects: []\n";
    const MANIFEST: &str = "kind: Node\nmetadata: {name: n2}\n---\nkind: ConfigMap\nmetadata: {name: s, namespace: ns}\n";

    #[test]
    fn scenario_and_manifest_objects_are_merged_in_file_order() {
        let dir = TestDir::new(&[("s.yaml", SCENARIO), ("m.yaml", MANIFEST)]);
        let inputs = load_inputs(&[dir.join("s.yaml"), dir.join("m.yaml")]).unwrap();
        let names: Vec<&str> = inputs
            .objects
            .iter()
            .map(|o| tephra_cache::meta_of(o).name.as_str())
            .collect();
        assert_eq!(names, ["n1", "n2"]);
        assert_eq!(inputs.notes.len(), 1, "the ConfigMap is noted");
        assert_eq!(
            inputs.scenario_conf.map(|(_, t)| t).as_deref(),
            Some("actions: allocate")
        );
    }

    #[test]
    fn pending_pods_of_other_schedulers_are_left_out_with_a_note() {
        let pod = |name: &str, scheduler: &str, node: &str| {
            let mut p = tephra_engine::api::Pod::default();
            p.metadata.namespace = "ns".into();
            p.metadata.name = name.into();
            p.spec.scheduler_name = scheduler.into();
            p.spec.node_name = node.into();
            ClusterObject::Pod(Box::new(p))
        };
        let mut objects = vec![
            pod("ours", "volcano", ""),
            pod("unnamed", "", ""),
            pod("theirs", "default-scheduler", ""),
            pod("theirs-bound", "default-scheduler", "n1"),
        ];
        let notes = keep_own_pods(&mut objects, &["volcano".to_string()]);
        let kept: Vec<&str> = objects
            .iter()
            .map(|o| tephra_cache::meta_of(o).name.as_str())
            .collect();
        assert_eq!(kept, ["ours", "unnamed", "theirs-bound"]);
        assert_eq!(
            notes,
            [
                "1 pending pods name schedulerName \"default-scheduler\", not volcano (--scheduler-name), and are left to it: ns/theirs"
            ]
        );
    }

    #[test]
    fn an_empty_file_is_refused_by_name() {
        let dir = TestDir::new(&[("e.yaml", "# nothing\n")]);
        let e = load_inputs(&[dir.join("e.yaml")]).unwrap_err().to_string();
        assert!(
            e.ends_with("e.yaml: holds no objects: the file is empty or only comments"),
            "{e}"
        );
    }

    #[test]
    fn the_same_node_in_two_files_is_refused_naming_both() {
        let dir = TestDir::new(&[
            ("s.yaml", SCENARIO),
            ("m.yaml", "kind: Node\nmetadata: {name: n1}\n"),
        ]);
        let e = load_inputs(&[dir.join("s.yaml"), dir.join("m.yaml")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("m.yaml: Node n1: duplicate name: "), "{e}");
        assert!(e.contains("s.yaml already has this Node"), "{e}");
    }

    #[test]
    fn two_scenarios_with_different_configurations_are_refused() {
        let dir = TestDir::new(&[("a.yaml", SCENARIO), ("b.yaml", OTHER_CONF)]);
        let e = load_inputs(&[dir.join("a.yaml"), dir.join("b.yaml")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("b.yaml: schedulerConf differs from the one in"),
            "{e}"
        );
    }

    #[test]
    fn conf_flag_overrides_the_scenario_and_its_errors_name_the_file() {
        let dir = TestDir::new(&[("c.yaml", "actions: allocate, bogus\n")]);
        let scenario = ("s.yaml".to_string(), "actions: enqueue".to_string());
        let e = resolve_conf(
            Some(&dir.join("c.yaml")),
            Some(&scenario),
            &PluginRegistry::new(),
            Strictness::SetAside,
        )
        .unwrap_err();
        assert!(e.to_string().ends_with("c.yaml: unknown action \"bogus\" in `actions` (known: enqueue, allocate, backfill, preempt, reclaim, shuffle, gangpreempt, gangreclaim)"), "{e}");
    }

    const GNAG: &str = "actions: allocate\ntiers:\n- plugins:\n  - name: gnag\n  - name: gang\n";

    #[test]
    fn an_unknown_plugin_is_a_warning_naming_the_file_and_key() {
        let scenario = ("s.yaml".to_string(), GNAG.to_string());
        let registry = crate::plugins::registry();
        let r = resolve_conf(None, Some(&scenario), &registry, Strictness::SetAside).unwrap();
        assert_eq!(
            r.warnings,
            [
                "s.yaml: schedulerConf: unknown plugin \"gnag\" in tier 0; skipped, the rest of the tiers run"
            ]
        );
        assert_eq!(r.config.tiers[0].plugins[0].name, "gang");
    }

    #[test]
    fn strict_refuses_an_unknown_plugin_naming_the_file_and_key() {
        let scenario = ("s.yaml".to_string(), GNAG.to_string());
        let registry = crate::plugins::registry();
        let e = resolve_conf(None, Some(&scenario), &registry, Strictness::Refuse).unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.yaml: schedulerConf: unknown plugin \"gnag\" in tier 0"
        );
    }

    #[test]
    fn default_configuration_is_used_without_flag_or_scenario() {
        struct Noop;
        impl tephra_engine::framework::Plugin for Noop {
            fn name(&self) -> &str {
                "noop"
            }
        }
        fn noop(
            _: &tephra_engine::config::Arguments,
        ) -> Result<Box<dyn tephra_engine::framework::Plugin>, tephra_engine::config::ArgumentError>
        {
            Ok(Box::new(Noop))
        }
        let conf = SchedulerConfig::parse(DEFAULT_SCHEDULER_CONF).unwrap();
        let mut registry = PluginRegistry::new();
        for p in conf.tiers.iter().flat_map(|t| &t.plugins) {
            registry.register(&p.name, noop);
        }
        let r = resolve_conf(None, None, &registry, Strictness::SetAside).unwrap();
        assert_eq!((r.config, r.warnings), (conf, Vec::new()));
    }
}
