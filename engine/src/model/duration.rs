//! Go's `time.ParseDuration` (`1h30m`, `.5s`, `300ms`, `-1.5h`), as seconds.

/// A string Go's `time.ParseDuration` would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {0:?}")]
pub struct DurationError(pub String);

/// Parses a Go duration into (possibly fractional, possibly negative) seconds.
pub fn parse_go_duration(s: &str) -> Result<f64, DurationError> {
    let err = || DurationError(s.to_string());
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0.0);
    }
    if rest.is_empty() {
        return Err(err());
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let num = &rest[..num_len];
        if num.is_empty() || num == "." || num.matches('.').count() > 1 {
            return Err(err());
        }
        let value: f64 = num.parse().map_err(|_| err())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(err()),
        };
        rest = &rest[unit_len..];
        total += value * scale;
    }
    Ok(if neg { -total } else { total })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_forms() {
        assert_eq!(parse_go_duration("3m").unwrap(), 180.0);
        assert_eq!(parse_go_duration("1m30s").unwrap(), 90.0);
        assert_eq!(parse_go_duration(".5s").unwrap(), 0.5);
        assert_eq!(parse_go_duration("300ms").unwrap(), 0.3);
        assert_eq!(parse_go_duration("-1.5h").unwrap(), -5400.0);
        assert_eq!(parse_go_duration("0").unwrap(), 0.0);
    }

    #[test]
    fn refuses_what_go_refuses() {
        for bad in ["", "5", "1x", "1.2.3s", "s", "-", "1h 2m"] {
            assert!(parse_go_duration(bad).is_err(), "{bad}");
        }
    }
}
