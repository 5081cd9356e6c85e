//! Finding scenario files: named files as given, directories searched for `*.yaml`.

use std::path::{Path, PathBuf};

use crate::InputError;

/// The scenario files under `paths`, each directory's files sorted; README files are skipped.
pub fn find_scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found)?;
            found.sort();
            files.extend(found);
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            return Err(InputError::new(
                path.display().to_string(),
                "no such file or directory",
            ));
        }
    }
    Ok(files)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let unreadable = |e: std::io::Error| {
        InputError::new(
            dir.display().to_string(),
            format!("cannot read directory: {e}"),
        )
    };
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        if path.is_dir() {
            walk(&path, found)?;
        } else if is_scenario_name(&path) {
            found.push(path);
        }
    }
    Ok(())
}

fn is_scenario_name(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".yaml") && !name.to_ascii_lowercase().starts_with("readme")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;

    #[test]
    fn directories_are_searched_recursively_for_yaml_without_readmes() {
        let files = [
            "b/2.yaml",
            "b/1.yaml",
            "a.yaml",
            "README.yaml",
            "notes.md",
            "b/c/3.yaml",
        ]
        .map(|f| (f, ""));
        let dir = TestDir::new(&files);
        let found = find_scenario_files(&[dir.path().to_path_buf()]).unwrap();
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["a.yaml", "b/1.yaml", "b/2.yaml", "b/c/3.yaml"]);
    }

    #[test]
    fn a_missing_path_is_named() {
        let e = find_scenario_files(&[PathBuf::from("/nonexistent/cases")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/nonexistent/cases: no such file or directory"
        );
    }
}
