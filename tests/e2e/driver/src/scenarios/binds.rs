//! Who bound what, from the schedulers' logs (`bound ns/pod to node` at `-v=3`; a binding the
//! API server refused is logged as `failed to bind`): the check that every pod of a namespace
//! was bound exactly once, by a scheduler that logged it, to the node the API holds.

use std::collections::BTreeMap;

use anyhow::{Result, bail, ensure};

use super::placements;
use crate::ctx::Ctx;
use crate::proc::SchedulerProc;

/// The binds a scheduler made in `ns`, from its log: pod → node, in the order made.
pub fn binds_of(s: &SchedulerProc, ns: &str) -> Vec<(String, String)> {
    let prefix = format!("{ns}/");
    s.log_text()
        .lines()
        .filter_map(|line| {
            let rest = &line[line.find("bound ")? + "bound ".len()..];
            let mut words = rest.split_whitespace();
            let pod = words.next()?.strip_prefix(&prefix)?;
            (words.next()? == "to").then_some(())?;
            Some((pod.to_string(), words.next()?.to_string()))
        })
        .collect()
}

/// The pods of `ns` whose binding the API server refused a scheduler, from its log, once per
/// refusal.
pub fn refused_of(s: &SchedulerProc, ns: &str) -> Vec<String> {
    let needle = format!("failed to bind {ns}/");
    s.log_text()
        .lines()
        .filter_map(|l| {
            let rest = &l[l.find(&needle)? + needle.len()..];
            Some(rest.split_whitespace().next()?.to_string())
        })
        .collect()
}

/// Every pod of `ns` bound exactly once over all schedulers' logs, to the node the API holds;
/// the binds by scheduler.
pub async fn bound_once(
    ctx: &Ctx,
    ns: &str,
    schedulers: &[&SchedulerProc],
) -> Result<BTreeMap<String, Vec<(String, String)>>> {
    let placed = placements(ctx, ns).await?;
    let mut by_pod: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut by_scheduler = BTreeMap::new();
    for s in schedulers {
        let binds = binds_of(s, ns);
        for (pod, node) in &binds {
            by_pod
                .entry(pod.clone())
                .or_default()
                .push(format!("{} to {node}", s.name));
            ensure!(
                placed.get(pod) == Some(node),
                "{} bound {pod} to {node}, the API holds {:?}",
                s.name,
                placed.get(pod)
            );
        }
        by_scheduler.insert(s.name.clone(), binds);
    }
    for (pod, node) in &placed {
        match by_pod.get(pod).map(Vec::as_slice) {
            Some([_]) => {}
            None if node.is_empty() => bail!("{pod} is still pending"),
            None => bail!("{pod} is bound to {node} but no scheduler logged the bind"),
            Some(many) => bail!("{pod} was bound more than once: {many:?}"),
        }
    }
    Ok(by_scheduler)
}
