//! Water-filling the cluster among queues by weight: each round hands the remaining resources
//! out in proportion to the weights of the queues not yet satisfied, capped by each queue's
//! real capability and request and raised to its guarantee, until nothing is left or nothing
//! changes.

use super::attrs::QueueAttr;
use crate::model::{DimDefault, Resource};

/// Go's `equality.Semantic.DeepEqual` on resources: exact values, a missing scalar map equal to
/// an empty one.
fn same(a: &Resource, b: &Resource) -> bool {
    a.milli_cpu == b.milli_cpu && a.memory == b.memory && a.scalars().eq(b.scalars())
}

/// Fills in `deserved` (and `share`) of every attribute from the cluster `total`. Queues are
/// visited in id order; within a round the order does not matter because `remaining` only
/// changes between rounds.
pub(super) fn water_fill(total: &Resource, attrs: &mut [Option<QueueAttr>]) {
    let mut remaining = total.clone();
    let mut meet = vec![false; attrs.len()];
    loop {
        let total_weight: i64 = attrs
            .iter()
            .zip(&meet)
            .filter_map(|(a, &met)| a.as_ref().filter(|_| !met))
            .map(|a| i64::from(a.weight))
            .sum();
        if total_weight == 0 {
            break;
        }
        let old_remaining = remaining.clone();
        let mut increased = Resource::empty();
        let mut decreased = Resource::empty();
        for (attr, met) in attrs.iter_mut().zip(meet.iter_mut()) {
            let Some(a) = attr else { continue };
            if *met {
                continue;
            }
            let old = a.deserved.clone();
            let mut portion = remaining.clone();
            portion.multi(f64::from(a.weight) / total_weight as f64);
            a.deserved.add(&portion);
            a.deserved
                .min_dimension(&a.real_capability, DimDefault::Infinity);
            a.deserved.min_dimension(&a.usage.request, DimDefault::Zero);
            a.deserved = Resource::max_of(&a.deserved, &a.guarantee);
            a.update_share();
            // Satisfied, or capped: nothing more to give this queue.
            if a.usage.request.less_equal(&a.deserved, DimDefault::Zero) || same(&a.deserved, &old)
            {
                *met = true;
            }
            let (inc, dec) = a.deserved.diff(&old, DimDefault::Zero);
            increased.add(&inc);
            decreased.add(&dec);
        }
        remaining = remaining.plus(&decreased).exceeded_part(&increased);
        if remaining.is_empty() || same(&remaining, &old_remaining) {
            break;
        }
    }
}
