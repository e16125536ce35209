//! Sealing and opening single top-level properties of a custom event, keeping the rest of the
//! object as the client sent it (each value's text verbatim, the order of keys kept).

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

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

/// An object written entry by entry as JSON text, checked once when finished.
pub(crate) struct ObjectText {
    text: String,
}

impl ObjectText {
    pub(crate) fn with_capacity(capacity: usize) -> ObjectText {
        let mut text = String::with_capacity(capacity);
        text.push('{');
        ObjectText { text }
    }

    fn key(&mut self, key: &str) {
        if self.text.len() > 1 {
            self.text.push(',');
        }
        // A `String` always serializes.
        self.text
            .push_str(&serde_json::to_string(key).unwrap_or_default());
        self.text.push(':');
    }

    /// Adds `key` with `value`'s text as it is.
    pub(crate) fn push(&mut self, key: &str, value: &RawValue) {
        self.key(key);
        self.text.push_str(value.get());
    }

    /// Adds `key` with a sealed value (`"\0w1." + base64url`: only its NUL needs escaping).
    pub(crate) fn push_sealed(&mut self, key: &str, sealed: &str) {
        self.key(key);
        match sealed.strip_prefix('\0') {
            Some(rest) if !rest.contains(['"', '\\']) && !rest.contains(char::is_control) => {
                self.text.push_str("\"\\u0000");
                self.text.push_str(rest);
                self.text.push('"');
            }
            _ => self
                .text
                .push_str(&serde_json::to_string(sealed).unwrap_or_default()),
        }
    }

    /// The object.
    pub(crate) fn finish(mut self) -> Box<RawValue> {
        self.text.push('}');
        RawValue::from_string(self.text)
            .unwrap_or_else(|_| unreachable!("keys serialized, values verbatim: an object"))
    }
}

/// A JSON string value holding `text` (NUL and all, escaped).
#[cfg(test)]
pub(crate) fn string_value(text: &str) -> Box<RawValue> {
    let json = serde_json::to_string(text).unwrap_or_default();
    RawValue::from_string(json).unwrap_or_else(|_| unreachable!("a serialized string is JSON"))
}

/// The text of a JSON string value; `None` for any other value.
pub(crate) fn string_of(value: &RawValue) -> Option<String> {
    if !value.get().starts_with('"') {
        return None;
    }
    serde_json::from_str(value.get()).ok()
}

/// `null`.
pub(crate) fn null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).unwrap_or_else(|_| unreachable!("null is JSON"))
}
