//! Consistent-hash partitioning between the replicas of one scheduler StatefulSet (Volcano:
//! pkg/scheduler/cache/util.go, getMultiSchedulerInfo, responsibleForPod, responsibleForNode
//! and responsibleForPodGroup). With `MULTI_SCHEDULER_ENABLE=true`, replica `SCHEDULER_POD_NAME`
//! (`<base>-<ordinal>`) keeps only the jobs and nodes that a hash ring over `<base>-0` ..
//! `<base>-(SCHEDULER_NUM - 1)` gives it, so the replicas split the cluster without talking to
//! one another. The ring is the one Volcano builds with stathat.com/c/consistent v1.0.0: twenty
//! points per member at the CRC-32 (IEEE) of `<i><member>`, a key owned by the member of the
//! first point above the key's CRC-32, wrapping round. Only the same ring lets tephra replicas
//! share a cluster with Volcano's.

use std::collections::BTreeMap;

/// Points each member has on the ring.
const POINTS_PER_MEMBER: usize = 20;

/// CRC-32 with the IEEE polynomial, as Go's `crc32.ChecksumIEEE`; keys are names, short enough
/// to hash bit by bit.
fn crc32_ieee(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let carry = crc & 1;
            crc = (crc >> 1) ^ (0xEDB8_8320 & 0u32.wrapping_sub(carry));
        }
    }
    !crc
}

/// The ring: each point's hash and the member that owns it.
#[derive(Debug, Clone)]
struct HashRing {
    points: Vec<(u32, String)>,
}

impl HashRing {
    fn new(members: &[String]) -> HashRing {
        // A later member's point replaces an earlier one's on a collision, as in the Go map.
        let mut by_hash = BTreeMap::new();
        for m in members {
            for i in 0..POINTS_PER_MEMBER {
                by_hash.insert(crc32_ieee(format!("{i}{m}").as_bytes()), m.clone());
            }
        }
        HashRing {
            points: by_hash.into_iter().collect(),
        }
    }

    /// The member owning `key`.
    fn owner(&self, key: &str) -> Option<&str> {
        let h = crc32_ieee(key.as_bytes());
        let i = self.points.partition_point(|(p, _)| *p <= h);
        self.points
            .get(i)
            .or(self.points.first())
            .map(|(_, m)| m.as_str())
    }
}

/// This replica and the ring it shares with its siblings.
#[derive(Debug, Clone)]
pub struct MultiScheduler {
    me: String,
    ring: HashRing,
}

impl MultiScheduler {
    /// Reads the environment through `var`: `None` unless `MULTI_SCHEDULER_ENABLE` is `true`.
    /// `SCHEDULER_NUM` unset counts one replica, as in Volcano; a value that is not a positive
    /// number, or a pod name without a `-<ordinal>` suffix, is an error naming the variable
    /// (Volcano runs on with one replica, or with none, or panics).
    pub fn from_env(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<MultiScheduler>, String> {
        if var("MULTI_SCHEDULER_ENABLE").as_deref() != Some("true") {
            return Ok(None);
        }
        let me = var("SCHEDULER_POD_NAME").unwrap_or_default();
        let Some((base, _)) = me.rsplit_once('-') else {
            return Err(format!(
                "SCHEDULER_POD_NAME={me:?}: a StatefulSet pod name <base>-<ordinal> is needed with MULTI_SCHEDULER_ENABLE=true"
            ));
        };
        let replicas = match var("SCHEDULER_NUM") {
            None => 1,
            Some(n) => n.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| {
                format!("SCHEDULER_NUM={n:?}: the number of scheduler replicas must be a positive integer")
            })?,
        };
        let members: Vec<String> = (0..replicas).map(|i| format!("{base}-{i}")).collect();
        Ok(Some(MultiScheduler {
            ring: HashRing::new(&members),
            me,
        }))
    }

    /// True when the ring gives `key` (a job's owner name, a pod name, a node name) to this
    /// replica.
    pub fn owns(&self, key: &str) -> bool {
        self.ring.owner(key) == Some(self.me.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn crc32_is_the_ieee_checksum() {
        assert_eq!(crc32_ieee(b""), 0);
        assert_eq!(crc32_ieee(b"123456789"), 0xCBF4_3926);
        assert_eq!(
            crc32_ieee(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
    }

    #[test]
    fn a_key_goes_to_the_first_point_above_its_hash_wrapping_round() {
        let ring = HashRing {
            points: vec![(10, "a".into()), (20, "b".into())],
        };
        let h = |k: &str| crc32_ieee(k.as_bytes());
        let owner_at = |hash: u32| {
            let i = ring.points.partition_point(|(p, _)| *p <= hash);
            ring.points
                .get(i)
                .or(ring.points.first())
                .unwrap()
                .1
                .clone()
        };
        assert_eq!(owner_at(5), "a");
        assert_eq!(
            owner_at(10),
            "b",
            "a point equal to the hash is passed over"
        );
        assert_eq!(
            owner_at(25),
            "a",
            "past the last point the ring wraps round"
        );
        assert_eq!(ring.owner("x").unwrap(), owner_at(h("x")));
    }

    #[test]
    fn replicas_split_the_keys_and_each_key_has_one_owner() {
        let replicas: Vec<MultiScheduler> = (0..3)
            .map(|i| {
                let me = format!("vc-scheduler-{i}");
                MultiScheduler::from_env(env(&[
                    ("MULTI_SCHEDULER_ENABLE", "true"),
                    ("SCHEDULER_NUM", "3"),
                    ("SCHEDULER_POD_NAME", &me),
                ]))
                .unwrap()
                .unwrap()
            })
            .collect();
        let mut per_replica = [0; 3];
        for k in 0..300 {
            let key = format!("job-{k}");
            let owners: Vec<usize> = (0..3).filter(|&i| replicas[i].owns(&key)).collect();
            assert_eq!(owners.len(), 1, "{key}: {owners:?}");
            per_replica[owners[0]] += 1;
        }
        assert!(per_replica.iter().all(|&n| n > 30), "{per_replica:?}");
    }

    /// Owners worked out apart from this code (Python's zlib.crc32 over the same ring), so a
    /// tephra replica agrees with a Volcano one on every key.
    #[test]
    fn keys_go_to_the_replicas_volcanos_ring_gives_them() {
        let owner = |key: &str| {
            (0..3)
                .map(|i| format!("vc-scheduler-{i}"))
                .find(|me| {
                    MultiScheduler::from_env(env(&[
                        ("MULTI_SCHEDULER_ENABLE", "true"),
                        ("SCHEDULER_NUM", "3"),
                        ("SCHEDULER_POD_NAME", me),
                    ]))
                    .unwrap()
                    .unwrap()
                    .owns(key)
                })
                .unwrap()
        };
        for (key, replica) in [
            ("job-a", "vc-scheduler-1"),
            ("job-b", "vc-scheduler-2"),
            ("job-c", "vc-scheduler-0"),
            ("node-1", "vc-scheduler-0"),
            ("node-3", "vc-scheduler-2"),
            ("pytorch-job", "vc-scheduler-1"),
        ] {
            assert_eq!(owner(key), replica, "{key}");
        }
    }

    #[test]
    fn off_unless_enabled_and_bad_settings_are_named() {
        assert!(MultiScheduler::from_env(env(&[])).unwrap().is_none());
        let one = MultiScheduler::from_env(env(&[
            ("MULTI_SCHEDULER_ENABLE", "true"),
            ("SCHEDULER_POD_NAME", "vc-0"),
        ]))
        .unwrap()
        .unwrap();
        assert!(one.owns("anything"), "a lone replica owns every key");
        let e = MultiScheduler::from_env(env(&[
            ("MULTI_SCHEDULER_ENABLE", "true"),
            ("SCHEDULER_POD_NAME", "scheduler"),
        ]))
        .unwrap_err();
        assert!(e.starts_with("SCHEDULER_POD_NAME="), "{e}");
        let e = MultiScheduler::from_env(env(&[
            ("MULTI_SCHEDULER_ENABLE", "true"),
            ("SCHEDULER_POD_NAME", "vc-1"),
            ("SCHEDULER_NUM", "zero"),
        ]))
        .unwrap_err();
        assert!(e.starts_with("SCHEDULER_NUM="), "{e}");
    }
}
