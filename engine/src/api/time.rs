//! RFC 3339 timestamps (`metav1.Time`) as seconds since the Unix epoch.

use std::fmt;

/// A Kubernetes timestamp, second precision as `metav1.Time` serializes it.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub i64);

/// A timestamp that is not RFC 3339.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid RFC 3339 timestamp {0:?}")]
pub struct TimeError(pub String);

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

impl Time {
    /// Parses `2006-01-02T15:04:05Z` or with a `±hh:mm` offset and optional fraction.
    pub fn parse(s: &str) -> Result<Time, TimeError> {
        let err = || TimeError(s.to_string());
        let b = s.as_bytes();
        if b.len() < 20
            || b[4] != b'-'
            || b[7] != b'-'
            || !(b[10] == b'T' || b[10] == b't' || b[10] == b' ')
        {
            return Err(err());
        }
        let num = |r: std::ops::Range<usize>| -> Result<i64, TimeError> {
            s.get(r).and_then(|x| x.parse::<i64>().ok()).ok_or_else(err)
        };
        let (y, mo, d, h, mi, se) = (
            num(0..4)?,
            num(5..7)?,
            num(8..10)?,
            num(11..13)?,
            num(14..16)?,
            num(17..19)?,
        );
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
            return Err(err());
        }
        let mut i = 19;
        if b.get(i) == Some(&b'.') {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        let offset = match b.get(i) {
            Some(b'Z') | Some(b'z') if i + 1 == b.len() => 0,
            Some(&c) if (c == b'+' || c == b'-') && i + 6 == b.len() && b[i + 3] == b':' => {
                let o = num(i + 1..i + 3)? * 3600 + num(i + 4..i + 6)? * 60;
                if c == b'+' { o } else { -o }
            }
            _ => return Err(err()),
        };
        Ok(Time(
            days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset,
        ))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.0.div_euclid(86_400);
        let secs = self.0.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl<'de> serde::Deserialize<'de> for Time {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Time::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for Time {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_utc_and_applies_offsets() {
        let t = Time::parse("2026-11-30T11:51:40Z").unwrap();
        assert_eq!(t.to_string(), "2026-11-30T11:51:40Z");
        assert_eq!(Time::parse("1970-01-01T01:00:00+01:00").unwrap().0, 0);
        assert_eq!(Time::parse("1970-01-01T00:00:01.5Z").unwrap().0, 1);
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-01-01T00:00:00",
        ] {
            assert!(Time::parse(bad).is_err(), "{bad}");
        }
    }
}
