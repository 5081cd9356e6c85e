//! What capacity reports for the metrics (Volcano: plugins/capacity/capacity.go feeds them at
//! open, on allocate and deallocate events, and `queue_overused` at close).

use super::attrs::QueueAttr;
use crate::framework::{QueueFigures, SessionState};
use crate::model::Resource;
use crate::plugins::queue_limits;

/// Every queue's figures at open. A queue with attributes reports them; without (flat
/// capacity, a queue with no job), its `spec.deserved`, zero allocation, request and
/// reservation, its `spec.capability` where set and the real capability it would have.
/// `hierarchy`: every queue has attributes, and reports its (inherited) capability.
pub(super) fn opened(
    ssn: &SessionState,
    attrs: &[Option<QueueAttr>],
    hierarchy: bool,
) -> Vec<QueueFigures> {
    let queues = &ssn.snap.queues;
    let total_guarantee = queue_limits::total_guarantee(ssn);
    queues
        .ids()
        .map(|q| {
            let mut figures = QueueFigures::named(&queues.name[q.idx()]);
            let spec_capability = queues.capability[q.idx()].clone();
            match attrs.get(q.idx()).and_then(Option::as_ref) {
                Some(a) => {
                    figures.deserved = Some(a.deserved.clone());
                    figures.allocated = Some(a.usage.allocated.clone());
                    figures.request = Some(a.usage.request.clone());
                    figures.inqueue = Some(a.usage.inqueue.clone());
                    figures.capacity = if hierarchy {
                        Some(a.capability.clone())
                    } else {
                        spec_capability
                    };
                    figures.real_capacity = Some(a.real_capability.clone());
                    figures.share = Some(a.share);
                }
                None => {
                    figures.deserved = Some(queues.deserved[q.idx()].clone().unwrap_or_default());
                    figures.allocated = Some(Resource::empty());
                    figures.request = Some(Resource::empty());
                    figures.inqueue = Some(Resource::empty());
                    figures.real_capacity = Some(queue_limits::real_capability(
                        &ssn.snap.total,
                        &total_guarantee,
                        &queue_limits::guarantee(ssn, q),
                        queue_limits::capability(ssn, q).as_ref(),
                    ));
                    figures.capacity = spec_capability;
                }
            }
            figures
        })
        .collect()
}

/// `opened` brought to close: the queues an allocate or deallocate event booked directly
/// (`touched`) report their allocation and share now (their ancestors keep the open figures,
/// as Volcano feeds only the booked queue); every queue with attributes reports whether its
/// share is above 1.
pub(super) fn closed(
    mut opened: Vec<QueueFigures>,
    attrs: &[Option<QueueAttr>],
    touched: &[bool],
) -> Vec<QueueFigures> {
    for (i, figures) in opened.iter_mut().enumerate() {
        let Some(a) = attrs.get(i).and_then(Option::as_ref) else {
            continue;
        };
        if touched.get(i).copied().unwrap_or(false) {
            figures.allocated = Some(a.usage.allocated.clone());
            figures.share = Some(a.share);
        }
        figures.overused = Some(a.share > 1.0);
    }
    opened
}
