//! A PodGroup name as the key of its pods' group (`PodsByGroup`): names up to `INLINE` bytes
//! are kept in the key itself.
//!
//! A snapshot looks up every job's group, 50k names, and comparing each with a key kept on the
//! heap was a cache miss per job: most of the lookup. Inline, the comparison reads the slot the
//! lookup has already loaded.

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};

/// Longest name kept inline: Volcano's own PodGroup names fit, `podgroup-<owner UID>` (45
/// bytes) and a job's `<job>-<job UID>` for names up to 25 characters; a key is 64 bytes.
const INLINE: usize = 62;

/// The bytes of a PodGroup name. Lookups go by `&[u8]` (`Borrow`), hashed as the bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum GroupKey {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl GroupKey {
    pub fn new(name: &str) -> GroupKey {
        let name = name.as_bytes();
        if name.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..name.len()].copy_from_slice(name);
            GroupKey::Inline {
                len: name.len() as u8,
                bytes,
            }
        } else {
            GroupKey::Heap(name.into())
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            GroupKey::Inline { len, bytes } => &bytes[..usize::from(*len)],
            GroupKey::Heap(bytes) => bytes,
        }
    }

    /// The name (always text: a key is made from a `&str`).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }
}

impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl Borrow<[u8]> for GroupKey {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn short_and_long_names_are_found_by_their_bytes() {
        let long = "g".repeat(INLINE + 1);
        let names = ["", "job-000123", &long];
        let map: HashMap<GroupKey, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (GroupKey::new(n), i))
            .collect();
        assert!(matches!(
            GroupKey::new("job-000123"),
            GroupKey::Inline { .. }
        ));
        assert!(matches!(GroupKey::new(&long), GroupKey::Heap(_)));
        for (i, n) in names.iter().enumerate() {
            assert_eq!(map.get(n.as_bytes()), Some(&i));
            assert_eq!(GroupKey::new(n).as_str(), *n);
        }
        assert_eq!(map.get("job-00012".as_bytes()), None);
        assert_eq!(map.get(&long.as_bytes()[..INLINE]), None);
    }
}
