//! Merging encoded log messages without decoding them.
//!
//! Each request encodes its own message on its own task (so encoding spreads over the cores);
//! merging is then a copy of the records arrays into one envelope. That relies on the layout
//! `LogMessage::encode` writes (compact JSON, fields in declaration order):
//!
//! `{"v":1,"account_id":"…","received_at":"…","batch":{"kind":"…","records":[ … ]}}`
//!
//! Nothing before the records array can contain `"records":[` (a version, a UUID, a timestamp
//! and a kind), so its first occurrence marks where the records start. A message where it is
//! not found is published alone, never spliced; the tests below hold the layout to
//! `LogMessage::encode`.

/// What precedes the records array's content.
const RECORDS_OPEN: &[u8] = br#""records":["#;
/// What follows it: the array, the batch and the message close.
const CLOSE: &[u8] = b"]}}";
/// The envelope's fields before the records fit well inside this many bytes.
const HEAD_LIMIT: usize = 256;

/// Where the records of an encoded message start, if it has the expected layout and at least
/// one record.
pub(super) fn records_start(payload: &[u8]) -> Option<usize> {
    let head = &payload[..payload.len().min(HEAD_LIMIT)];
    let start = head
        .windows(RECORDS_OPEN.len())
        .position(|window| window == RECORDS_OPEN)?
        + RECORDS_OPEN.len();
    let end = payload.len().checked_sub(CLOSE.len())?;
    (payload.ends_with(CLOSE) && start < end).then_some(start)
}

/// One encoded message and where its records start ([`records_start`]).
#[derive(Clone, Copy)]
pub(super) struct Encoded<'a> {
    pub(super) payload: &'a [u8],
    pub(super) records_start: usize,
}

impl Encoded<'_> {
    fn records(&self) -> &[u8] {
        &self.payload[self.records_start..self.payload.len() - CLOSE.len()]
    }
}

/// One message holding every record of `parts` in order, under the envelope fields (version,
/// account, time of receipt, kind) of `header`.
pub(super) fn splice(header: Encoded<'_>, parts: &[Encoded<'_>]) -> Vec<u8> {
    let size = header.records_start
        + parts.iter().map(|p| p.records().len() + 1).sum::<usize>()
        + CLOSE.len();
    let mut merged = Vec::with_capacity(size);
    merged.extend_from_slice(&header.payload[..header.records_start]);
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            merged.push(b',');
        }
        merged.extend_from_slice(part.records());
    }
    merged.extend_from_slice(CLOSE);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, Utc};
    use shared::envelope::{LogMessage, Logged, RecordBatch};
    use shared::records::CustomEvent;
    use uuid::Uuid;

    fn event(name: &str, n: u32) -> Logged<CustomEvent> {
        let json = format!(
            r#"{{"player_uuid":"069a79f4-44e9-4726-a5be-fca90e38aaf5","name":"{name}","properties":{{"n":{n},"s":"\"records\":[ ]}}"}}}}"#
        );
        Logged {
            id: Uuid::now_v7(),
            record: serde_json::from_str(&json).expect("event"),
        }
    }

    #[test]
    fn a_splice_is_the_encoding_of_the_concatenated_records_under_the_first_header() {
        let account = Uuid::now_v7();
        let earliest = Utc::now();
        let first = vec![event("quest", 1), event("quest", 2)];
        let second = vec![event("quest", 3)];
        let third = vec![event("quest", 4), event("quest", 5), event("quest", 6)];
        let messages = [
            LogMessage::new(account, earliest, RecordBatch::Custom(first.clone())),
            LogMessage::new(
                account,
                earliest + Duration::milliseconds(3),
                RecordBatch::Custom(second.clone()),
            ),
            LogMessage::new(
                account,
                earliest + Duration::milliseconds(5),
                RecordBatch::Custom(third.clone()),
            ),
        ];
        let payloads: Vec<Vec<u8>> = messages.iter().map(LogMessage::encode).collect();
        let encoded: Vec<Encoded<'_>> = payloads
            .iter()
            .map(|payload| Encoded {
                payload,
                records_start: records_start(payload).expect("the expected layout"),
            })
            .collect();

        let merged = splice(encoded[0], &encoded);

        let all = [first, second, third].concat();
        let expected = LogMessage::new(account, earliest, RecordBatch::Custom(all));
        assert_eq!(merged, expected.encode());
        assert_eq!(LogMessage::decode(&merged).expect("decodes"), expected);
    }

    #[test]
    fn a_message_without_records_or_with_another_layout_is_not_spliceable() {
        let empty = LogMessage::new(Uuid::now_v7(), Utc::now(), RecordBatch::Custom(Vec::new()));
        assert_eq!(records_start(&empty.encode()), None);
        assert_eq!(records_start(br#"{"a":{"records":[1]}}"#), Some(17));
        assert_eq!(records_start(b"{}"), None);
        assert_eq!(records_start(br#"{"a":{"records":[1]}} "#), None);
    }
}
