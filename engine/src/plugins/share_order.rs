//! Ordering by a float share the way Volcano's plugins compare them.

use std::cmp::Ordering;

/// `l == r` → equal, `l < r` → less, anything else (NaN included) → greater, as Volcano's
/// `if l == r {0} else if l < r {-1} else {1}`.
pub(crate) fn compare_shares(l: f64, r: f64) -> Ordering {
    if l == r {
        Ordering::Equal
    } else if l < r {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smaller_share_orders_first_and_nan_orders_last() {
        assert_eq!(compare_shares(0.2, 0.5), Ordering::Less);
        assert_eq!(compare_shares(0.5, 0.5), Ordering::Equal);
        assert_eq!(compare_shares(f64::NAN, 0.5), Ordering::Greater);
        assert_eq!(compare_shares(0.5, f64::NAN), Ordering::Greater);
    }
}
