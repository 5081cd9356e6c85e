//! The text view of a simulation, for people: placements, evictions and why jobs wait.

use std::io::{self, Write};

use super::{CycleReport, Waiting};

/// The engine says "0/3 nodes are unavailable: ..."; kube-scheduler users read "are available".
fn kube_style(message: &str) -> String {
    message.replace("nodes are unavailable", "nodes are available")
}

/// The reason to show for a waiting job: the first pod's own fit errors when some pod has them
/// (the others then say "Origin reason is <that pod>: ..."), else the first pod's message.
fn headline(w: &Waiting) -> &str {
    let messages = || w.pods.iter().map(|(_, m)| m.as_str());
    messages()
        .find(|m| m.contains("nodes are unavailable") && !m.contains("Origin reason"))
        .or_else(|| messages().next())
        .unwrap_or_default()
}

/// Writes every cycle; a waiting job's pods are listed only when their reason says more than
/// the job's headline.
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
                let headline = headline(w);
                writeln!(out, "    {}: {}", w.job, kube_style(headline))?;
                for (pod, message) in &w.pods {
                    if !message.contains(headline) {
                        writeln!(out, "      {pod}: {}", kube_style(message))?;
                    }
                }
            }
        }
        if !c.orphans.is_empty() {
            writeln!(out, "  not scheduled (no PodGroup in a known queue):")?;
            for (pod, why) in &c.orphans {
                writeln!(out, "    {pod}: {why}")?;
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

    fn text(cycles: &[CycleReport]) -> String {
        let mut out = Vec::new();
        write_text(cycles, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn waiting(pods: &[(&str, &str)]) -> CycleReport {
        let pods = pods
            .iter()
            .map(|(p, m)| (p.to_string(), m.to_string()))
            .collect();
        CycleReport {
            waiting: vec![Waiting {
                job: "ns/big".into(),
                pods,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn placements_and_a_gang_reason_read_like_kube_scheduler() {
        let mut c = waiting(&[
            ("ns/b-0", "0/3 nodes are unavailable: 3 Insufficient cpu."),
            (
                "ns/b-1",
                "pod group is not ready, 2 Pending, 2 minAvailable. Origin reason is b-0: 0/3 nodes are unavailable: 3 Insufficient cpu.",
            ),
        ]);
        c.binds = vec![("ns/a".into(), "n1".into())];
        assert_eq!(
            text(&[c]),
            "cycle 1\n  placed:\n    ns/a -> n1\n  waiting:\n    ns/big: 0/3 nodes are available: 3 Insufficient cpu.\n"
        );
    }

    #[test]
    fn pods_with_other_reasons_are_listed_under_the_job() {
        let c = waiting(&[("ns/p", "x"), ("ns/q", "y"), ("ns/r", "x")]);
        assert_eq!(
            text(&[c]),
            "cycle 1\n  placed: none\n  waiting:\n    ns/big: x\n      ns/q: y\n"
        );
    }

    #[test]
    fn pod_groups_orphans_and_evictions_are_shown_when_present() {
        let c = CycleReport {
            evictions: vec![("ns/v".into(), "preempt".into())],
            pipelined: vec![("ns/w".into(), "n2".into())],
            orphans: vec![(
                "ns/loose".into(),
                "its PodGroup ns/g is not in the input".into(),
            )],
            pod_groups: [(
                "ns/pg".to_string(),
                tephra_engine::api::PodGroupStatus {
                    phase: "Running".into(),
                    ..Default::default()
                },
            )]
            .into(),
            ..Default::default()
        };
        let t = text(&[c]);
        for line in [
            "    ns/v (preempt)\n",
            "    ns/w -> n2\n",
            "    ns/loose: its PodGroup ns/g is not in the input\n",
            "    ns/pg: Running\n",
        ] {
            assert!(t.contains(line), "{line:?} not in:\n{t}");
        }
    }
}
