//! "Accepted => projectable": any record that passes ingest's own checks
//! (`PluginRecord::validate`, then `normalize`, exactly as ingest runs them) is applied by the
//! projector's real statements on a real PostgreSQL: its message is neither parked nor stuck,
//! and its rows are there (custom `properties` readable as `jsonb`). Records that fail validation are skipped; enough of each must occur
//! for the property to mean something (checked at the end).
//!
//! Removing any storage rule of `shared::validation` (e.g. the NUL check in `text`) makes this
//! fail: the projector then meets a record PostgreSQL refuses and stops at it.

mod hostile;

use crate::harness::Harness;
use chrono::{DateTime, Utc};
use hostile::RawRecord;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use shared::envelope::Logged;
use shared::records::{
    AccountLink, AnticheatFlag, ChatEntry, CustomEvent, Heartbeat, IpHasher, Note, PluginRecord,
    Punishment, RankChange, RecordKind, Session,
};
use sqlx::PgPool;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;
use uuid::Uuid;

/// Cases per run: each publishes up to 8 log messages and waits for the projector.
const CASES: u32 = 96;
/// How long one case may take to be applied before the projector counts as stuck.
const APPLY_DEADLINE: Duration = Duration::from_secs(20);
const ACCOUNTS: [Uuid; 2] = [Uuid::from_u128(0xA11CE), Uuid::from_u128(0xB0B)];

/// What the generated records did, over the whole run.
#[derive(Debug, Default)]
struct Tally {
    records: usize,
    accepted: usize,
    /// Accepted records with 4-byte characters or an RTL override: hostile, yet storable.
    accepted_hostile: usize,
    /// Records holding an escaped NUL somewhere (all must be refused).
    with_nul: usize,
    /// Staff notes generated, and accepted.
    notes: usize,
    notes_accepted: usize,
}

/// The accepted records of one case, as the log messages ingest would append.
#[derive(Default)]
struct Accepted {
    heartbeats: Vec<Logged<Heartbeat>>,
    chat: Vec<Logged<ChatEntry>>,
    punishments: Vec<Logged<Punishment>>,
    flags: Vec<Logged<AnticheatFlag>>,
    sessions: Vec<Logged<Session>>,
    ranks: Vec<Logged<RankChange>>,
    links: Vec<Logged<AccountLink>>,
    /// Staff notes (validated as query-api and the projector do; no normalizing).
    notes: Vec<Logged<Note>>,
    /// Notes that break the rules, logged anyway: skipped by the projector, never stored.
    refused_notes: Vec<Logged<Note>>,
    /// By event name: ingest appends one log message per subject.
    custom: BTreeMap<String, Vec<Logged<CustomEvent>>>,
    /// The JSON of each accepted record, to report a failure.
    texts: Vec<String>,
}

/// Decodes, validates and normalizes `json` as ingest does; `None` when ingest would refuse it.
fn accept<T: PluginRecord>(json: &str, now: DateTime<Utc>) -> Option<Logged<T>> {
    let mut record: T = serde_json::from_str(json).ok()?;
    record.validate(now).ok()?;
    record.normalize(now, &IpHasher::new(b"property"));
    Some(Logged {
        id: Uuid::now_v7(),
        record,
    })
}

impl Accepted {
    /// Takes the record if ingest would; true when it did.
    fn offer(&mut self, (kind, json): &RawRecord, now: DateTime<Utc>) -> bool {
        fn keep<T: PluginRecord>(
            into: &mut Vec<Logged<T>>,
            json: &str,
            now: DateTime<Utc>,
        ) -> bool {
            accept(json, now).map(|logged| into.push(logged)).is_some()
        }
        let accepted = match kind {
            RecordKind::Heartbeat => keep(&mut self.heartbeats, json, now),
            RecordKind::Chat => keep(&mut self.chat, json, now),
            RecordKind::Punishment => keep(&mut self.punishments, json, now),
            RecordKind::AnticheatFlag => keep(&mut self.flags, json, now),
            RecordKind::Session => keep(&mut self.sessions, json, now),
            RecordKind::RankChange => keep(&mut self.ranks, json, now),
            RecordKind::AccountLink => keep(&mut self.links, json, now),
            RecordKind::Custom => match accept::<CustomEvent>(json, now) {
                Some(event) => {
                    let name = event.record.name.clone();
                    self.custom.entry(name).or_default().push(event);
                    true
                }
                None => false,
            },
            // A note that breaks the rules is logged all the same (as a forged or buggy
            // writer might): the projector must skip it without stopping.
            RecordKind::Note => match serde_json::from_str::<Note>(json) {
                Ok(record) => {
                    let valid = record.validate(now).is_ok();
                    let logged = Logged {
                        id: Uuid::now_v7(),
                        record,
                    };
                    if valid {
                        self.notes.push(logged);
                    } else {
                        self.refused_notes.push(logged);
                    }
                    valid
                }
                Err(_) => false,
            },
            // The generator makes no erasures (they hold no text, only UUIDs and a time), and
            // no dashboard actions or their acknowledgements.
            RecordKind::Erasure
            | RecordKind::Action
            | RecordKind::ActionAck
            | RecordKind::Appeal => false,
        };
        if accepted {
            self.texts.push(json.chars().take(300).collect());
        }
        accepted
    }

    /// Publishes one log message per kind (and per custom event name); returns the last
    /// stream sequence, or `None` when nothing was accepted.
    async fn publish(self, h: &Harness, account: Uuid, at: DateTime<Utc>) -> anyhow::Result<u64> {
        let mut last = 0;
        macro_rules! publish {
            ($records:expr) => {
                if !$records.is_empty() {
                    last = h.publish(account, at, $records).await?;
                }
            };
        }
        publish!(self.heartbeats);
        publish!(self.chat);
        publish!(self.punishments);
        publish!(self.flags);
        publish!(self.sessions);
        publish!(self.ranks);
        publish!(self.links);
        for (_, events) in self.custom {
            publish!(events);
        }
        let mut notes = self.refused_notes;
        notes.extend(self.notes);
        if !notes.is_empty() {
            last = h.publish_notes(account, at, notes).await?;
        }
        Ok(last)
    }

    /// Ids the read models must hold afterwards: `(table, ids)`.
    fn expected_rows(&self) -> Vec<(&'static str, Vec<Uuid>)> {
        fn ids<T>(records: &[Logged<T>]) -> Vec<Uuid> {
            records.iter().map(|r| r.id).collect()
        }
        let mut timeline = ids(&self.chat);
        timeline.extend(ids(&self.punishments));
        timeline.extend(ids(&self.sessions));
        timeline.extend(ids(&self.ranks));
        timeline.extend(self.custom.values().flat_map(|events| ids(events)));
        vec![
            ("events", timeline),
            ("chat_messages", ids(&self.chat)),
            ("anticheat_flags", ids(&self.flags)),
            ("notes", ids(&self.notes)),
        ]
    }
}

fn is_hostile(json: &str) -> bool {
    json.chars().any(|c| c >= '\u{10000}' || c == '\u{202e}')
}

/// Parked messages: `(stream sequence, reason)`.
async fn parked(pool: &PgPool) -> anyhow::Result<Vec<(i64, String)>> {
    Ok(
        sqlx::query_as("SELECT stream_sequence, reason FROM parked_messages ORDER BY 1")
            .fetch_all(pool)
            .await?,
    )
}

/// Every stored time column, and whether it is a record time (up to now + 10 minutes) or an
/// expiry (up to 9999-12-31T23:59:59Z); all start at 2000-01-01 (`shared::validation`).
const TIME_COLUMNS: [(&str, &str, bool); 24] = [
    ("events", "occurred_at", false),
    ("chat_messages", "sent_at", false),
    ("anticheat_flags", "flagged_at", false),
    ("punishments", "issued_at", false),
    ("punishments", "expires_at", true),
    ("punishments", "revoked_at", false),
    ("punishment_revokes", "revoked_at", false),
    ("players", "username_at", false),
    ("players", "first_seen", false),
    ("players", "last_seen", false),
    ("players", "rank_changed_at", false),
    ("players", "rank_expires_at", true),
    ("players", "linked_at", false),
    ("sessions", "joined_at", false),
    ("sessions", "left_at", false),
    ("servers", "first_seen", false),
    ("servers", "last_heartbeat_at", false),
    ("server_samples", "at", false),
    ("server_minutes", "minute", false),
    ("server_five_minutes", "bucket", false),
    ("server_hours", "hour", false),
    ("network_five_minutes", "bucket", false),
    ("session_server_heartbeats", "last_heartbeat_at", false),
    ("notes", "written_at", false),
];

/// The time columns holding a value outside the documented window, as `table.column`.
async fn times_out_of_window(pool: &PgPool) -> anyhow::Result<Vec<String>> {
    let checks: Vec<String> = TIME_COLUMNS
        .iter()
        .map(|(table, column, expiry)| {
            let upper = if *expiry {
                "'9999-12-31T23:59:59.999999Z'::timestamptz"
            } else {
                "now() + interval '11 minutes'"
            };
            // Constants of this file, so formatting them in is safe.
            format!(
                "SELECT '{table}.{column}' FROM {table}
                 WHERE {column} < '2000-01-01T00:00:00Z' OR {column} > {upper}"
            )
        })
        .collect();
    Ok(sqlx::query_scalar(&checks.join(" UNION "))
        .fetch_all(pool)
        .await?)
}

/// Waits until every checkpoint passes `last`; fails at once if a message was parked, or when
/// the projector makes no progress within [`APPLY_DEADLINE`] (a statement keeps failing).
async fn applied(pool: &PgPool, last: u64) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + APPLY_DEADLINE;
    loop {
        let parked = parked(pool).await?;
        anyhow::ensure!(parked.is_empty(), "messages were parked: {parked:?}");
        let lowest: Option<i64> =
            sqlx::query_scalar("SELECT min(last_sequence) FROM projection_checkpoints")
                .fetch_one(pool)
                .await?;
        if lowest.unwrap_or(0) >= last as i64 {
            return Ok(());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the projector is stuck before sequence {last} (at {lowest:?}): a statement keeps \
             failing; run with TEST_LOG=1 to see it"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// One case: offer every record, publish the accepted ones, check they were all applied.
async fn case(
    h: &Harness,
    (account, records): (usize, Vec<RawRecord>),
    tally: &RefCell<Tally>,
) -> anyhow::Result<()> {
    let now = Utc::now();
    let mut accepted = Accepted::default();
    for record in &records {
        let taken = accepted.offer(record, now);
        let mut tally = tally.borrow_mut();
        tally.records += 1;
        tally.accepted += usize::from(taken);
        tally.accepted_hostile += usize::from(taken && is_hostile(&record.1));
        tally.with_nul += usize::from(record.1.contains("\\u0000"));
        let note = record.0 == RecordKind::Note;
        tally.notes += usize::from(note);
        tally.notes_accepted += usize::from(note && taken);
    }
    let expected = accepted.expected_rows();
    let refused_notes: Vec<Uuid> = accepted.refused_notes.iter().map(|n| n.id).collect();
    let texts = accepted.texts.clone();
    let last = accepted.publish(h, ACCOUNTS[account], now).await?;
    if last == 0 {
        return Ok(());
    }
    let report = |error: anyhow::Error| error.context(format!("accepted records: {texts:#?}"));
    applied(h.pool(), last).await.map_err(report)?;
    let outside = times_out_of_window(h.pool()).await?;
    anyhow::ensure!(
        outside.is_empty(),
        "times outside the documented window were stored in {outside:?}: {texts:#?}"
    );
    let stored_refused: i64 = sqlx::query_scalar("SELECT count(*) FROM notes WHERE id = ANY($1)")
        .bind(&refused_notes)
        .fetch_one(h.pool())
        .await?;
    anyhow::ensure!(
        stored_refused == 0,
        "{stored_refused} notes that break the rules were stored"
    );
    for (table, ids) in expected {
        // Readable as well as stored: every event's properties convert to jsonb (which is
        // what `->>` and any jsonb index or column would need). The table names are constants.
        let usable = if table == "events" {
            "properties::jsonb IS NOT NULL"
        } else {
            "true"
        };
        let stored: i64 = sqlx::query_scalar(&format!(
            "SELECT count(*) FROM {table} WHERE id = ANY($1) AND {usable}"
        ))
        .bind(&ids)
        .fetch_one(h.pool())
        .await
        .map_err(|error| anyhow::anyhow!("reading {table} back: {error}: {texts:#?}"))?;
        anyhow::ensure!(
            stored == ids.len() as i64,
            "{table} holds {stored} of the {} accepted records: {texts:#?}",
            ids.len()
        );
    }
    Ok(())
}

#[test]
fn every_record_ingest_accepts_is_applied_by_the_projector() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    // One projector, database and nats-server for the whole run: cases fold into the same rows.
    let mut harness = runtime.block_on(Harness::start())?;
    let tally = RefCell::new(Tally::default());
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        // A failing record leaves the projector stuck, so shrinking could not run further
        // cases; the failure lists the case's accepted records instead.
        max_shrink_iters: 0,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        0..ACCOUNTS.len(),
        proptest::collection::vec(hostile::record(), 1..12),
    );
    let outcome = runner.run(&strategy, |input| {
        runtime
            .block_on(case(&harness, input, &tally))
            .map_err(|error| TestCaseError::fail(format!("{error:#}")))
    });
    runtime.block_on(harness.stop_projector())?;
    if let Err(failure) = outcome {
        anyhow::bail!("{failure}");
    }

    // The property only means something if both sides of validation were exercised.
    let tally = tally.into_inner();
    eprintln!("accepted => projectable: {tally:?}");
    anyhow::ensure!(
        tally.accepted * 10 >= tally.records * 3,
        "too few records passed validation to test anything: {tally:?}"
    );
    anyhow::ensure!(
        tally.accepted * 10 <= tally.records * 9,
        "too few records were refused: {tally:?}"
    );
    anyhow::ensure!(
        tally.accepted_hostile >= 10,
        "too few hostile records: {tally:?}"
    );
    anyhow::ensure!(
        tally.with_nul >= 10,
        "too few records with a NUL: {tally:?}"
    );
    anyhow::ensure!(
        tally.notes_accepted >= 5 && tally.notes_accepted < tally.notes,
        "notes were not tested both ways: {tally:?}"
    );
    Ok(())
}
