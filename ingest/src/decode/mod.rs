//! Turning a JSON body into records: one object or a batch, each record decoded on its own so
//! one bad record does not sink its batch.

mod one_pass;

use crate::error::IngestError;
use serde::Deserialize;
use serde_json::value::RawValue;
use shared::records::{MAX_PROPERTIES_DEPTH, PluginRecord};
use shared::validation::FieldError;
use uuid::Uuid;

/// Records in one batch at most (contract §1).
pub const MAX_BATCH_RECORDS: usize = 1000;

/// The records of a body, still as JSON text.
#[derive(Debug)]
pub struct RawRecords<'a> {
    /// Each record's JSON.
    pub records: Vec<&'a RawValue>,
    /// True when the body was an array.
    pub is_batch: bool,
}

/// Splits a body into its records (400 for non-JSON, 413 past the batch limit).
pub fn split_body(body: &[u8]) -> Result<RawRecords<'_>, IngestError> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let malformed = |detail: String| IngestError::Malformed {
        detail,
        errors: Vec::new(),
    };
    let too_deep = |e: &serde_json::Error| e.to_string().contains("recursion limit");
    match first {
        Some(b'[') => {
            let records: Vec<&RawValue> = serde_json::from_slice(body).map_err(|e| {
                if too_deep(&e) {
                    deep_body()
                } else {
                    malformed(format!("the body is not valid JSON: {}", clean_message(&e)))
                }
            })?;
            check_batch_len(records.len())?;
            Ok(RawRecords {
                records,
                is_batch: true,
            })
        }
        Some(b'{') => {
            let record: &RawValue = serde_json::from_slice(body).map_err(|e| {
                if too_deep(&e) {
                    deep_body()
                } else {
                    malformed(format!("the body is not valid JSON: {}", clean_message(&e)))
                }
            })?;
            Ok(RawRecords {
                records: vec![record],
                is_batch: false,
            })
        }
        _ => Err(malformed(
            "the body must be a JSON object (one record) or an array of records".into(),
        )),
    }
}

/// 413 past the batch limit, 422 for an empty batch.
fn check_batch_len(len: usize) -> Result<(), IngestError> {
    if len > MAX_BATCH_RECORDS {
        return Err(IngestError::TooLarge(format!(
            "a batch holds at most {MAX_BATCH_RECORDS} records (got {len})"
        )));
    }
    if len == 0 {
        return Err(IngestError::Rejected {
            code: "validation_failed".into(),
            detail: "a batch holds 1 to 1000 records; this one is empty".into(),
            rejected: Vec::new(),
        });
    }
    Ok(())
}

/// The records of a body, each decoded and validated on its own.
#[derive(Debug)]
pub struct DecodedBody<T> {
    /// Each record, or why it was refused, in body order.
    pub records: Vec<Result<Decoded<T>, RecordError>>,
    /// True when the body was an array.
    pub is_batch: bool,
}

/// Decodes and validates every record of a body: in one pass when the body is entirely well
/// formed, else record by record, so one bad record does not sink its batch and each error
/// names its field.
pub fn decode_body<T: PluginRecord>(
    body: &[u8],
    now: chrono::DateTime<chrono::Utc>,
) -> Result<DecodedBody<T>, IngestError> {
    if let Some((records, is_batch)) = one_pass::decode_all::<T>(body) {
        if is_batch {
            check_batch_len(records.len())?;
        }
        let records = records
            .into_iter()
            .map(|r| {
                r.record.validate(now).map_err(RecordError::Rules)?;
                Ok(Decoded {
                    id: r.id,
                    record: r.record,
                })
            })
            .collect();
        return Ok(DecodedBody { records, is_batch });
    }
    let raw = split_body(body)?;
    Ok(DecodedBody {
        records: raw
            .records
            .iter()
            .map(|record| decode_record(record, now))
            .collect(),
        is_batch: raw.is_batch,
    })
}

fn deep_body() -> IngestError {
    IngestError::Rejected {
        code: "too_deep".into(),
        detail: format!("properties must be nested at most {MAX_PROPERTIES_DEPTH} levels deep"),
        rejected: Vec::new(),
    }
}

/// Why one record was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordError {
    /// Not the expected JSON shape: a field of the wrong type (400 for a single record).
    Shape(Vec<FieldError>),
    /// Well-formed but breaks a rule (422).
    Rules(Vec<FieldError>),
}

impl RecordError {
    /// The record's problem code: its first error's, or the generic one.
    pub fn code(&self) -> String {
        match self {
            RecordError::Shape(_) => "malformed_json".into(),
            RecordError::Rules(errors) => match errors.first().map(|e| e.code.as_str()) {
                Some(code @ ("reserved_prefix" | "invalid_event_name" | "too_deep")) => code.into(),
                _ => "validation_failed".into(),
            },
        }
    }

    /// The field errors.
    pub fn errors(&self) -> &[FieldError] {
        match self {
            RecordError::Shape(e) | RecordError::Rules(e) => e,
        }
    }
}

/// A record that decoded, with the client's id if it sent one.
#[derive(Debug)]
pub struct Decoded<T> {
    /// The client-chosen id.
    pub id: Option<Uuid>,
    /// The record.
    pub record: T,
}

#[derive(Deserialize)]
struct IdProbe {
    #[serde(default)]
    id: Option<Uuid>,
}

/// Decodes and validates one record.
pub fn decode_record<T: PluginRecord>(
    raw: &RawValue,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Decoded<T>, RecordError> {
    let record: T = deserialize(raw)?;
    let id = deserialize::<IdProbe>(raw)?.id;
    record.validate(now).map_err(RecordError::Rules)?;
    Ok(Decoded { id, record })
}

fn deserialize<T: serde::de::DeserializeOwned>(raw: &RawValue) -> Result<T, RecordError> {
    // Most records are fine: decode them without tracking the path, and pay for the path
    // (which names the bad field in the error) only when decoding fails.
    if let Ok(value) = serde_json::from_str(raw.get()) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    serde_path_to_error::deserialize(&mut de).map_err(|error| {
        let path = error.path().to_string();
        let message = clean_message(error.inner());
        classify(if path == "." { String::new() } else { path }, &message)
    })
}

/// Maps serde's message to a field error: wrong JSON types are shape errors, the rest rules.
fn classify(path: String, message: &str) -> RecordError {
    let field_error = |field: String, code: &str, message: String| FieldError {
        field,
        code: code.into(),
        message,
    };
    if let Some(rest) = message.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or(rest);
        let field = if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        };
        return RecordError::Rules(vec![field_error(field, "required", "is required".into())]);
    }
    // serde_json says "expected value" when an enum field holds a non-string.
    if message.starts_with("invalid type:") || message == "expected value" {
        let detail = match message.strip_prefix("invalid type: ") {
            Some(rest) => format!("wrong type: got {rest}"),
            None => "wrong type: expected a string".to_owned(),
        };
        return RecordError::Shape(vec![field_error(path, "wrong_type", detail)]);
    }
    let (code, detail) = if message.contains("UUID parsing failed") {
        ("invalid_uuid", "not a UUID".to_owned())
    } else if CHRONO_MESSAGES.iter().any(|m| message.contains(m)) {
        (
            "invalid_timestamp",
            "not an RFC 3339 date-time with Z or an offset, e.g. 2026-11-22T10:00:00Z".to_owned(),
        )
    } else if message.starts_with("unknown variant") {
        (
            "invalid_value",
            message.replace("unknown variant", "unknown value"),
        )
    } else {
        ("invalid_value", message.to_owned())
    };
    RecordError::Rules(vec![field_error(path, code, detail)])
}

const CHRONO_MESSAGES: [&str; 6] = [
    "input is out of range",
    "no possible date and time",
    "input is not enough",
    "input contains invalid characters",
    "premature end of input",
    "trailing input",
];

/// serde_json's message without its " at line L column C" suffix.
fn clean_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::records::{ChatEntry, CustomEvent};

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).expect("valid json")
    }

    const CHAT: &str = r#""server_id":"7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10","player_uuid":"069a79f4-44e9-4726-a5be-fca90e38aaf5","entry_type":"chat""#;

    #[test]
    fn wrong_types_are_shape_errors_and_bad_values_are_rule_errors() {
        let now = chrono::Utc::now();
        let err = decode_record::<ChatEntry>(&raw(&format!(r#"{{{CHAT},"message":5}}"#)), now)
            .unwrap_err();
        assert!(
            matches!(&err, RecordError::Shape(e) if e[0].field == "message"),
            "{err:?}"
        );

        let bad_uuid = r#"{"server_id":"nope","player_uuid":"069a79f4-44e9-4726-a5be-fca90e38aaf5","entry_type":"chat","message":"hi"}"#;
        let err = decode_record::<ChatEntry>(&raw(bad_uuid), now).unwrap_err();
        assert_eq!(
            err,
            RecordError::Rules(vec![FieldError {
                field: "server_id".into(),
                code: "invalid_uuid".into(),
                message: "not a UUID".into()
            }])
        );

        let err = decode_record::<ChatEntry>(&raw(&format!(r#"{{{CHAT}}}"#)), now).unwrap_err();
        assert_eq!(err.errors()[0].field, "message");
        assert_eq!(err.errors()[0].code, "required");

        let err = decode_record::<ChatEntry>(
            &raw(&format!(
                r#"{{{CHAT},"message":"hi","sent_at":"yesterday"}}"#
            )),
            now,
        )
        .unwrap_err();
        assert_eq!(err.errors()[0].code, "invalid_timestamp");

        let err = decode_record::<ChatEntry>(
            &raw(&format!(r#"{{{CHAT},"message":"hi","id":"x"}}"#)),
            now,
        )
        .unwrap_err();
        assert_eq!(err.errors()[0].field, "id");
    }

    #[test]
    fn reserved_prefix_is_the_records_code() {
        let now = chrono::Utc::now();
        let body = r#"{"player_uuid":"069a79f4-44e9-4726-a5be-fca90e38aaf5","name":"chat_spam"}"#;
        let err = decode_record::<CustomEvent>(&raw(body), now).unwrap_err();
        assert_eq!(err.code(), "reserved_prefix");
    }

    #[test]
    fn bodies_split_into_records() {
        assert!(!split_body(b" {\"a\":1}").expect("object").is_batch);
        assert_eq!(split_body(b"[{},{}]").expect("array").records.len(), 2);
        assert!(matches!(
            split_body(b"\"x\""),
            Err(IngestError::Malformed { .. })
        ));
        assert!(matches!(
            split_body(b"{oops"),
            Err(IngestError::Malformed { .. })
        ));
        assert!(matches!(
            split_body(b"[]"),
            Err(IngestError::Rejected { .. })
        ));
        let many = format!("[{}{{}}]", "{},".repeat(MAX_BATCH_RECORDS));
        assert!(matches!(
            split_body(many.as_bytes()),
            Err(IngestError::TooLarge(_))
        ));
    }

    #[test]
    fn deeply_nested_properties_are_refused_as_too_deep() {
        let deep = format!(
            r#"{{"player_uuid":"069a79f4-44e9-4726-a5be-fca90e38aaf5","name":"x","properties":{{"p":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let body = split_body(deep.as_bytes()).expect("raw values are not depth-limited");
        let err = decode_record::<CustomEvent>(body.records[0], chrono::Utc::now()).unwrap_err();
        assert_eq!(err.code(), "too_deep");
    }
}
