//! Benchmark workloads (`docs/workloads.md`): the `gang-mixed` family generated from
//! its parameters, its named sizes, the churn between cycles, and loading a workload by name
//! (generated in memory) or from a manifest file (as `tephra gen` writes it).

mod churn;
pub mod gang_mixed;
mod named;
mod rng;

use std::io::Write;
use std::path::Path;

use serde_json::Value;
use tephra_cache::{ClusterEvent, ClusterState, meta_of};
use tephra_engine::api::ClusterObject;

use crate::InputError;
use crate::manifest::{self, Decoded, ManifestWriter};
use crate::progress::Progress;
pub use churn::{Churn, ChurnStep};
pub use gang_mixed::{Counts, GangMixed};
pub use named::{DEFAULT_SEED, NAMED_SIZES, named, names};

/// A generated object as the cluster state holds it, through the same decoder a manifest file
/// goes through, so a named workload and its file give the same cluster.
pub(crate) fn to_object(value: Value) -> ClusterObject {
    match manifest::decode(&value, None, "gang-mixed", "generated object") {
        Ok(Decoded::Object(o)) => o,
        other => {
            unreachable!("the generator writes only valid objects of watched kinds: {other:?}")
        }
    }
}

/// The cluster of `g`, generated in memory.
pub fn generate_state(g: &GangMixed) -> ClusterState {
    let mut progress = Progress::new("generating", g.counts().objects());
    let mut state = ClusterState::new();
    g.generate(&mut |value| {
        state.apply_event(ClusterEvent::Upsert(to_object(value)));
        progress.add(1);
    });
    progress.finish();
    state
}

/// Writes the cluster of `g` to `path` as a JSON stream, one object per line (gzip when the
/// name ends in `.gz`); `kubectl apply -f` and tephra's own loader read it.
pub fn write_manifests(g: &GangMixed, path: &Path) -> Result<Counts, InputError> {
    let fail = |e: std::io::Error| {
        InputError::new(path.display().to_string(), format!("cannot write: {e}"))
    };
    let counts = g.counts();
    let mut out = ManifestWriter::create(path).map_err(fail)?;
    let mut progress = Progress::new("writing", counts.objects());
    let mut result = Ok(());
    g.generate(&mut |value| {
        if result.is_ok() {
            result = serde_json::to_writer(&mut out, &value)
                .map_err(std::io::Error::from)
                .and_then(|()| out.write_all(b"\n"));
        }
        progress.add(1);
    });
    progress.finish();
    result.and_then(|()| out.finish()).map_err(fail)?;
    Ok(counts)
}

/// A cluster to benchmark, with the churn its later cycles apply.
#[derive(Debug)]
pub struct Workload {
    /// The name it was asked for: a named size or the file path.
    pub name: String,
    pub state: ClusterState,
    pub churn: Churn,
}

impl Workload {
    /// The cluster of `g`, generated in memory, with its churn.
    pub fn generated(name: impl Into<String>, g: &GangMixed) -> Workload {
        Workload {
            name: name.into(),
            state: generate_state(g),
            churn: Churn::new(g.seed, g.counts().pending_jobs),
        }
    }
}

/// A named size (generated with `seed`) or a manifest file. A file's churn continues after its
/// highest `job-<j>` PodGroup, as the same workload generated in memory would.
pub fn load_workload(spec: &str, seed: u64) -> Result<Workload, InputError> {
    if let Some(g) = named(spec, seed) {
        return Ok(Workload::generated(spec, &g));
    }
    let path = Path::new(spec);
    if !path.exists() {
        return Err(InputError::new(
            spec,
            format!("neither a named workload ({}) nor a file", names()),
        ));
    }
    let loaded = manifest::load_file(path)?;
    let next_job = loaded
        .objects
        .iter()
        .filter(|o| matches!(o, ClusterObject::PodGroup(_)))
        .filter_map(|o| {
            meta_of(o)
                .name
                .strip_prefix(gang_mixed::JOB_PREFIX)?
                .parse::<u64>()
                .ok()
        })
        .max()
        .map_or(0, |j| j + 1);
    Ok(Workload {
        name: spec.to_string(),
        state: ClusterState::from_objects(loaded.objects),
        churn: Churn::new(seed, next_job),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;

    const TINY: GangMixed = GangMixed {
        nodes: 16,
        pending: 40,
        seed: 1,
    };

    #[test]
    fn a_written_file_loads_into_the_generated_cluster() {
        let dir = TestDir::new(&[]);
        for name in ["c.json", "c.json.gz"] {
            let path = dir.join(name);
            let counts = write_manifests(&TINY, &path).unwrap();
            let text = manifest::read_text(&path).unwrap();
            assert_eq!(text.lines().count() as u64, counts.objects());
            let mut w = load_workload(path.to_str().unwrap(), 1).unwrap();
            let mut generated = generate_state(&TINY);
            assert_eq!(
                format!("{:?}", w.state.snapshot("default").tasks.pod),
                format!("{:?}", generated.snapshot("default").tasks.pod)
            );
            assert_eq!(w.churn.clone().step(&mut w.state.clone()), {
                let mut c = Churn::new(1, counts.pending_jobs);
                c.step(&mut generated.clone())
            });
        }
    }

    #[test]
    fn named_workloads_are_generated_and_unknown_names_refused() {
        let e = load_workload("nope", 1).unwrap_err().to_string();
        assert_eq!(
            e,
            "nope: neither a named workload (small, medium, large, medium-contended) nor a file"
        );
    }

    #[test]
    fn every_generated_object_decodes() {
        let mut kinds = std::collections::BTreeSet::new();
        TINY.generate(&mut |v| {
            kinds.insert(tephra_cache::ObjectKind::of(&to_object(v)));
        });
        assert_eq!(kinds.len(), 5, "{kinds:?}");
    }
}
