//! The text view of a simulation, for people: placements, evictions and why jobs wait.

use std::io::{self, Write};

use super::CycleReport;

/// The engine says "0/3 nodes are unavailable: ..."; kube-scheduler users read "are available".
fn kube_style(message: &str) -> String {
    message.replace("nodes are unavailable", "nodes are available")
}

/// Writes every cycle.
pub fn write_text(cycles: &[CycleReport], out: &mut dyn Write) -> io::Result<()> {
    for (i, c) in cycles.iter().enumerate() {
        writeln!(out, "cycle {}", i + 1)?;
        if c.binds.is_empty() {
            writeln!(out, "  placed: none")?;
        } else {
            writeln!(out, "  placed:")?;
            for (pod, node) in &c.binds {
                writeln!(out, "    {pod} -> {node}")?;
            }
        }
        if !c.evictions.is_empty() {
            writeln!(out, "  evicted:")?;
            for (pod, reason) in &c.evictions {
                writeln!(out, "    {pod} ({reason})")?;
            }
        }
        if !c.pipelined.is_empty() {
            writeln!(out, "  pipelined (waiting for resources being released):")?;
            for (pod, node) in &c.pipelined {
                writeln!(out, "    {pod} -> {node}")?;
            }
        }
        if !c.waiting.is_empty() {
            writeln!(out, "  waiting:")?;
            for w in &c.waiting {
                let first = &w.pods[0].1;
                if w.pods.iter().all(|(_, m)| m == first) {
                    writeln!(out, "    {}: {}", w.job, kube_style(first))?;
                } else {
                    writeln!(out, "    {}:", w.job)?;
                    for (pod, message) in &w.pods {
                        writeln!(out, "      {pod}: {}", kube_style(message))?;
                    }
                }
            }
        }
        if !c.orphans.is_empty() {
            writeln!(out, "  not scheduled (no PodGroup in a known queue):")?;
            for pod in &c.orphans {
                writeln!(out, "    {pod}")?;
            }
        }
        if !c.pod_groups.is_empty() {
            writeln!(out, "  pod groups:")?;
            for (pg, status) in &c.pod_groups {
                writeln!(out, "    {pg}: {}", status.phase)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::Waiting;

    fn text(cycles: &[CycleReport]) -> String {
        let mut out = Vec::new();
        write_text(cycles, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn placements_and_a_shared_reason_read_like_kube_scheduler() {
        let c = CycleReport {
            binds: vec![("ns/a".into(), "n1".into())],
            waiting: vec![Waiting {
                job: "ns/big".into(),
                pods: vec![
                    (
                        "ns/b-0".into(),
                        "0/3 nodes are unavailable: 3 Insufficient cpu.".into(),
                    ),
                    (
                        "ns/b-1".into(),
                        "0/3 nodes are unavailable: 3 Insufficient cpu.".into(),
                    ),
                ],
            }],
            ..Default::default()
        };
        assert_eq!(
            text(&[c]),
            "cycle 1\n  placed:\n    ns/a -> n1\n  waiting:\n    ns/big: 0/3 nodes are available: 3 Insufficient cpu.\n"
        );
    }

    #[test]
    fn differing_reasons_are_listed_per_pod() {
        let c = CycleReport {
            waiting: vec![Waiting {
                job: "ns/j".into(),
                pods: vec![("ns/p".into(), "x".into()), ("ns/q".into(), "y".into())],
            }],
            ..Default::default()
        };
        assert_eq!(
            text(&[c]),
            "cycle 1\n  placed: none\n  waiting:\n    ns/j:\n      ns/p: x\n      ns/q: y\n"
        );
    }
}
