//! What a failed scenario leaves on the console: the last lines of every log it wrote (its
//! schedulers', kwok's), since the work folder with the whole logs is removed when the run ends
//! (`KEEP_E2E_WORK=1` keeps it). A failure seen once in CI can then still be read.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Lines kept from the end of each log.
const TAIL_LINES: usize = 20;

/// The logs of the server itself: `tests/e2e/run` prints the API server's tail at the end.
const SERVER_LOGS: [&str; 2] = ["apiserver.log", "etcd.log"];

/// Prints the tail of each log in `work` changed since `since`, oldest first.
pub fn print_tails(work: &Path, since: SystemTime) {
    for (name, lines) in tails(work, since) {
        println!("       --- last lines of {name} ---");
        for line in lines {
            println!("       {line}");
        }
    }
}

/// Each `*.log` of `work` but the server's, changed since `since`, oldest first: its name and
/// its last `TAIL_LINES` lines.
fn tails(work: &Path, since: SystemTime) -> Vec<(String, Vec<String>)> {
    let Ok(entries) = std::fs::read_dir(work) else {
        return Vec::new();
    };
    let mut logs: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .filter(|p| !SERVER_LOGS.contains(&file_name(p)))
        .filter_map(|p| {
            let modified = p.metadata().and_then(|m| m.modified()).ok()?;
            (modified >= since).then_some((modified, p))
        })
        .collect();
    logs.sort();
    logs.into_iter()
        .map(|(_, path)| {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            let tail = lines[lines.len().saturating_sub(TAIL_LINES)..].to_vec();
            (file_name(&path).to_string(), tail)
        })
        .collect()
}

fn file_name(path: &Path) -> &str {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Writes `text` to `dir/name`, modified at `at`.
    fn log(dir: &Path, name: &str, text: &str, at: SystemTime) {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(at).unwrap();
    }

    #[test]
    fn the_tails_of_the_logs_written_since_the_start_are_shown_but_not_the_servers() {
        let dir = std::env::temp_dir().join(format!("tephra-e2e-tails-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let start = SystemTime::now();
        let long: String = (0..30).map(|i| format!("line {i}\n")).collect();
        log(
            &dir,
            "earlier.log",
            "old\n",
            start - Duration::from_secs(60),
        );
        log(&dir, "shard-b.log", "b\n", start + Duration::from_secs(2));
        log(&dir, "shard-a.log", &long, start + Duration::from_secs(1));
        log(
            &dir,
            "apiserver.log",
            "server\n",
            start + Duration::from_secs(1),
        );
        log(
            &dir,
            "notes.txt",
            "not a log\n",
            start + Duration::from_secs(1),
        );
        let shown = tails(&dir, start);
        std::fs::remove_dir_all(&dir).unwrap();
        let names: Vec<&str> = shown.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["shard-a.log", "shard-b.log"]);
        assert_eq!(shown[0].1.len(), TAIL_LINES);
        assert_eq!(shown[0].1.first().map(String::as_str), Some("line 10"));
        assert_eq!(shown[0].1.last().map(String::as_str), Some("line 29"));
    }
}
