//! vc-scheduler's API writes, as its `tephra_api_writes_total` counter reports them.

use std::collections::BTreeMap;

/// `tephra_api_writes_total` from a metrics text, by `verb resource` (`create pods/binding`).
pub fn api_writes(metrics: &str) -> BTreeMap<String, f64> {
    metrics
        .lines()
        .filter_map(|l| l.strip_prefix("tephra_api_writes_total{"))
        .filter_map(|l| {
            let (labels, n) = l.split_once("} ")?;
            let label = |k: &str| {
                labels
                    .split(',')
                    .find_map(|p| p.strip_prefix(&format!("{k}=\"")))
                    .map(|v| v.trim_end_matches('"').to_string())
            };
            Some((
                format!("{} {}", label("verb")?, label("resource")?),
                n.trim().parse().ok()?,
            ))
        })
        .collect()
}

/// The count of one kind of write, 0 when it was never made.
pub fn count(writes: &BTreeMap<String, f64>, what: &str) -> f64 {
    writes.get(what).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_keyed_by_verb_and_resource_whatever_the_label_order() {
        let text = "# HELP tephra_api_writes_total x\n\
            tephra_api_writes_total{resource=\"pods/binding\",verb=\"create\"} 320\n\
            tephra_api_writes_total{verb=\"update\",resource=\"podgroups\"} 80\n\
            tephra_api_reads_total{verb=\"get\",resource=\"pods\"} 3\n";
        let w = api_writes(text);
        assert_eq!(count(&w, "create pods/binding"), 320.0);
        assert_eq!(count(&w, "update podgroups"), 80.0);
        assert_eq!(count(&w, "get pods"), 0.0);
        assert_eq!(w.len(), 2);
    }
}
