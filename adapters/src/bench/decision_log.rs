//! Every decision of a cycle as sorted text lines, so two runs (two thread counts, cached and
//! plain paths, two builds) can be compared byte for byte with `cmp` or `diff`.

use std::fmt::Write;

use tephra_engine::framework::{Decisions, EventObject};

/// Appends `cycle N` and the cycle's decisions, one per line, sorted.
pub fn append_cycle(log: &mut String, cycle: u32, d: &Decisions) {
    let mut lines: Vec<String> = Vec::new();
    for b in &d.binds {
        lines.push(format!("bind {}/{} {}", b.namespace, b.name, b.node));
    }
    for e in &d.evictions {
        lines.push(format!("evict {}/{} {}", e.namespace, e.name, e.reason));
    }
    for p in &d.pipelined {
        lines.push(format!("pipeline {}/{} {}", p.namespace, p.name, p.node));
    }
    for pg in &d.pod_groups {
        // A status is plain data whose maps are ordered, so its JSON is stable.
        let status = serde_json::to_string(&pg.status).unwrap_or_default();
        let changed = if pg.changed { "changed" } else { "same" };
        lines.push(format!(
            "podgroup {}/{} {changed} {status}",
            pg.namespace, pg.name
        ));
    }
    for q in &d.queues {
        let allocated = serde_json::to_string(&q.allocated).unwrap_or_default();
        lines.push(format!("queue {} {allocated}", q.name));
    }
    for c in &d.pod_conditions {
        let nominated = c.nominated_node.as_deref().unwrap_or("-");
        lines.push(format!(
            "condition {}/{} {} nominated={nominated} {}",
            c.namespace, c.name, c.reason, c.message
        ));
    }
    for e in &d.events {
        let (kind, ns, name) = match &e.object {
            EventObject::Pod { namespace, name } => ("Pod", namespace, name),
            EventObject::PodGroup { namespace, name } => ("PodGroup", namespace, name),
        };
        lines.push(format!(
            "event {kind} {ns}/{name} {} {} {}",
            e.type_, e.reason, e.message
        ));
    }
    lines.sort_unstable();
    // Writing to a String cannot fail.
    let _ = writeln!(log, "cycle {cycle}");
    for l in lines {
        log.push_str(&l);
        log.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_engine::framework::{Bind, PodConditionUpdate};

    #[test]
    fn lines_are_sorted_whatever_the_decision_order() {
        let bind = |name: &str, node: &str| Bind {
            namespace: "ns".into(),
            name: name.into(),
            uid: "".into(),
            node: node.into(),
            volumes: None,
            node_lock: None,
            annotations: Default::default(),
        };
        let d = Decisions {
            binds: vec![bind("b", "n1"), bind("a", "n2")],
            pod_conditions: vec![PodConditionUpdate {
                namespace: "ns".into(),
                name: "c".into(),
                reason: "Unschedulable",
                message: "0/2 nodes are unavailable".into(),
                nominated_node: None,
            }],
            ..Default::default()
        };
        let mut log = String::new();
        append_cycle(&mut log, 1, &d);
        assert_eq!(
            log,
            "cycle 1\nbind ns/a n2\nbind ns/b n1\ncondition ns/c Unschedulable nominated=- 0/2 nodes are unavailable\n"
        );
    }
}
