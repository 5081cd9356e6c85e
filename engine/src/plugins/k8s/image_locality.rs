//! ImageLocality: nodes that already hold the pod's images score higher, weighted by how widely
//! each image is spread. Per node, not normalised.
//!
//! Volcano counts an image's nodes when each node enters its cache, so earlier nodes may see a
//! smaller count; tephra counts over the whole snapshot (the value the last node sees). Image
//! volumes are not modelled (tephra's pods have no volumes).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use foldhash::fast::FixedState;

use super::normalize::MAX_NODE_SCORE;
use crate::api::Pod;

const MB: i64 = 1024 * 1024;
const MIN_THRESHOLD: i64 = 23 * MB;
const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

/// How many nodes hold each image name, and how many nodes there are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImageSpread {
    /// Hashed with foldhash: allocate looks the pod's images up for every node it scores.
    nodes_with: HashMap<String, usize, FixedState>,
    total: usize,
}

/// `normalizedImageName`: a name without a tag gets `:latest` (a tagged name is lent as it is:
/// allocate scores every node of a class with it).
fn normalized(name: &str) -> Cow<'_, str> {
    let colon = name.rfind(':').map_or(-1, |i| i as i64);
    let slash = name.rfind('/').map_or(-1, |i| i as i64);
    if colon <= slash {
        Cow::Owned(format!("{name}:latest"))
    } else {
        Cow::Borrowed(name)
    }
}

impl ImageSpread {
    /// Counts image names over the nodes' image tables.
    pub fn of<'a>(
        node_images: impl ExactSizeIterator<Item = &'a BTreeMap<String, i64>>,
    ) -> ImageSpread {
        let total = node_images.len();
        let mut nodes_with: HashMap<String, usize, FixedState> = HashMap::default();
        for images in node_images {
            for name in images.keys() {
                *nodes_with.entry(name.clone()).or_default() += 1;
            }
        }
        ImageSpread { nodes_with, total }
    }

    /// `Score`: Σ size × spread over the pod's images present on the node, clamped to
    /// [23MiB, 1000MiB × containers] and scaled to [0, 100].
    pub fn score(&self, pod: &Pod, node_images: &BTreeMap<String, i64>) -> i64 {
        // A node without images (most in a fresh cluster) holds none of the pod's: the sum is
        // below the threshold whatever the pod, so the score is 0 without reading the pod.
        if node_images.is_empty() {
            return 0;
        }
        let mut sum = 0i64;
        for c in pod.spec.init_containers.iter().chain(&pod.spec.containers) {
            let name = normalized(&c.image);
            if let Some(&size) = node_images.get(name.as_ref()) {
                let with = self.nodes_with.get(name.as_ref()).copied().unwrap_or(0);
                sum += (size as f64 * (with as f64 / self.total as f64)) as i64;
            }
        }
        let containers = (pod.spec.init_containers.len() + pod.spec.containers.len()) as i64;
        let max_threshold = MAX_CONTAINER_THRESHOLD * containers;
        let sum = if sum < MIN_THRESHOLD {
            MIN_THRESHOLD
        } else {
            sum.min(max_threshold)
        };
        MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn images(p: &[(&str, i64)]) -> BTreeMap<String, i64> {
        p.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn untagged_names_get_latest() {
        assert_eq!(normalized("nginx"), "nginx:latest");
        assert_eq!(normalized("registry:5000/app"), "registry:5000/app:latest");
        assert_eq!(normalized("app:v1"), "app:v1");
    }

    #[test]
    fn an_image_on_half_the_nodes_counts_half_its_size() {
        let n1 = images(&[("app:v1", 500 * MB)]);
        let n2 = images(&[]);
        let spread = ImageSpread::of([&n1, &n2].into_iter());
        let pod: Pod = serde_saphyr::from_str("spec: {containers: [{image: 'app:v1'}]}").unwrap();
        assert_eq!(
            spread.score(&pod, &n1),
            100 * (250 * MB - MIN_THRESHOLD) / (1000 * MB - MIN_THRESHOLD)
        );
        assert_eq!(spread.score(&pod, &n2), 0);
    }
}
