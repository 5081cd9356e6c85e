//! Quantities written the way Volcano's Go code writes them: queue `status.allocated` holds
//! CPU and scalar resources as milli-quantities (DecimalSI), memory as bytes (BinarySI) and
//! pods as a plain count, each in apimachinery's canonical form (`6`, `1500m`, `6Gi`).

use std::collections::BTreeMap;

use tephra_engine::api::ResourceList;
use tephra_engine::model::Quantity;

/// DecimalSI canonical text of `milli` thousandths: the largest SI suffix that keeps the
/// number whole (`1500m`, `6`, `3k`).
fn decimal_si(milli: i64) -> String {
    if milli == 0 {
        return "0".into();
    }
    let suffixes = ["m", "", "k", "M", "G", "T", "P", "E"];
    let (mut n, mut i) = (milli, 0);
    while i + 1 < suffixes.len() && n % 1000 == 0 {
        n /= 1000;
        i += 1;
    }
    format!("{n}{}", suffixes[i])
}

/// BinarySI canonical text of `bytes`: the largest power-of-1024 suffix that keeps the
/// number whole (`6Gi`, `1536Mi`, `1000`).
fn binary_si(bytes: i64) -> String {
    if bytes == 0 {
        return "0".into();
    }
    let suffixes = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let (mut n, mut i) = (bytes, 0);
    while i + 1 < suffixes.len() && n % 1024 == 0 {
        n /= 1024;
        i += 1;
    }
    format!("{n}{}", suffixes[i])
}

/// The text Volcano writes for resource `name`.
pub fn go_text(name: &str, q: &Quantity) -> String {
    match name {
        "memory" => binary_si(q.value()),
        "pods" => q.value().to_string(),
        _ => decimal_si(q.milli_value()),
    }
}

/// A resource list as Volcano writes it, for writing and for comparing by value.
pub fn go_list(list: &ResourceList) -> BTreeMap<String, String> {
    list.iter()
        .map(|(k, q)| (k.clone(), go_text(k, q)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn cpu_is_a_canonical_milli_quantity() {
        assert_eq!(go_text("cpu", &q("6000m")), "6");
        assert_eq!(go_text("cpu", &q("1500m")), "1500m");
        assert_eq!(go_text("cpu", &q("3000")), "3k");
        assert_eq!(go_text("nvidia.com/gpu", &q("2")), "2");
    }

    #[test]
    fn memory_is_canonical_bytes() {
        assert_eq!(go_text("memory", &q("6442450944")), "6Gi");
        assert_eq!(go_text("memory", &q("1.5Gi")), "1536Mi");
        assert_eq!(go_text("memory", &q("1000")), "1000");
    }

    #[test]
    fn pods_are_a_plain_count() {
        assert_eq!(go_text("pods", &q("6")), "6");
    }

    #[test]
    fn lists_compare_by_value() {
        let a: ResourceList = [("cpu".to_string(), q("6"))].into();
        let b: ResourceList = [("cpu".to_string(), q("6000m"))].into();
        assert_eq!(go_list(&a), go_list(&b));
    }
}
