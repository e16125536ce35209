use super::{IpHasher, PluginRecord, RecordKind};
use crate::envelope::{Logged, RecordBatch};
use crate::event_name::EventName;
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;
use uuid::Uuid;

/// Largest `properties` object, serialized (contract §1).
pub const MAX_PROPERTIES_BYTES: usize = 64 * 1024;
/// Deepest nesting of `properties` (contract §1); the object itself is level 1.
pub const MAX_PROPERTIES_DEPTH: usize = 64;

/// A custom event (`POST /api/v1/plugin/events`).
///
/// `properties` is kept as the exact JSON text the client sent, so it is returned as given,
/// numbers included.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CustomEvent {
    /// The player the event is tied to.
    pub player_uuid: Uuid,
    /// `^[a-z0-9_]{1,64}$`, without a reserved prefix (`session_`, `punish_`, `chat_`, `rank_`,
    /// `block_`: those are the service's own).
    #[schema(pattern = "^(?!session_|punish_|chat_|rank_|block_)[a-z0-9_]{1,64}$")]
    pub name: String,
    /// Any JSON object, stored as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub properties: Option<Box<RawValue>>,
    /// When it happened; the time of receipt when omitted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::date_time::deserialize"
    )]
    pub occurred_at: Option<DateTime<Utc>>,
}

impl PartialEq for CustomEvent {
    fn eq(&self, other: &Self) -> bool {
        self.player_uuid == other.player_uuid
            && self.name == other.name
            && self.properties.as_ref().map(|p| p.get())
                == other.properties.as_ref().map(|p| p.get())
            && self.occurred_at == other.occurred_at
    }
}

/// Nesting depth of a JSON text: `{}` is 1, `{"a":{}}` is 2; brackets inside strings don't count.
pub fn json_depth(json: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for byte in json.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

impl PluginRecord for CustomEvent {
    const KIND: RecordKind = RecordKind::Custom;

    fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        if let Err(error) = EventName::parse(&self.name) {
            errors.push("name", error.code(), error.to_string());
        }
        if let Some(properties) = &self.properties {
            let text = properties.get();
            if text != "null" && !text.starts_with('{') {
                errors.push("properties", "validation_failed", "must be a JSON object");
            } else if text.len() > MAX_PROPERTIES_BYTES {
                errors.push(
                    "properties",
                    "too_large",
                    format!(
                        "must be at most {MAX_PROPERTIES_BYTES} bytes serialized (got {})",
                        text.len()
                    ),
                );
            } else if json_depth(text) > MAX_PROPERTIES_DEPTH {
                errors.push(
                    "properties",
                    "too_deep",
                    format!("must be nested at most {MAX_PROPERTIES_DEPTH} levels deep"),
                );
            } else if let Some(path) = super::properties::unstorable_string(text, "properties") {
                errors.push(
                    &path,
                    "invalid_characters",
                    "JSON strings and keys must not contain \\u0000 or an unpaired surrogate \
                     (\\ud800-\\udfff), which cannot be stored",
                );
            }
        }
        errors.record_time("occurred_at", self.occurred_at, now);
        errors.into_result()
    }

    fn normalize(&mut self, received_at: DateTime<Utc>, _: &IpHasher) {
        self.occurred_at.get_or_insert(received_at);
        if self.properties.as_ref().is_some_and(|p| p.get() == "null") {
            self.properties = None;
        }
    }

    fn server_id(&self) -> Option<Uuid> {
        None
    }

    fn subject_name(&self) -> Option<&str> {
        Some(&self.name)
    }

    fn into_batch(records: Vec<Logged<Self>>) -> RecordBatch {
        RecordBatch::Custom(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn event(json: &str) -> CustomEvent {
        serde_json::from_str(json).expect("well-formed custom event")
    }

    fn codes(event: &CustomEvent) -> Vec<String> {
        event
            .validate(Utc::now())
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.code)
            .collect()
    }

    const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";

    #[test]
    fn a_plain_event_is_valid() {
        let e = event(&format!(
            r#"{{"player_uuid":"{PLAYER}","name":"crate_opened"}}"#
        ));
        assert!(codes(&e).is_empty());
    }

    #[test]
    fn reserved_prefix_and_bad_names_are_refused_with_their_codes() {
        let e = event(&format!(
            r#"{{"player_uuid":"{PLAYER}","name":"chat_spam"}}"#
        ));
        assert_eq!(codes(&e), ["reserved_prefix"]);
        let e = event(&format!(
            r#"{{"player_uuid":"{PLAYER}","name":"Crate-Opened"}}"#
        ));
        assert_eq!(codes(&e), ["invalid_event_name"]);
    }

    #[test]
    fn properties_are_kept_verbatim_numbers_included() {
        let props = r#"{"big": 12345678901234567890123, "f": 1.50, "e": 1E+2, "nested": {"a": [1, null, true]}}"#;
        let mut e = event(&format!(
            r#"{{"player_uuid":"{PLAYER}","name":"x","properties":{props}}}"#
        ));
        e.normalize(Utc::now(), &IpHasher::new(b"k"));
        let logged = serde_json::to_string(&e).expect("serializes");
        let back: CustomEvent = serde_json::from_str(&logged).expect("parses");
        assert_eq!(back.properties.expect("kept").get(), props);
    }

    #[test]
    fn properties_must_be_an_object() {
        for props in ["[1,2]", "\"text\"", "3"] {
            let e = event(&format!(
                r#"{{"player_uuid":"{PLAYER}","name":"x","properties":{props}}}"#
            ));
            assert_eq!(codes(&e), ["validation_failed"], "{props}");
        }
        let e = event(&format!(
            r#"{{"player_uuid":"{PLAYER}","name":"x","properties":null}}"#
        ));
        assert!(codes(&e).is_empty());
    }

    #[test]
    fn depth_bound_is_64_levels() {
        let nest = |levels: usize| "{\"a\":".repeat(levels - 1) + "{}" + &"}".repeat(levels - 1);
        let ok = event(&format!(
            r#"{{"player_uuid":"{PLAYER}","name":"x","properties":{}}}"#,
            nest(64)
        ));
        assert!(codes(&ok).is_empty());
        let deep = event(&format!(
            r#"{{"player_uuid":"{PLAYER}","name":"x","properties":{}}}"#,
            nest(65)
        ));
        assert_eq!(codes(&deep), ["too_deep"]);
    }

    #[test]
    fn size_bound_is_64_kib() {
        let filler = "x".repeat(MAX_PROPERTIES_BYTES);
        let e = event(&format!(
            r#"{{"player_uuid":"{PLAYER}","name":"x","properties":{{"f":"{filler}"}}}}"#
        ));
        assert_eq!(codes(&e), ["too_large"]);
    }

    #[test]
    fn depth_ignores_brackets_in_strings() {
        assert_eq!(json_depth(r#"{"a":"{{{[[["}"#), 1);
        assert_eq!(json_depth(r#"{"a":"\"{"}"#), 1);
        assert_eq!(json_depth(r#"{"a":[{"b":[]}]}"#), 4);
    }

    #[test]
    fn occurred_at_defaults_to_receipt_and_may_not_be_far_future() {
        let received = Utc::now();
        let mut e = event(&format!(r#"{{"player_uuid":"{PLAYER}","name":"x"}}"#));
        e.normalize(received, &IpHasher::new(b"k"));
        assert_eq!(e.occurred_at, Some(received));

        let soon = (received + Duration::minutes(9)).to_rfc3339();
        let later = (received + Duration::minutes(11)).to_rfc3339();
        assert!(
            codes(&event(&format!(
                r#"{{"player_uuid":"{PLAYER}","name":"x","occurred_at":"{soon}"}}"#
            )))
            .is_empty()
        );
        assert_eq!(
            codes(&event(&format!(
                r#"{{"player_uuid":"{PLAYER}","name":"x","occurred_at":"{later}"}}"#
            ))),
            ["in_future"]
        );
    }

    #[test]
    fn offsets_are_converted_to_utc() {
        let e = event(&format!(
            r#"{{"player_uuid":"{PLAYER}","name":"x","occurred_at":"2026-01-01T12:00:00+02:00"}}"#
        ));
        assert_eq!(
            e.occurred_at.expect("set").to_rfc3339(),
            "2026-01-01T10:00:00+00:00"
        );
    }
}
