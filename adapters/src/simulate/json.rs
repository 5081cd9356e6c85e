//! The JSON view of a simulation, for tools:
//! `{"cycles":[{"binds":{..},"evictions":[..],"pipelined":{..},"podGroups":{..},
//! "waiting":{job:{pod:reason}},"notScheduled":{pod:reason}}]}`, maps sorted by key: what the
//! text view shows, every waiting pod with its own reason.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;
use tephra_engine::api::PodGroupCondition;

use super::CycleReport;

#[derive(Serialize)]
struct Simulation<'a> {
    cycles: Vec<Cycle<'a>>,
}

#[derive(Serialize)]
struct Cycle<'a> {
    binds: BTreeMap<&'a str, &'a str>,
    evictions: Vec<&'a str>,
    pipelined: BTreeMap<&'a str, &'a str>,
    #[serde(rename = "podGroups")]
    pod_groups: BTreeMap<&'a str, PodGroup<'a>>,
    /// Jobs with pods left unplaced: `job -> pod -> reason`.
    waiting: BTreeMap<&'a str, BTreeMap<&'a str, &'a str>>,
    /// Pending pods in no session job, with why.
    #[serde(rename = "notScheduled")]
    not_scheduled: BTreeMap<&'a str, &'a str>,
}

#[derive(Serialize)]
struct PodGroup<'a> {
    phase: &'a str,
    conditions: &'a [PodGroupCondition],
}

fn pairs(entries: &[(String, String)]) -> BTreeMap<&str, &str> {
    entries
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// Writes the simulation as one line of JSON.
pub fn write_json(cycles: &[CycleReport], out: &mut dyn Write) -> io::Result<()> {
    let doc = Simulation {
        cycles: cycles
            .iter()
            .map(|c| Cycle {
                binds: pairs(&c.binds),
                evictions: c.evictions.iter().map(|(pod, _)| pod.as_str()).collect(),
                pipelined: pairs(&c.pipelined),
                pod_groups: c
                    .pod_groups
                    .iter()
                    .map(|(k, s)| {
                        (
                            k.as_str(),
                            PodGroup {
                                phase: &s.phase,
                                conditions: &s.conditions,
                            },
                        )
                    })
                    .collect(),
                waiting: c
                    .waiting
                    .iter()
                    .map(|w| (w.job.as_str(), pairs(&w.pods)))
                    .collect(),
                not_scheduled: pairs(&c.orphans),
            })
            .collect(),
    };
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::api::PodGroupStatus;

    #[test]
    fn shape_is_exact_with_sorted_maps_and_keeps_unscheduled_pods_with_reasons() {
        let c = CycleReport {
            binds: vec![("ns/b".into(), "n2".into()), ("ns/a".into(), "n1".into())],
            evictions: vec![("ns/v".into(), "preempt".into())],
            pipelined: vec![("ns/w".into(), "n3".into())],
            pod_groups: [(
                "ns/pg".to_string(),
                PodGroupStatus {
                    phase: "Running".into(),
                    ..Default::default()
                },
            )]
            .into(),
            waiting: vec![super::super::Waiting {
                job: "ns/big".into(),
                pods: vec![("ns/big-0".into(), "0/3 nodes are unavailable".into())],
            }],
            orphans: vec![("ns/loose".into(), "names no PodGroup".into())],
        };
        let mut out = Vec::new();
        write_json(&[c], &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"cycles":[{"binds":{"ns/a":"n1","ns/b":"n2"},"evictions":["ns/v"],"pipelined":{"ns/w":"n3"},"#,
                r#""podGroups":{"ns/pg":{"phase":"Running","conditions":[]}},"#,
                r#""waiting":{"ns/big":{"ns/big-0":"0/3 nodes are unavailable"}},"#,
                r#""notScheduled":{"ns/loose":"names no PodGroup"}}]}"#,
                "\n"
            )
        );
    }
}
