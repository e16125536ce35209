//! The fast path for a well-formed body: every record and its client `id` decoded in one pass
//! over the JSON, instead of three (split into records, decode each, probe each for its id).
//!
//! It gives up on the first problem of any kind (a bad record, a duplicate `id`, an unusual
//! shape); the caller then decodes the same body record by record, which names every bad
//! field. So this path only has to be right for bodies that are entirely fine, and every
//! error a client sees comes from the record-by-record path.

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, Visitor};
use std::fmt;
use uuid::Uuid;

/// One record with the client's `id`, if it sent one.
pub(super) struct WithClientId<T> {
    pub(super) id: Option<Uuid>,
    pub(super) record: T,
}

/// Decodes a whole body (an object, or an array of objects) in one pass; `None` when the body
/// is anything but entirely well formed. Returns the records and whether it was an array.
pub(super) fn decode_all<T: DeserializeOwned>(body: &[u8]) -> Option<(Vec<WithClientId<T>>, bool)> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace())?;
    let mut de = serde_json::Deserializer::from_slice(body);
    let decoded = match first {
        b'[' => (Vec::<WithClientId<T>>::deserialize(&mut de).ok()?, true),
        b'{' => (vec![WithClientId::<T>::deserialize(&mut de).ok()?], false),
        _ => return None,
    };
    de.end().ok()?;
    Some(decoded)
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for WithClientId<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut id = IdSlot::default();
        let record = T::deserialize(CaptureId {
            inner: deserializer,
            id: &mut id,
        })?;
        Ok(WithClientId {
            id: id.value,
            record,
        })
    }
}

#[derive(Default)]
struct IdSlot {
    value: Option<Uuid>,
    seen: bool,
}

/// A deserializer that hands `T` every field of the object but `id`, which it keeps.
struct CaptureId<'a, D> {
    inner: D,
    id: &'a mut IdSlot,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for CaptureId<'_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(CaptureVisitor {
            inner: visitor,
            id: self.id,
        })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_map(CaptureVisitor {
            inner: visitor,
            id: self.id,
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = CaptureVisitor {
            inner: visitor,
            id: self.id,
        };
        self.inner.deserialize_struct(name, fields, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct enum identifier
        ignored_any
    }
}

/// Passes the object's entries through [`CaptureMap`]; any other shape is refused (the
/// record-by-record path then decides what it is).
struct CaptureVisitor<'a, V> {
    inner: V,
    id: &'a mut IdSlot,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for CaptureVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(formatter)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(CaptureMap {
            inner: map,
            id: self.id,
        })
    }
}

struct CaptureMap<'a, A> {
    inner: A,
    id: &'a mut IdSlot,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CaptureMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let mut seed = seed;
        loop {
            match self.inner.next_key_seed(KeySeed(seed))? {
                None => return Ok(None),
                Some(Key::Other(key)) => return Ok(Some(key)),
                Some(Key::Id(unused)) => {
                    if self.id.seen {
                        return Err(de::Error::duplicate_field("id"));
                    }
                    self.id.value = self.inner.next_value()?;
                    self.id.seen = true;
                    seed = unused;
                }
            }
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A key: `id` (with the record's key seed, unused, handed back), or any other key as the
/// record's own seed read it.
enum Key<K, V> {
    Id(K),
    Other(V),
}

struct KeySeed<K>(K);

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<K> {
    type Value = Key<K, K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(KeyVisitor(self.0))
    }
}

struct KeyVisitor<K>(K);

impl<'de, K: DeserializeSeed<'de>> Visitor<'de> for KeyVisitor<K> {
    type Value = Key<K, K::Value>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a field name")
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Self::Value, E> {
        if key == "id" {
            return Ok(Key::Id(self.0));
        }
        let key = de::value::BorrowedStrDeserializer::<E>::new(key);
        self.0.deserialize(key).map(Key::Other)
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        if key == "id" {
            return Ok(Key::Id(self.0));
        }
        let key = de::value::StrDeserializer::<E>::new(key);
        self.0.deserialize(key).map(Key::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{DecodedBody, RecordError, decode_body, decode_record, split_body};
    use proptest::prelude::*;
    use serde::Serialize;
    use shared::records::{ChatEntry, CustomEvent, PluginRecord};

    const SERVER: &str = r#""server_id":"7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10""#;
    const PLAYER: &str = r#""player_uuid":"069a79f4-44e9-4726-a5be-fca90e38aaf5""#;

    /// Chat records, fine and broken in the ways that matter to the one-pass decoder.
    fn chat_records() -> Vec<String> {
        let body = format!(r#"{SERVER},{PLAYER},"entry_type":"chat","message":"gg""#);
        let id = r#""id":"0190b6a2-7c3e-7d4a-9f1e-2b3c4d5e6f70""#;
        vec![
            format!("{{{body}}}"),
            format!("{{{id},{body}}}"),
            format!("{{{body},{id}}}"),
            format!(r#"{{{SERVER},{id},{PLAYER},"entry_type":"chat","message":"g\"g"}}"#),
            format!(r#"{{{body},"id":null}}"#),
            format!(r#"{{{body},"i\u0064":"0190b6a2-7c3e-7d4a-9f1e-2b3c4d5e6f71"}}"#),
            format!(r#"{{{body},{id},"id":"0190b6a2-7c3e-7d4a-9f1e-2b3c4d5e6f72"}}"#),
            format!(r#"{{{body},"id":"not-a-uuid"}}"#),
            format!(r#"{{{body},"id":5}}"#),
            format!(r#"{{{body},"channel":"trade","unknown":{{"id":1}}}}"#),
            format!(r#"{{{SERVER},{PLAYER},"entry_type":"chat","message":5}}"#),
            format!(r#"{{{SERVER},{PLAYER},"entry_type":"shout","message":"x"}}"#),
            format!(r#"{{{SERVER},{PLAYER},"entry_type":"chat"}}"#),
            format!(r#"{{{SERVER},{PLAYER},"entry_type":"chat","message":""}}"#),
            "[1,2]".to_owned(),
            "\"text\"".to_owned(),
            "null".to_owned(),
        ]
    }

    fn custom_events() -> Vec<String> {
        vec![
            format!(
                r#"{{{PLAYER},"name":"crate_opened","properties":{{"id":"x","tier":"gold","n":1.10}}}}"#
            ),
            format!(
                r#"{{"id":"0190b6a2-7c3e-7d4a-9f1e-2b3c4d5e6f73",{PLAYER},"name":"quest_started"}}"#
            ),
            format!(r#"{{{PLAYER},"name":"session_join"}}"#),
            format!(r#"{{{PLAYER},"name":"Bad Name"}}"#),
        ]
    }

    /// The outcome as comparable text: each record's id and JSON, or its error.
    fn outcome<T: PluginRecord + Serialize>(
        result: Result<DecodedBody<T>, crate::error::IngestError>,
    ) -> String {
        match result {
            Err(error) => format!("request error: {error:?}"),
            Ok(body) => {
                let records: Vec<String> = body
                    .records
                    .into_iter()
                    .map(|r| match r {
                        Ok(d) => format!(
                            "{:?} {}",
                            d.id,
                            serde_json::to_string(&d.record).unwrap_or_default()
                        ),
                        Err(RecordError::Shape(e)) => format!("shape {e:?}"),
                        Err(RecordError::Rules(e)) => format!("rules {e:?}"),
                    })
                    .collect();
                format!("batch={} {records:?}", body.is_batch)
            }
        }
    }

    /// What the record-by-record path alone makes of `body`.
    fn record_by_record<T: PluginRecord + Serialize>(body: &[u8]) -> String {
        let now = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        outcome::<T>(split_body(body).map(|raw| DecodedBody {
            records: raw.records.iter().map(|r| decode_record(r, now)).collect(),
            is_batch: raw.is_batch,
        }))
    }

    fn check<T: PluginRecord + Serialize>(body: &str) {
        let now = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        assert_eq!(
            outcome::<T>(decode_body::<T>(body.as_bytes(), now)),
            record_by_record::<T>(body.as_bytes()),
            "{body}"
        );
    }

    #[test]
    fn well_formed_bodies_take_the_one_pass_path_with_their_ids() {
        let records = chat_records();
        let body = format!("[{},{}]", records[1], records[3]);
        let decoded = super::decode_all::<ChatEntry>(body.as_bytes()).expect("one pass");
        assert!(decoded.1);
        assert!(decoded.0.iter().all(|r| r.id.is_some()));
        assert!(
            super::decode_all::<ChatEntry>(records[6].as_bytes()).is_none(),
            "duplicate id"
        );
        assert!(
            super::decode_all::<ChatEntry>(records[7].as_bytes()).is_none(),
            "bad id"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn one_pass_and_record_by_record_agree(picks in prop::collection::vec(0usize..64, 0..6), batch in any::<bool>()) {
            let chat = chat_records();
            let events = custom_events();
            let pick = |all: &[String]| -> Vec<String> { picks.iter().map(|&i| all[i % all.len()].clone()).collect() };
            for (records, is_chat) in [(pick(&chat), true), (pick(&events), false)] {
                let body = if batch || records.is_empty() {
                    format!("[{}]", records.join(","))
                } else {
                    records[0].clone()
                };
                if is_chat { check::<ChatEntry>(&body) } else { check::<CustomEvent>(&body) }
            }
        }
    }
}
