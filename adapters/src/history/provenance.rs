//! Where and when a record is made: the checkout's commit, the time, the machine.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use super::record::{Machine, Provenance, SCHEMA};
use crate::InputError;

/// The folder of the history inside the repository, left out of the `dirty` check: appending
/// a record must not make the next one dirty.
const HISTORY_DIR: &str = "perf/history";

impl Provenance {
    /// A record made now on this machine, of the checkout `repo` is in (its commit and whether
    /// it has uncommitted changes, read with `git`).
    pub fn of_checkout(repo: &Path) -> Result<Provenance, InputError> {
        let commit = git(repo, &["rev-parse", "--short=12", "HEAD"])?;
        let exclude = format!(":(exclude){HISTORY_DIR}");
        let changes = git(
            repo,
            &[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                &exclude,
            ],
        )?;
        Ok(Provenance {
            schema: SCHEMA,
            commit,
            dirty: !changes.is_empty(),
            date: utc_now(),
            machine: Machine::this(),
        })
    }
}

/// `git -C repo ARGS`, its output trimmed.
fn git(repo: &Path, args: &[&str]) -> Result<String, InputError> {
    let origin = || repo.display().to_string();
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .map_err(|e| InputError::new(origin(), format!("cannot run git: {e}")))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err(InputError::new(
            origin(),
            format!("git {}: {}", args.join(" "), why.trim()),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Machine {
    /// This machine, as `/proc` describes it (Linux; elsewhere only the core count).
    pub fn this() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Machine {
            nproc: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            cpu_model: cpu_model(&cpuinfo),
            memory_bytes: mem_total_bytes(&meminfo),
        }
    }
}

/// The first `model name` of `/proc/cpuinfo`.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == "model name").then(|| value.trim().to_string())
    })
}

/// `MemTotal` of `/proc/meminfo` (given in KiB) in bytes.
fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The current time, UTC, as RFC 3339 to the second.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
fn rfc3339(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_date(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_310_000), "2026-12-03T15:00:00Z");
    }

    #[test]
    fn the_machine_is_read_from_proc_text() {
        let cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: x\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(cpu_model("processor: 0\n"), None);
        assert_eq!(
            mem_total_bytes("MemTotal:       2048 kB\nMemFree: 1 kB\n"),
            Some(2 * 1024 * 1024)
        );
        assert_eq!(mem_total_bytes(""), None);
    }

    #[test]
    fn outside_a_checkout_git_is_named_in_the_error() {
        let e = Provenance::of_checkout(Path::new("/")).unwrap_err();
        assert!(e.to_string().starts_with("/: "), "{e}");
        assert!(e.to_string().contains("git"), "{e}");
    }
}
