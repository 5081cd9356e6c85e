//! `quantity`: a Kubernetes quantity as manifests spell it, and every value read from it.

use tephra_engine::model::Quantity;

/// Parses the bytes (when UTF-8) as a quantity and reads it every way the scheduler does.
pub fn quantity(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(q) = Quantity::parse(text) else {
        return;
    };
    let units = q.value();
    let _ = (q.milli_value(), q.approximate_f64(), q.is_negative());
    let _ = Quantity::from_units(units).milli_value();
    let _ = q.to_string();
}
