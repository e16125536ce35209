//! Sealing and opening single top-level properties of a custom event, keeping the rest of the
//! object as the client sent it (each value's text verbatim, the order of keys kept).

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;
use std::ops::Range;

/// The top-level entries of a JSON object, in order, each value's text verbatim.
pub(crate) type Entries = Vec<(String, Box<RawValue>)>;

/// Splits an object into its entries; `None` for anything but an object.
pub(crate) fn split(object: &RawValue) -> Option<Entries> {
    struct Ordered;
    impl<'de> Visitor<'de> for Ordered {
        type Value = Entries;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
            let mut entries = Vec::new();
            while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                entries.push(entry);
            }
            Ok(entries)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(object.get());
    deserializer.deserialize_map(Ordered).ok()
}

/// The object made of `entries`, each value's text as it is.
#[cfg(test)]
pub(crate) fn join(entries: &Entries) -> Box<RawValue> {
    let mut text = String::from("{");
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        // A `String` always serializes.
        text.push_str(&serde_json::to_string(key).unwrap_or_default());
        text.push(':');
        text.push_str(value.get());
    }
    text.push('}');
    RawValue::from_string(text).unwrap_or_else(|_| unreachable!("joined entries are an object"))
}

/// True when an object (the JSON text of one) has at least one entry.
pub(crate) fn has_entries(object: &RawValue) -> bool {
    object
        .get()
        .trim_start()
        .strip_prefix('{')
        .is_some_and(|rest| !rest.trim_start().starts_with('}'))
}

/// Each top-level entry of an object: its key, and where its value lies in the object's text.
pub(crate) type Spans = Vec<(String, Range<usize>)>;

/// The entries of the object `text` with each value's place in it; `None` for anything but an
/// object. Sealing and opening replace values at these places and copy the rest of the text
/// as it is, so an opened object is the very text the client sent (spacing included).
pub(crate) fn spans(text: &str) -> Option<Spans> {
    struct Located {
        base: usize,
    }
    impl<'de> Visitor<'de> for Located {
        type Value = Spans;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Spans, A::Error> {
            let mut spans = Vec::new();
            // A borrowed raw value is a slice of the text: its address gives its place.
            while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                let start = (value.get().as_ptr() as usize).wrapping_sub(self.base);
                spans.push((key, start..start.wrapping_add(value.get().len())));
            }
            Ok(spans)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let located = Located {
        base: text.as_ptr() as usize,
    };
    let spans = deserializer.deserialize_map(located).ok()?;
    // Always so for a borrowed value; checked, as the places are about to be sliced.
    spans
        .iter()
        .all(|(_, span)| span.start <= span.end && text.get(span.clone()).is_some())
        .then_some(spans)
}

/// Appends a sealed value as a JSON string (`"\0w1." + base64url`: only its NUL needs
/// escaping).
pub(crate) fn push_sealed(out: &mut String, sealed: &str) {
    match sealed.strip_prefix('\0') {
        Some(rest) if !rest.contains(['"', '\\']) && !rest.contains(char::is_control) => {
            out.push_str("\"\\u0000");
            out.push_str(rest);
            out.push('"');
        }
        _ => out.push_str(&serde_json::to_string(sealed).unwrap_or_default()),
    }
}

/// The object made of `text` with the values at `replaced`'s places (in order, apart) replaced.
pub(crate) fn splice(text: &str, replaced: &[(Range<usize>, String)]) -> Box<RawValue> {
    let mut out = String::with_capacity(
        text.len() + replaced.iter().map(|(_, value)| value.len()).sum::<usize>(),
    );
    let mut at = 0;
    for (span, value) in replaced {
        out.push_str(&text[at..span.start]);
        out.push_str(value);
        at = span.end;
    }
    out.push_str(&text[at..]);
    RawValue::from_string(out)
        .unwrap_or_else(|_| unreachable!("JSON values put in place of JSON values"))
}

/// A JSON string value holding `text` (NUL and all, escaped).
#[cfg(test)]
pub(crate) fn string_value(text: &str) -> Box<RawValue> {
    let json = serde_json::to_string(text).unwrap_or_default();
    RawValue::from_string(json).unwrap_or_else(|_| unreachable!("a serialized string is JSON"))
}

/// The text of a JSON string value; `None` for any other value.
pub(crate) fn string_of(value: &RawValue) -> Option<String> {
    string_in(value.get())
}

/// The text of the JSON string value `json`; `None` for any other value.
pub(crate) fn string_in(json: &str) -> Option<String> {
    if !json.starts_with('"') {
        return None;
    }
    serde_json::from_str(json).ok()
}
