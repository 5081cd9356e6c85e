//! `metadata.managedFields` cut out of an object's JSON as the API server sent it, so the bytes
//! kept for writes (`raw::Raw`) are the object without the field bookkeeping nothing here reads,
//! and no decoded object has to be encoded again to drop it.
//!
//! Only the structure is read (strings, nesting), as in `list_items`. The input has already been
//! decoded once, so it is valid JSON; anything unexpected leaves the bytes as they are.

/// `json` (one object) without its `metadata.managedFields` member.
pub fn without_managed_fields(json: &[u8]) -> Box<[u8]> {
    match managed_fields_span(json) {
        Some((start, end)) => [&json[..start], &json[end..]].concat().into_boxed_slice(),
        None => json.into(),
    }
}

/// The bytes to remove: the `"managedFields"` member of the top-level `metadata` object with
/// one comma that separates it from a neighbour. The API server writes `metadata` before `spec`
/// and `status`, so the scan stops early in the object; what follows is not read.
fn managed_fields_span(json: &[u8]) -> Option<(usize, usize)> {
    let mut c = Cursor { s: json, i: 0 };
    c.member(b"metadata")?;
    let start = c.member(b"managedFields")?;
    c.skip_value()?;
    let end = c.i;
    let after = end + skip_ws(&json[end..]);
    if json.get(after) == Some(&b',') {
        return Some((start, after + 1));
    }
    match json[..start].iter().rposition(|b| !b.is_ascii_whitespace()) {
        Some(before) if json[before] == b',' => Some((before, end)),
        // The only member.
        _ => Some((start, end)),
    }
}

fn skip_ws(s: &[u8]) -> usize {
    s.iter().take_while(|b| b.is_ascii_whitespace()).count()
}

/// A reading position in JSON bytes; every method returns `None` on bytes that are not JSON.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&mut self) -> Option<u8> {
        self.i += skip_ws(&self.s[self.i..]);
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.i += 1)
    }

    /// Reads the object at the reading position up to its member `key`, leaving the position at
    /// that member's value; returns where the key starts (its opening quote). `None` when the
    /// object has no such member.
    fn member(&mut self, key: &[u8]) -> Option<usize> {
        self.expect(b'{')?;
        if self.peek()? == b'}' {
            return None;
        }
        loop {
            self.peek()?;
            let key_start = self.i;
            let (from, to) = self.string()?;
            self.expect(b':')?;
            if &self.s[from..to] == key {
                return Some(key_start);
            }
            self.skip_value()?;
            if self.peek()? != b',' {
                return None;
            }
            self.i += 1;
        }
    }

    /// Reads a string at the reading position; returns where its contents start and end.
    fn string(&mut self) -> Option<(usize, usize)> {
        self.expect(b'"')?;
        let from = self.i;
        loop {
            let at = memchr::memchr2(b'"', b'\\', &self.s[self.i..])?;
            self.i += at;
            if self.s[self.i] == b'\\' {
                self.i += 2;
                continue;
            }
            self.i += 1;
            return Some((from, self.i - 1));
        }
    }

    /// Reads past one value of any kind; brackets must close in order.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut open = Vec::new();
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' => open.push(b'}'),
                        b'[' => open.push(b']'),
                        b @ (b'}' | b']') => open.pop().filter(|&c| c == b).map(drop)?,
                        _ => {}
                    }
                    self.i += 1;
                    if open.is_empty() {
                        return Some(());
                    }
                }
            }
            _ => {
                let len = self.s[self.i..]
                    .iter()
                    .take_while(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                    .count();
                (len > 0).then(|| self.i += len)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn cut(s: &str) -> String {
        String::from_utf8(without_managed_fields(s.as_bytes()).into_vec()).unwrap()
    }

    #[test]
    fn the_member_goes_with_one_comma_wherever_it_stands() {
        let fields =
            r#"[{"manager":"kubelet","fieldsV1":{"f:status":{"k:{\"type\":\"Ready\"}":{}}}}]"#;
        for (object, expected) in [
            (
                format!(
                    r#"{{"metadata":{{"name":"p","managedFields":{fields},"uid":"u"}},"spec":{{}}}}"#
                ),
                r#"{"metadata":{"name":"p","uid":"u"},"spec":{}}"#,
            ),
            (
                format!(r#"{{"metadata":{{"managedFields":{fields},"name":"p"}}}}"#),
                r#"{"metadata":{"name":"p"}}"#,
            ),
            (
                format!(r#"{{"kind":"Pod","metadata":{{"name":"p","managedFields":{fields}}}}}"#),
                r#"{"kind":"Pod","metadata":{"name":"p"}}"#,
            ),
            (
                format!(r#"{{"metadata":{{"managedFields":{fields}}}}}"#),
                r#"{"metadata":{}}"#,
            ),
            (
                format!(
                    "{{ \"metadata\" : {{ \"name\" : \"p\" ,\n \"managedFields\" : {fields} }} }}"
                ),
                "{ \"metadata\" : { \"name\" : \"p\"  } }",
            ),
        ] {
            assert_eq!(cut(&object), expected, "{object}");
            let left: Value = serde_json::from_str(&cut(&object)).unwrap();
            assert_eq!(left["metadata"].get("managedFields"), None);
        }
    }

    #[test]
    fn only_the_top_level_metadata_loses_it() {
        let object = json!({
            "spec": {"template": {"metadata": {"managedFields": [1]}}, "s": "\"managedFields\":"},
            "metadata": {"labels": {"managedFields": "x"}, "managedFields": [{"a": "]}"}]},
        });
        let left: Value = serde_json::from_str(&cut(&object.to_string())).unwrap();
        let mut expected = object.clone();
        expected["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        assert_eq!(left, expected);
    }

    #[test]
    fn objects_without_the_field_or_not_json_are_left_as_they_are() {
        for s in [
            r#"{"metadata":{"name":"p"},"spec":{"x":[true,null,-1.5e3]}}"#,
            r#"{"metadata":null}"#,
            r#"{"metadata":{"managedFields":[}"#,
            r#"{"metadata":{"managedFields""#,
            "[1,2]",
            "",
        ] {
            assert_eq!(cut(s), s);
        }
    }
}
