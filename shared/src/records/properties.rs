//! Strings inside a custom event's `properties` that PostgreSQL cannot hold as text.
//!
//! `properties` is kept as the exact JSON text the client sent, so its escapes are never
//! decoded on the way in. JSON allows `\u0000` and unpaired surrogates (`\ud800`), but
//! PostgreSQL cannot turn either into text: `jsonb` refuses them, and so does every `->>` or
//! cast on a `json` value. Both are refused, in keys as in values, with the path of the first.

/// The first string or key in `json` (a well-formed JSON text) that escapes a NUL or an unpaired
/// surrogate, as a path under `root` (`properties.a.b`, `properties.list[2]`); `None` if none.
pub(super) fn unstorable_string(json: &str, root: &str) -> Option<String> {
    // Only an escape can spell either character (JSON has no raw control characters in
    // strings, and the text is valid UTF-8), so most properties are cleared by one search.
    if !json.contains("\\u") {
        return None;
    }
    let bytes = json.as_bytes();
    let mut frames: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => frames.push(Frame::Object {
                key: None,
                expecting_key: true,
            }),
            b'[' => frames.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                frames.pop();
            }
            b',' => match frames.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { expecting_key, .. }) => *expecting_key = true,
                None => {}
            },
            b':' => {
                if let Some(Frame::Object { expecting_key, .. }) = frames.last_mut() {
                    *expecting_key = false;
                }
            }
            b'"' => {
                let end = string_end(bytes, i + 1);
                let raw = &json[i + 1..end];
                let bad = !storable(raw);
                match frames.last_mut() {
                    Some(Frame::Object { key, expecting_key }) if *expecting_key => {
                        *key = Some(raw.to_owned());
                        if bad {
                            return Some(path(root, &frames));
                        }
                    }
                    _ if bad => return Some(path(root, &frames)),
                    _ => {}
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where the scan is inside the JSON text.
enum Frame {
    /// Inside an object: the last key seen (raw, as sent), and whether a key comes next.
    Object {
        key: Option<String>,
        expecting_key: bool,
    },
    /// Inside an array, at this element.
    Array { index: usize },
}

fn path(root: &str, frames: &[Frame]) -> String {
    let mut path = root.to_owned();
    for frame in frames {
        match frame {
            Frame::Object { key: Some(key), .. } => {
                path.push('.');
                path.push_str(key);
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// The index of the closing quote of the string whose content starts at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// False when the raw string content escapes a NUL or an unpaired surrogate.
fn storable(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let unit = |at: usize| -> Option<u32> {
        let hex = raw.get(at + 2..at + 6)?;
        (bytes.get(at..at + 2) == Some(&b"\\u"[..]))
            .then(|| u32::from_str_radix(hex, 16).ok())
            .flatten()
    };
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(code) = unit(i) else {
            i += 2; // a two-character escape such as \n or \\
            continue;
        };
        match code {
            0 => return false,
            0xD800..=0xDBFF => match unit(i + 6) {
                Some(0xDC00..=0xDFFF) => i += 12,
                _ => return false,
            },
            0xDC00..=0xDFFF => return false,
            _ => i += 6,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::unstorable_string;

    fn check(json: &str) -> Option<String> {
        // Every input is valid JSON, as the scan assumes.
        serde_json::from_str::<&serde_json::value::RawValue>(json).expect("valid JSON");
        unstorable_string(json, "properties")
    }

    #[test]
    fn nul_is_found_in_values_and_keys_with_its_path() {
        assert_eq!(
            check(r#"{"a":"x\u0000y"}"#).as_deref(),
            Some("properties.a")
        );
        assert_eq!(
            check(r#"{"a":{"b":"\u0000"}}"#).as_deref(),
            Some("properties.a.b")
        );
        assert_eq!(
            check(r#"{"a":[1,"ok",{"c":"\u0000"}]}"#).as_deref(),
            Some("properties.a[2].c")
        );
        assert_eq!(
            check(r#"{"a\u0000b":1}"#).as_deref(),
            Some(r"properties.a\u0000b")
        );
        assert_eq!(
            check(r#"{"a":{"\u0000":{}}}"#).as_deref(),
            Some(r"properties.a.\u0000")
        );
        assert_eq!(
            check(r#"{"x":1,"y":["\u0000"]}"#).as_deref(),
            Some("properties.y[0]")
        );
    }

    #[test]
    fn unpaired_surrogates_are_found_and_pairs_pass() {
        assert_eq!(check(r#"{"a":"\ud800"}"#).as_deref(), Some("properties.a"));
        assert_eq!(check(r#"{"a":"\udc00x"}"#).as_deref(), Some("properties.a"));
        assert_eq!(
            check(r#"{"a":"\ud800\u0041"}"#).as_deref(),
            Some("properties.a")
        );
        assert_eq!(
            check(r#"{"\uDBFF":1}"#).as_deref(),
            Some(r"properties.\uDBFF")
        );
        assert_eq!(check(r#"{"a":"\ud83d\ude00 \uD83D\uDE00"}"#), None);
    }

    #[test]
    fn look_alikes_are_not_refused() {
        for json in [
            r#"{"a":"\\u0000"}"#,
            r#"{"a":"\u0001\u00e9\u202e\n\t\"\\"}"#,
            r#"{"a":"u0000","b":"\\\u0041"}"#,
            r#"{"k":"{[\"]}","\u0030":[{"n":1e308}]}"#,
            r#"{}"#,
        ] {
            assert_eq!(check(json), None, "{json}");
        }
    }
}
