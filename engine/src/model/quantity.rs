//! Kubernetes `resource.Quantity` parsing with Kubernetes' rounding.
//!
//! A quantity is kept as an exact rational `mantissa × 10^exp10 × 2^exp2`, so `MilliValue()` and
//! `Value()` can round up exactly as `k8s.io/apimachinery` does (`1.5Gi`, `500m`, `1e3`, `0.1`).

use std::fmt;

/// A parsed quantity. `Display` gives back the text it was parsed from.
#[derive(Clone, PartialEq, Eq)]
pub struct Quantity {
    text: String,
    mantissa: i128,
    exp10: i32,
    exp2: u32,
}

/// Why a quantity string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {0:?}"
)]
pub struct QuantityError(pub String);

impl Quantity {
    /// Parses a Kubernetes quantity string.
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        let err = || QuantityError(s.to_string());
        let t = s.trim();
        if t.is_empty() {
            return Err(err());
        }
        let bytes = t.as_bytes();
        let mut i = 0;
        let mut negative = false;
        if bytes[0] == b'+' || bytes[0] == b'-' {
            negative = bytes[0] == b'-';
            i = 1;
        }
        let mut mantissa: i128 = 0;
        let mut exp10: i32 = 0;
        let mut digits = 0;
        let mut seen_dot = false;
        while i < bytes.len() {
            let c = bytes[i];
            if c.is_ascii_digit() {
                digits += 1;
                if mantissa < 10i128.pow(30) {
                    mantissa = mantissa * 10 + i128::from(c - b'0');
                    if seen_dot {
                        exp10 -= 1;
                    }
                } else if !seen_dot {
                    exp10 += 1;
                }
            } else if c == b'.' && !seen_dot {
                seen_dot = true;
            } else {
                break;
            }
            i += 1;
        }
        if digits == 0 {
            return Err(err());
        }
        let suffix = &t[i..];
        let mut exp2 = 0u32;
        match suffix {
            "" => {}
            "n" => exp10 -= 9,
            "u" => exp10 -= 6,
            "m" => exp10 -= 3,
            "k" => exp10 += 3,
            "M" => exp10 += 6,
            "G" => exp10 += 9,
            "T" => exp10 += 12,
            "P" => exp10 += 15,
            "E" => exp10 += 18,
            "Ki" => exp2 = 10,
            "Mi" => exp2 = 20,
            "Gi" => exp2 = 30,
            "Ti" => exp2 = 40,
            "Pi" => exp2 = 50,
            "Ei" => exp2 = 60,
            _ => {
                let rest = suffix.strip_prefix(['e', 'E']).ok_or_else(err)?;
                exp10 += decimal_exponent(rest).ok_or_else(err)?;
            }
        }
        if negative {
            mantissa = -mantissa;
        }
        Ok(Quantity {
            text: t.to_string(),
            mantissa,
            exp10,
            exp2,
        })
    }

    /// A quantity from a whole number of units (e.g. a `pods` count).
    pub fn from_units(n: i64) -> Quantity {
        Quantity {
            text: n.to_string(),
            mantissa: i128::from(n),
            exp10: 0,
            exp2: 0,
        }
    }

    /// `value × 10^scale`, rounded up (away from zero), saturating at the i64 range.
    fn scaled(&self, scale: i32) -> i64 {
        let e = self.exp10 + scale;
        let mut num = self.mantissa;
        let pow2 = 1i128 << self.exp2.min(62);
        num = num.saturating_mul(pow2);
        if e >= 0 {
            for _ in 0..e {
                num = num.saturating_mul(10);
            }
            clamp(num)
        } else {
            let den = 10i128.checked_pow(e.unsigned_abs()).unwrap_or(i128::MAX);
            let q = num / den;
            let r = num % den;
            let q = if r > 0 {
                q + 1
            } else if r < 0 {
                q - 1
            } else {
                q
            };
            clamp(q)
        }
    }

    /// Milli-units rounded up, as `Quantity.MilliValue()`.
    pub fn milli_value(&self) -> i64 {
        self.scaled(3)
    }

    /// Whole units rounded up, as `Quantity.Value()`.
    pub fn value(&self) -> i64 {
        self.scaled(0)
    }

    /// The value as an `f64`, unrounded, computed as `Quantity.AsApproximateFloat64()` does:
    /// the digits times the nearest `f64` to their power of ten (a custom metric's `523m` is
    /// 0.523).
    pub fn approximate_f64(&self) -> f64 {
        let units = self.mantissa as f64 * 2f64.powi(self.exp2 as i32);
        if self.exp10 == 0 {
            return units;
        }
        let pow10: f64 = format!("1e{}", self.exp10).parse().unwrap_or(f64::NAN);
        units * pow10
    }

    /// True when the quantity is below zero.
    pub fn is_negative(&self) -> bool {
        self.mantissa < 0
    }
}

/// A decimal exponent (`400`, `-3`, `+2`), clamped to +-64: Kubernetes accepts any exponent
/// (`1e400`), and beyond 64 every value saturates (or rounds up to the smallest unit) exactly as
/// it does at 64, so clamping keeps `value` and `milli_value`. `None` when it is no integer.
fn decimal_exponent(text: &str) -> Option<i32> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let negative = text.starts_with('-');
    let magnitude = digits.parse::<u32>().unwrap_or(u32::MAX).min(64) as i32;
    Some(if negative { -magnitude } else { magnitude })
}

fn clamp(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Quantity({})", self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Quantity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let text = match v {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            other => {
                return Err(serde::de::Error::custom(format!(
                    "invalid quantity {other}"
                )));
            }
        };
        Quantity::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for Quantity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn binary_suffix_rounds_to_whole_bytes() {
        assert_eq!(q("1.5Gi").value(), 1_610_612_736);
        assert_eq!(q("1Ki").value(), 1024);
        assert_eq!(q("1G").value(), 1_000_000_000);
    }

    #[test]
    fn milli_values_round_up() {
        assert_eq!(q("500m").milli_value(), 500);
        assert_eq!(q("0.1").milli_value(), 100);
        assert_eq!(q("0.1m").milli_value(), 1);
        assert_eq!(q("2").milli_value(), 2000);
        assert_eq!(q("500m").value(), 1);
    }

    #[test]
    fn decimal_exponent_is_parsed() {
        assert_eq!(q("1e3").value(), 1000);
        assert_eq!(q("1E3").value(), 1000);
        assert_eq!(q("1E").value(), 1_000_000_000_000_000_000);
        assert_eq!(q("25e-1").milli_value(), 2500);
    }

    #[test]
    fn exponents_beyond_64_are_accepted_as_kubernetes_does_and_saturate() {
        assert_eq!(q("1e400").milli_value(), i64::MAX);
        assert_eq!(q("1e400").value(), i64::MAX);
        assert_eq!(q("-1e99999999999").milli_value(), i64::MIN);
        assert_eq!(q("1e-400").milli_value(), 1, "rounded up to one milli-unit");
        assert_eq!(q("0e400").milli_value(), 0);
        assert_eq!(q("1e400").to_string(), "1e400");
    }

    #[test]
    fn approximate_values_keep_fractions_below_a_milli_unit() {
        assert_eq!(q("523m").approximate_f64(), 0.523);
        assert_eq!(q("1500u").approximate_f64(), 0.0015);
        assert_eq!(q("2Ki").approximate_f64(), 2048.0);
        assert_eq!(q("-1e3").approximate_f64(), -1000.0);
    }

    #[test]
    fn malformed_quantities_are_errors() {
        for bad in ["", "abc", "1.2.3", "1Qi", "m", "1e", "--1"] {
            assert!(Quantity::parse(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn huge_values_saturate_instead_of_overflowing() {
        assert_eq!(q("99999999999999999999999999Ei").value(), i64::MAX);
    }
}
