//! Dominant resource shares: a resource vector's largest fraction of the cluster total over the
//! dimensions the cluster has.

use crate::model::{Resource, ResourceName, share};

/// The cluster total and its dimensions (those of at least ε).
#[derive(Debug, Clone, Default)]
pub(super) struct DominantShare {
    total: Resource,
    names: Vec<ResourceName>,
}

impl DominantShare {
    pub fn new(total: &Resource) -> Self {
        DominantShare {
            total: total.clone(),
            names: total.resource_names().collect(),
        }
    }

    /// `calculateShare`: the largest `allocated[r] / total[r]`, 0 when nothing is allocated.
    pub fn of(&self, allocated: &Resource) -> f64 {
        let mut max = 0.0;
        for &n in &self.names {
            let s = share(allocated.get(n), self.total.get(n));
            if s > max {
                max = s;
            }
        }
        max
    }

    /// Dimensions of the cluster `total_allocated` has not used up.
    pub fn demanding(&self, total_allocated: &Resource) -> Vec<ResourceName> {
        self.names
            .iter()
            .copied()
            .filter(|&n| total_allocated.get(n) < self.total.get(n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_is_the_largest_fraction_of_the_cluster() {
        let d = DominantShare::new(&Resource::cpu_mem(10_000.0, 100.0));
        assert_eq!(d.of(&Resource::cpu_mem(2_000.0, 50.0)), 0.5);
        assert_eq!(d.of(&Resource::empty()), 0.0);
    }

    #[test]
    fn demanding_dimensions_are_those_not_used_up() {
        let d = DominantShare::new(&Resource::cpu_mem(10_000.0, 100.0));
        assert_eq!(
            d.demanding(&Resource::cpu_mem(10_000.0, 50.0)),
            [ResourceName::Memory]
        );
    }
}
