//! `helper.DefaultNormalizeScore`: scale raw scores so the best node gets `MAX_NODE_SCORE`,
//! optionally reversed (fewer is better).

/// kube's `MaxNodeScore`.
pub const MAX_NODE_SCORE: i64 = 100;
/// kube's `MinNodeScore`.
pub const MIN_NODE_SCORE: i64 = 0;

/// Scales `scores` in place by `100 * s / max` (Go integer division); with every score ≤ 0 the
/// scores stay as they are, or all become 100 when `reverse`.
pub fn default_normalize(scores: &mut [i64], reverse: bool) {
    let max = scores.iter().copied().fold(0, i64::max);
    if max == 0 {
        if reverse {
            scores.iter_mut().for_each(|s| *s = MAX_NODE_SCORE);
        }
        return;
    }
    for s in scores.iter_mut() {
        let scaled = MAX_NODE_SCORE * *s / max;
        *s = if reverse {
            MAX_NODE_SCORE - scaled
        } else {
            scaled
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_scale_to_the_maximum_with_truncation() {
        let mut s = vec![3, 1, 0];
        default_normalize(&mut s, false);
        assert_eq!(s, vec![100, 33, 0]);
    }

    #[test]
    fn reversed_scores_favour_the_smallest_raw_value() {
        let mut s = vec![0, 1];
        default_normalize(&mut s, true);
        assert_eq!(s, vec![100, 0]);
    }

    #[test]
    fn all_zero_scores_stay_zero_or_become_full_when_reversed() {
        let mut s = vec![0, 0];
        default_normalize(&mut s, false);
        assert_eq!(s, vec![0, 0]);
        default_normalize(&mut s, true);
        assert_eq!(s, vec![100, 100]);
    }
}
