//! A rebuild's bulk load of append-only rows: PostgreSQL's binary `COPY` format, and a `COPY`
//! under a savepoint that tells the caller to fall back to its statements when PostgreSQL
//! refuses it.
//!
//! Only a rebuild's copy loads this way ([`super::Load::Bulk`], [`super::ReadModel::apply_bulk`]): its tables are written by the
//! rebuild alone, so a row's id is new unless the log repeats it, and a `COPY` that meets a
//! repeated id (or any row PostgreSQL refuses) is rolled back whole and the fold applies the
//! same rows with its statements (`ON CONFLICT DO NOTHING`, the refusal isolated and parked
//! as on the live projector's path). Either way the table ends with the same rows.

use chrono::{DateTime, Utc};
use sqlx::{Connection, PgConnection};
use uuid::Uuid;

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC).
pub(crate) const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// Rows in PostgreSQL's binary `COPY` format, field by field in the table's column order.
#[derive(Debug)]
pub(crate) struct BinaryRows {
    data: Vec<u8>,
    fields: i16,
    rows: usize,
}

impl BinaryRows {
    /// Rows of `fields` fields each.
    pub(crate) fn new(fields: i16) -> Self {
        let mut data = Vec::with_capacity(1 << 16);
        data.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
        // Flags, then the header extension's length: none.
        data.extend_from_slice(&0i32.to_be_bytes());
        data.extend_from_slice(&0i32.to_be_bytes());
        BinaryRows {
            data,
            fields,
            rows: 0,
        }
    }

    /// Starts a row: `fields` fields must follow.
    pub(crate) fn row(&mut self) -> &mut Self {
        self.rows += 1;
        self.data.extend_from_slice(&self.fields.to_be_bytes());
        self
    }

    fn field(&mut self, bytes: &[u8]) -> &mut Self {
        // Every value this crate writes is far below 2 GiB (a log message is at most MBs).
        let len = i32::try_from(bytes.len()).unwrap_or(i32::MAX);
        self.data.extend_from_slice(&len.to_be_bytes());
        self.data.extend_from_slice(bytes);
        self
    }

    /// A NULL.
    pub(crate) fn null(&mut self) -> &mut Self {
        self.data.extend_from_slice(&(-1i32).to_be_bytes());
        self
    }

    /// A `uuid`.
    pub(crate) fn uuid(&mut self, value: Uuid) -> &mut Self {
        self.field(value.as_bytes())
    }

    /// A `uuid` or NULL.
    pub(crate) fn uuid_or_null(&mut self, value: Option<Uuid>) -> &mut Self {
        match value {
            Some(value) => self.uuid(value),
            None => self.null(),
        }
    }

    /// A `text` (or `json`: its binary form is its text).
    pub(crate) fn text(&mut self, value: &str) -> &mut Self {
        self.field(value.as_bytes())
    }

    /// A `text` or NULL.
    pub(crate) fn text_or_null(&mut self, value: Option<&str>) -> &mut Self {
        match value {
            Some(value) => self.text(value),
            None => self.null(),
        }
    }

    /// A `boolean`.
    pub(crate) fn boolean(&mut self, value: bool) -> &mut Self {
        self.field(&[u8::from(value)])
    }

    /// A `bigint`.
    pub(crate) fn bigint(&mut self, value: i64) -> &mut Self {
        self.field(&value.to_be_bytes())
    }

    /// A `timestamptz`, to the microsecond exactly as sqlx sends one (truncated toward
    /// PostgreSQL's epoch).
    pub(crate) fn timestamptz(&mut self, value: DateTime<Utc>) -> &mut Self {
        let epoch = DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::microseconds(PG_EPOCH_MICROS);
        let micros = (value - epoch).num_microseconds().unwrap_or(i64::MAX);
        self.field(&micros.to_be_bytes())
    }

    /// How many rows.
    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    /// The data to send, with its trailer.
    fn finish(mut self) -> Vec<u8> {
        self.data.extend_from_slice(&(-1i16).to_be_bytes());
        self.data
    }
}

/// `COPY <into> FROM STDIN (FORMAT binary)` of `rows`, under a savepoint: `Ok(true)` when
/// every row is stored, `Ok(false)` when PostgreSQL refused the data (a repeated id, a value
/// it refuses): the savepoint is then rolled back, nothing of it kept, and the caller applies
/// the rows with its statements. A broken connection is an `Err`.
pub(crate) async fn copy_or_refused(
    conn: &mut PgConnection,
    into: &str,
    rows: BinaryRows,
) -> Result<bool, sqlx::Error> {
    if rows.len() == 0 {
        return Ok(true);
    }
    let mut savepoint = conn.begin().await?;
    match copy_in(&mut savepoint, into, rows).await {
        Ok(_) => {
            savepoint.commit().await?;
            Ok(true)
        }
        Err(sqlx::Error::Database(error)) => {
            tracing::debug!(%error, into, "COPY refused; applying the rows with statements");
            savepoint.rollback().await?;
            Ok(false)
        }
        Err(error) => Err(error),
    }
}

/// `COPY <into> FROM STDIN (FORMAT binary)` of `rows`; returns the rows stored. A refusal
/// leaves the caller's transaction aborted: run it under a savepoint.
pub(crate) async fn copy_in(
    conn: &mut PgConnection,
    into: &str,
    rows: BinaryRows,
) -> Result<u64, sqlx::Error> {
    let mut copy = conn
        .copy_in_raw(&format!("COPY {into} FROM STDIN (FORMAT binary)"))
        .await?;
    copy.send(rows.finish()).await?;
    copy.finish().await
}
