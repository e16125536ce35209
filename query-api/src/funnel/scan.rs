//! Reading a funnel's events out of PostgreSQL: one `COPY ... TO STDOUT (FORMAT binary)` per
//! slice of the player id space, each on its own connection.
//!
//! The rows come ordered by player, then timeline order (`occurred_at`, `seq`), straight off
//! `events_account_player_time_incl_idx` (an index-only scan with no sort), so a slice is
//! walked one player at a time and memory holds one player's events. COPY takes no bind
//! parameters: the statement is built from typed values only (a `Uuid`, UTC times, and step
//! names that the route has checked against `^[a-z0-9_]{1,64}$`, quoted again here).

use super::FunnelOrder;
use bytes::{Buf, BytesMut};
use chrono::{DateTime, SecondsFormat, Utc};
use std::ops::RangeInclusive;
use uuid::Uuid;

/// Microseconds between the Unix epoch and PostgreSQL's (2000-01-01), in which binary
/// `timestamptz` values count.
const PG_EPOCH_OFFSET_MICROS: i64 = 946_684_800_000_000;

/// A time as PostgreSQL's binary `timestamptz`: microseconds since 2000-01-01 UTC.
pub(crate) fn pg_micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros() - PG_EPOCH_OFFSET_MICROS
}

/// A binary `timestamptz` back as a time (None past what chrono holds).
pub(crate) fn from_pg_micros(micros: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(micros.checked_add(PG_EPOCH_OFFSET_MICROS)?)
}

/// What one slice reads.
#[derive(Debug, Clone)]
pub(crate) struct SliceQuery<'a> {
    pub account: Uuid,
    pub steps: &'a [String],
    pub order: FunnelOrder,
    /// Events at or after this time (the first possible entry).
    pub from: DateTime<Utc>,
    /// Events at or before this time (the last entry's window end).
    pub until: DateTime<Utc>,
    pub players: RangeInclusive<Uuid>,
    /// A breakdown's property key: each first-step row then carries that property's value
    /// as a fourth column (NULL on other rows). Reading it leaves the index-only scan for
    /// heap fetches, which is why a breakdown is opt-in.
    pub breakdown: Option<&'a str>,
}

impl SliceQuery<'_> {
    /// The COPY statement for this slice.
    pub(crate) fn statement(&self) -> String {
        let names = self
            .steps
            .iter()
            .map(|s| quote(s))
            .collect::<Vec<_>>()
            .join(", ");
        // Strict order: any other custom event between two steps breaks the chain.
        let others = if self.order == FunnelOrder::Strict {
            " OR NOT is_internal"
        } else {
            ""
        };
        let property = self.breakdown.map_or(String::new(), |key| {
            let first = self.steps.first().map_or("", String::as_str);
            format!(
                ", CASE WHEN name = {} THEN properties ->> {} END",
                quote(first),
                quote(key)
            )
        });
        let time = |t: DateTime<Utc>| quote(&t.to_rfc3339_opts(SecondsFormat::Micros, true));
        format!(
            "COPY (SELECT player_uuid, name, occurred_at{property} FROM events \
             WHERE account_id = {account} \
               AND player_uuid BETWEEN {first} AND {last} \
               AND occurred_at >= {from} AND occurred_at <= {until} \
               AND (name IN ({names}){others}) \
             ORDER BY player_uuid DESC, occurred_at, seq) TO STDOUT (FORMAT binary)",
            account = quote(&self.account.to_string()),
            first = quote(&self.players.start().to_string()),
            last = quote(&self.players.end().to_string()),
            from = time(self.from),
            until = time(self.until),
        )
    }
}

/// A SQL string literal (standard_conforming_strings, on since PostgreSQL 9.1: only `'` is
/// special).
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// `parts` contiguous slices of the UUID space, together covering all of it.
pub(crate) fn player_slices(parts: usize) -> Vec<RangeInclusive<Uuid>> {
    let parts = parts.max(1) as u128;
    let width = u128::MAX / parts;
    (0..parts)
        .map(|i| {
            let first = if i == 0 { 0 } else { i * width + 1 };
            let last = if i + 1 == parts {
                u128::MAX
            } else {
                (i + 1) * width
            };
            Uuid::from_u128(first)..=Uuid::from_u128(last)
        })
        .collect()
}

/// One row of the COPY: a player, the event's name and when it happened.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Row<'a> {
    pub player: Uuid,
    pub name: &'a [u8],
    /// Microseconds since 2000-01-01 UTC.
    pub at: i64,
    /// The breakdown property's value as text (a fourth column, when asked for; None when
    /// NULL or absent).
    pub property: Option<&'a [u8]>,
}

/// Why the COPY stream could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CopyFormatError {
    #[error("the COPY stream does not start with the binary signature")]
    Signature,
    #[error("a COPY row has {0} fields, expected 3 or 4")]
    FieldCount(i16),
    #[error("a COPY field has an unexpected length")]
    FieldLength,
    #[error("the COPY stream ended in the middle of a row")]
    Truncated,
}

const SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";

/// Parses a binary COPY stream fed in arbitrary chunks.
#[derive(Debug, Default)]
pub(crate) struct CopyReader {
    buffer: BytesMut,
    header_read: bool,
    finished: bool,
}

impl CopyReader {
    /// Adds a chunk and hands every complete row in the buffer to `row`.
    pub(crate) fn feed(
        &mut self,
        chunk: &[u8],
        mut row: impl FnMut(Row<'_>),
    ) -> Result<(), CopyFormatError> {
        self.buffer.extend_from_slice(chunk);
        if !self.header_read {
            // Signature, flags, header extension length, then the extension itself.
            if self.buffer.len() < SIGNATURE.len() + 8 {
                return Ok(());
            }
            if &self.buffer[..SIGNATURE.len()] != SIGNATURE {
                return Err(CopyFormatError::Signature);
            }
            let at = SIGNATURE.len() + 4;
            let extension = be_i32(&self.buffer[at..]).max(0) as usize;
            if self.buffer.len() < at + 4 + extension {
                return Ok(());
            }
            self.buffer.advance(at + 4 + extension);
            self.header_read = true;
        }
        let mut consumed = 0;
        while let Some((used, parsed)) = parse_row(&self.buffer[consumed..])? {
            consumed += used;
            match parsed {
                Some(parsed) => row(parsed),
                None => {
                    self.finished = true;
                    break;
                }
            }
        }
        self.buffer.advance(consumed);
        Ok(())
    }

    /// Checks the stream ended with its trailer.
    pub(crate) fn finish(&self) -> Result<(), CopyFormatError> {
        if self.finished {
            Ok(())
        } else {
            Err(CopyFormatError::Truncated)
        }
    }
}

/// One row at the start of `data`: `None` when incomplete, `Some((bytes used, None))` for the
/// trailer.
fn parse_row(data: &[u8]) -> Result<Option<(usize, Option<Row<'_>>)>, CopyFormatError> {
    if data.len() < 2 {
        return Ok(None);
    }
    let fields = i16::from_be_bytes([data[0], data[1]]);
    if fields == -1 {
        return Ok(Some((2, None)));
    }
    if !(3..=4).contains(&fields) {
        return Err(CopyFormatError::FieldCount(fields));
    }
    let mut at = 2;
    // Some(Some(value)), Some(None) for a NULL (only the optional fourth field may be one),
    // None while the row is incomplete.
    let mut field = |expected: Option<usize>,
                     nullable: bool|
     -> Result<Option<Option<&[u8]>>, CopyFormatError> {
        let Some(length) = data.get(at..at + 4).map(be_i32) else {
            return Ok(None);
        };
        if length == -1 && nullable {
            at += 4;
            return Ok(Some(None));
        }
        let length = usize::try_from(length).map_err(|_| CopyFormatError::FieldLength)?;
        if expected.is_some_and(|e| e != length) {
            return Err(CopyFormatError::FieldLength);
        }
        let Some(value) = data.get(at + 4..at + 4 + length) else {
            return Ok(None);
        };
        at += 4 + length;
        Ok(Some(Some(value)))
    };
    let Some(player) = field(Some(16), false)? else {
        return Ok(None);
    };
    let Some(name) = field(None, false)? else {
        return Ok(None);
    };
    let Some(time) = field(Some(8), false)? else {
        return Ok(None);
    };
    let property = if fields == 4 {
        let Some(property) = field(None, true)? else {
            return Ok(None);
        };
        property
    } else {
        None
    };
    let (player, name, time) = (required(player)?, required(name)?, required(time)?);
    let player = Uuid::from_slice(player).map_err(|_| CopyFormatError::FieldLength)?;
    let time = i64::from_be_bytes(time.try_into().map_err(|_| CopyFormatError::FieldLength)?);
    Ok(Some((
        at,
        Some(Row {
            player,
            name,
            at: time,
            property,
        }),
    )))
}

/// A field that may not be NULL (the parser only lets the property be one).
fn required(value: Option<&[u8]>) -> Result<&[u8], CopyFormatError> {
    value.ok_or(CopyFormatError::FieldLength)
}

fn be_i32(bytes: &[u8]) -> i32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[..4]);
    i32::from_be_bytes(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_the_uuid_space_without_overlap() {
        for parts in 1..=7 {
            let slices = player_slices(parts);
            assert_eq!(slices.len(), parts);
            assert_eq!(slices[0].start().as_u128(), 0);
            assert_eq!(slices[parts - 1].end().as_u128(), u128::MAX);
            for pair in slices.windows(2) {
                assert_eq!(pair[0].end().as_u128() + 1, pair[1].start().as_u128());
            }
        }
    }

    fn encode(rows: &[(Uuid, &str, i64)]) -> Vec<u8> {
        let mut out = SIGNATURE.to_vec();
        out.extend_from_slice(&0i32.to_be_bytes());
        out.extend_from_slice(&0i32.to_be_bytes());
        for (player, name, at) in rows {
            out.extend_from_slice(&3i16.to_be_bytes());
            out.extend_from_slice(&16i32.to_be_bytes());
            out.extend_from_slice(player.as_bytes());
            out.extend_from_slice(&(name.len() as i32).to_be_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&8i32.to_be_bytes());
            out.extend_from_slice(&at.to_be_bytes());
        }
        out.extend_from_slice(&(-1i16).to_be_bytes());
        out
    }

    #[test]
    fn rows_split_across_chunks_are_read_whole() {
        let (p, q) = (Uuid::from_u128(7), Uuid::from_u128(u128::MAX - 1));
        let rows = [
            (p, "quest_started", 5),
            (p, "b", -3),
            (q, "session_join", 1 << 40),
        ];
        let stream = encode(&rows);
        for chunk in [1, 2, 5, 13, stream.len()] {
            let mut reader = CopyReader::default();
            let mut seen = Vec::new();
            for piece in stream.chunks(chunk) {
                reader
                    .feed(piece, |row| {
                        seen.push((
                            row.player,
                            String::from_utf8_lossy(row.name).into_owned(),
                            row.at,
                        ))
                    })
                    .expect("well formed");
            }
            reader.finish().expect("trailer read");
            let expected: Vec<_> = rows
                .iter()
                .map(|(p, n, t)| (*p, n.to_string(), *t))
                .collect();
            assert_eq!(seen, expected, "chunks of {chunk}");
        }
    }

    #[test]
    fn a_fourth_column_carries_the_property_or_null() {
        let mut out = SIGNATURE.to_vec();
        out.extend_from_slice(&[0; 8]);
        for property in [Some("eu"), None] {
            out.extend_from_slice(&4i16.to_be_bytes());
            out.extend_from_slice(&16i32.to_be_bytes());
            out.extend_from_slice(Uuid::nil().as_bytes());
            out.extend_from_slice(&1i32.to_be_bytes());
            out.extend_from_slice(b"a");
            out.extend_from_slice(&8i32.to_be_bytes());
            out.extend_from_slice(&7i64.to_be_bytes());
            match property {
                Some(text) => {
                    out.extend_from_slice(&(text.len() as i32).to_be_bytes());
                    out.extend_from_slice(text.as_bytes());
                }
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        out.extend_from_slice(&(-1i16).to_be_bytes());
        for chunk in [1, 3, out.len()] {
            let mut reader = CopyReader::default();
            let mut seen = Vec::new();
            for piece in out.chunks(chunk) {
                reader
                    .feed(piece, |row| seen.push(row.property.map(<[u8]>::to_vec)))
                    .expect("well formed");
            }
            reader.finish().expect("trailer read");
            assert_eq!(seen, [Some(b"eu".to_vec()), None], "chunks of {chunk}");
        }
        // Only the property may be NULL.
        let mut null_name = SIGNATURE.to_vec();
        null_name.extend_from_slice(&[0; 8]);
        null_name.extend_from_slice(&3i16.to_be_bytes());
        null_name.extend_from_slice(&16i32.to_be_bytes());
        null_name.extend_from_slice(Uuid::nil().as_bytes());
        null_name.extend_from_slice(&(-1i32).to_be_bytes());
        assert!(CopyReader::default().feed(&null_name, |_| {}).is_err());
    }

    #[test]
    fn malformed_streams_are_errors() {
        let mut reader = CopyReader::default();
        assert!(
            reader
                .feed(b"NOTCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0", |_| {})
                .is_err()
        );
        let stream = encode(&[(Uuid::nil(), "a", 1)]);
        let mut reader = CopyReader::default();
        reader
            .feed(&stream[..stream.len() - 2], |_| {})
            .expect("fine so far");
        assert!(reader.finish().is_err(), "no trailer");
    }

    #[test]
    fn times_convert_to_the_postgres_epoch() {
        let epoch = DateTime::parse_from_rfc3339("2000-01-01T00:00:00Z").expect("time");
        assert_eq!(pg_micros(epoch.with_timezone(&Utc)), 0);
        assert_eq!(from_pg_micros(0), Some(epoch.with_timezone(&Utc)));
    }

    #[test]
    fn the_statement_quotes_every_value() {
        let steps = vec!["quest_started".to_owned(), "it's".to_owned()];
        let query = SliceQuery {
            account: Uuid::nil(),
            steps: &steps,
            order: FunnelOrder::Strict,
            from: Utc::now(),
            until: Utc::now(),
            players: Uuid::nil()..=Uuid::max(),
            breakdown: None,
        };
        let sql = query.statement();
        assert!(
            sql.contains("SELECT player_uuid, name, occurred_at FROM"),
            "{sql}"
        );
        let sql = SliceQuery {
            breakdown: Some("it's"),
            ..query
        }
        .statement();
        assert!(
            sql.contains("CASE WHEN name = 'quest_started' THEN properties ->> 'it''s' END FROM"),
            "{sql}"
        );
        assert!(
            sql.contains("name IN ('quest_started', 'it''s') OR NOT is_internal"),
            "{sql}"
        );
        assert!(
            sql.contains("account_id = '00000000-0000-0000-0000-000000000000'"),
            "{sql}"
        );
    }
}
