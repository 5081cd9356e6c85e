//! The cache dumper (Volcano: pkg/scheduler/cache/dumper.go): on SIGUSR1 the cache is written as JSON to
//! `<--cache-dump-dir>/snapshot-<unix seconds>.json`.

use std::path::{Path, PathBuf};

use serde_json::json;
use tephra_cache::ClusterState;

/// Writes the dump and returns its path; the error names the file.
pub fn dump(state: &ClusterState, dir: &Path, unix: i64) -> Result<PathBuf, String> {
    let path = dir.join(format!("snapshot-{unix}.json"));
    let doc = json!({
        "nodes": state.nodes().collect::<Vec<_>>(),
        "podGroups": state.pod_groups().collect::<Vec<_>>(),
        "queues": state.queues().collect::<Vec<_>>(),
        "pods": state.pods().collect::<Vec<_>>(),
    });
    let text = serde_json::to_vec_pretty(&doc).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::api::{ClusterObject, Node};

    #[test]
    fn dump_lists_cached_objects() {
        let mut n = Node::default();
        n.metadata.name = "n1".into();
        let state = ClusterState::from_objects([ClusterObject::Node(Box::new(n))]);
        let dir = std::env::temp_dir();
        let path = dump(&state, &dir, 4242).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["nodes"][0]["metadata"]["name"], "n1");
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn an_unwritable_directory_is_named() {
        let e = dump(&ClusterState::new(), Path::new("/no/such/dir"), 1).unwrap_err();
        assert!(e.contains("/no/such/dir/snapshot-1.json"), "{e}");
    }
}
