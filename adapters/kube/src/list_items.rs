//! A list answer (`{"kind":…,"metadata":{…},"items":[{…},…]}`) split into its items as its
//! bytes arrive, so each object is decoded while the rest is still on the wire. On a large
//! cluster the pod list is most of start-up: the API server takes seconds to send it, and a
//! client that waits for the whole body before decoding adds the decoding's time after that.
//!
//! Only the structure is read here (strings, nesting); each item and the list's metadata come out
//! as the bytes the server sent, for a JSON decoder to read.

/// The top-level field whose value is being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Metadata,
    Items,
    Other,
}

/// Incremental splitter of one list answer. Feed it the body's chunks in order with
/// [`ListItems::push`], then call [`ListItems::finish`].
#[derive(Debug)]
pub struct ListItems {
    /// Bytes not yet handed out: from the start of an unfinished item, key or metadata on.
    buf: Vec<u8>,
    /// How much of `buf` has been read.
    scanned: usize,
    /// Open objects and arrays around the reading position.
    depth: u32,
    in_string: bool,
    /// The byte before was a backslash inside a string.
    escaped: bool,
    /// At depth 1, whether the `:` of the current field has been read (the next string is
    /// its value, not a key).
    after_colon: bool,
    /// Start of the string being read at depth 1, when it may be a key.
    key_start: Option<usize>,
    field: Field,
    /// The `items` array is open at depth 2.
    in_items: bool,
    item_start: Option<usize>,
    metadata_start: Option<usize>,
    metadata: Option<Vec<u8>>,
    started: bool,
}

impl Default for ListItems {
    fn default() -> Self {
        Self::new()
    }
}

impl ListItems {
    pub fn new() -> Self {
        ListItems {
            buf: Vec::new(),
            scanned: 0,
            depth: 0,
            in_string: false,
            escaped: false,
            after_colon: false,
            key_start: None,
            field: Field::Other,
            in_items: false,
            item_start: None,
            metadata_start: None,
            metadata: None,
            started: false,
        }
    }

    /// Reads the next chunk of the body, calling `on_item` with each item it completes, in order.
    pub fn push(&mut self, chunk: &[u8], mut on_item: impl FnMut(&[u8])) -> Result<(), String> {
        self.buf.extend_from_slice(chunk);
        let mut i = self.scanned;
        while i < self.buf.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                // Strings are most of the bytes: jump to the next quote or backslash.
                match memchr::memchr2(b'"', b'\\', &self.buf[i..]) {
                    None => {
                        i = self.buf.len();
                        continue;
                    }
                    Some(at) => i += at,
                }
                if self.buf[i] == b'\\' {
                    self.escaped = true;
                } else {
                    self.in_string = false;
                    if let Some(start) = self.key_start.take() {
                        self.field = match &self.buf[start + 1..i] {
                            b"metadata" => Field::Metadata,
                            b"items" => Field::Items,
                            _ => Field::Other,
                        };
                    }
                }
                i += 1;
                continue;
            }
            let b = self.buf[i];
            match b {
                b'"' => {
                    self.in_string = true;
                    if self.depth == 1 && !self.after_colon {
                        self.key_start = Some(i);
                    }
                }
                b'{' | b'[' => {
                    if self.depth == 0 {
                        if b != b'{' || self.started {
                            return Err(format!(
                                "a list answer is one object, found `{}`",
                                b as char
                            ));
                        }
                        self.started = true;
                    }
                    self.depth += 1;
                    match (self.depth, b, self.field) {
                        (2, b'{', Field::Metadata) => self.metadata_start = Some(i),
                        (2, b'[', Field::Items) => self.in_items = true,
                        (3, b'{', _) if self.in_items => self.item_start = Some(i),
                        _ => {}
                    }
                    if self.depth == 1 {
                        self.after_colon = false;
                    }
                }
                b'}' | b']' => {
                    if self.depth == 0 {
                        return Err(format!("unbalanced `{}` in a list answer", b as char));
                    }
                    match self.depth {
                        3 => {
                            if let Some(start) = self.item_start.take() {
                                on_item(&self.buf[start..=i]);
                            }
                        }
                        2 => {
                            if let Some(start) = self.metadata_start.take() {
                                self.metadata = Some(self.buf[start..=i].to_vec());
                            }
                            self.in_items = false;
                        }
                        _ => {}
                    }
                    self.depth -= 1;
                }
                b':' if self.depth == 1 => self.after_colon = true,
                b',' if self.depth == 1 => {
                    self.after_colon = false;
                    self.field = Field::Other;
                }
                _ => {}
            }
            i += 1;
        }
        // Keep only what an unfinished item, metadata or key still needs.
        let keep_from = [self.item_start, self.metadata_start, self.key_start]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(i);
        self.buf.drain(..keep_from);
        self.scanned = i - keep_from;
        for at in [
            &mut self.item_start,
            &mut self.metadata_start,
            &mut self.key_start,
        ]
        .into_iter()
        .flatten()
        {
            *at -= keep_from;
        }
        Ok(())
    }

    /// Ends the answer: the list's `metadata` object as sent (empty when it had none), or an
    /// error when the body stopped before the list closed.
    pub fn finish(self) -> Result<Vec<u8>, String> {
        if !self.started || self.depth != 0 || self.in_string {
            return Err("the list answer ended before the list closed".to_string());
        }
        Ok(self.metadata.unwrap_or_else(|| b"{}".to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"c{[\"x"},"items":[{"metadata":{"name":"a","annotations":{"items":"[{\"}"}}},{"metadata":{"name":"b"},"spec":{"containers":[{"name":"c"}]}}],"extra":{"items":[{"name":"not-an-item"}]}}"#;

    /// Splits `body` fed in chunks of `size` bytes.
    fn split(body: &[u8], size: usize) -> (Vec<String>, String) {
        let mut items = ListItems::new();
        let mut out = Vec::new();
        for chunk in body.chunks(size) {
            items
                .push(chunk, |item| {
                    out.push(String::from_utf8(item.to_vec()).unwrap())
                })
                .unwrap();
        }
        let metadata = String::from_utf8(items.finish().unwrap()).unwrap();
        (out, metadata)
    }

    #[test]
    fn items_and_metadata_come_out_whole_at_every_chunk_boundary() {
        let whole = split(LIST.as_bytes(), LIST.len());
        let value: serde_json::Value = serde_json::from_str(LIST).unwrap();
        let expected: Vec<String> = value["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect();
        let parsed: Vec<String> = whole
            .0
            .iter()
            .map(|s| {
                serde_json::from_str::<serde_json::Value>(s)
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(parsed, expected);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&whole.1).unwrap(),
            value["metadata"]
        );
        for size in 1..LIST.len() {
            assert_eq!(
                split(LIST.as_bytes(), size),
                whole,
                "chunks of {size} bytes"
            );
        }
    }

    #[test]
    fn an_empty_or_null_item_list_gives_no_items() {
        for body in [
            r#"{"metadata":{"resourceVersion":"7"},"items":[]}"#,
            r#"{"metadata":{"resourceVersion":"7"},"items":null}"#,
            r#"{"items":[],"metadata":{"resourceVersion":"7"}}"#,
        ] {
            let (items, metadata) = split(body.as_bytes(), 3);
            assert!(items.is_empty(), "{body}");
            assert_eq!(metadata, r#"{"resourceVersion":"7"}"#, "{body}");
        }
    }

    #[test]
    fn a_body_cut_short_is_an_error_not_a_shorter_list() {
        let cut = &LIST.as_bytes()[..LIST.len() / 2];
        let mut items = ListItems::new();
        items.push(cut, |_| {}).unwrap();
        assert!(items.finish().is_err());
        assert!(ListItems::new().finish().is_err(), "an empty body");
    }

    #[test]
    fn a_body_that_is_not_one_object_is_an_error() {
        assert!(ListItems::new().push(b"[1,2]", |_| {}).is_err());
        assert!(ListItems::new().push(b"{}{}", |_| {}).is_err());
        assert!(ListItems::new().push(b"}", |_| {}).is_err());
    }
}
