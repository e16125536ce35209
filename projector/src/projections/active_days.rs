//! Active days (for retention): the UTC days each player was active
//! (`player_active_days`), each player's first and last active day (`player_activity`), and
//! per-cohort counts kept in step with them (`cohort_returns`, `cohort_spans`), which the
//! retention query reads instead of millions of days (migration 0017 says what counts as
//! activity and why).
//!
//! Per chunk: the chunk's (account, player, day) set; one SELECT of the stored spans of its
//! players; for the few players whose first day a late record moved earlier, one SELECT of
//! their stored days (their counts move to the new cohort); one insert of the days (ON CONFLICT
//! DO NOTHING RETURNING what was new); one upsert of the spans that changed; and the count
//! changes ([`deltas`]), summed per key, as one upsert per table and one DELETE of the counts
//! that reached 0. Counts change only by newly inserted days and changed spans, so replaying
//! any part of the log changes nothing and a rebuild ends with the same rows.

use super::Positioned;
use chrono::{DateTime, NaiveDate, Utc};
use shared::envelope::RecordBatch;
use sqlx::PgConnection;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Rows per statement: batched, yet bounded so one statement's arrays stay small.
const ROWS_PER_STATEMENT: usize = 5_000;

/// (account, player).
type PlayerKey = (Uuid, Uuid);

/// A player's first and last active day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First active day (the cohort).
    pub first_day: NaiveDate,
    /// Last active day.
    pub last_day: NaiveDate,
}

/// The (account, player, UTC day) of each activity record of `messages`, without repeats.
pub fn active_days(messages: &[&Positioned]) -> BTreeSet<(Uuid, Uuid, NaiveDate)> {
    let mut days = BTreeSet::new();
    for m in messages {
        let account = m.message.account_id;
        let received = m.message.received_at;
        let mut add = |player: Uuid, at: Option<DateTime<Utc>>| {
            days.insert((account, player, at.unwrap_or(received).date_naive()));
        };
        match &m.message.batch {
            RecordBatch::Session(records) => {
                for l in records {
                    add(l.record.player_uuid, l.record.at);
                }
            }
            RecordBatch::Chat(records) => {
                for l in records {
                    add(l.record.player_uuid, l.record.sent_at);
                }
            }
            RecordBatch::AnticheatFlag(records) => {
                for l in records {
                    add(l.record.player_uuid, l.record.flagged_at);
                }
            }
            // Staff can punish, rank or link an offline player; custom events are the
            // event variant's business (read from `events`); heartbeats and notes name no
            // playing player, nor does an erasure (the days it was active stay: aggregates).
            RecordBatch::Punishment(_)
            | RecordBatch::RankChange(_)
            | RecordBatch::AccountLink(_)
            | RecordBatch::Custom(_)
            | RecordBatch::Heartbeat(_)
            | RecordBatch::Note(_)
            | RecordBatch::Erasure(_)
            | RecordBatch::Action(_)
            | RecordBatch::ActionAck(_)
            | RecordBatch::Appeal(_) => {}
        }
    }
    days
}

/// What a chunk changes: the spans to write, and the players whose first day moved earlier
/// (their stored days count for another cohort now).
#[derive(Debug, Default, PartialEq)]
pub struct SpanChanges {
    /// New or widened spans.
    pub spans: BTreeMap<PlayerKey, Span>,
    /// Players with stored days whose first day is now earlier.
    pub moved: Vec<PlayerKey>,
}

/// Widens the `stored` spans by `days`; returns only what changed.
pub fn widen(
    stored: &BTreeMap<PlayerKey, Span>,
    days: &BTreeSet<(Uuid, Uuid, NaiveDate)>,
) -> SpanChanges {
    let mut spans: BTreeMap<PlayerKey, Span> = BTreeMap::new();
    for &(account, player, day) in days {
        let key = (account, player);
        let span = spans.entry(key).or_insert_with(|| {
            stored.get(&key).copied().unwrap_or(Span {
                first_day: day,
                last_day: day,
            })
        });
        span.first_day = span.first_day.min(day);
        span.last_day = span.last_day.max(day);
    }
    let moved = spans
        .iter()
        .filter(|(key, span)| {
            stored
                .get(key)
                .is_some_and(|s| span.first_day < s.first_day)
        })
        .map(|(key, _)| *key)
        .collect();
    spans.retain(|key, span| stored.get(key) != Some(span));
    SpanChanges { spans, moved }
}

/// (account, cohort first day, day number or span): a row of `cohort_returns` or
/// `cohort_spans`.
pub type CountKey = (Uuid, NaiveDate, i32);

/// How a chunk changes the two count tables; no key with a change of 0.
#[derive(Debug, Default, PartialEq)]
pub struct CountDeltas {
    /// `cohort_returns`: players active on day N of the cohort.
    pub returns: BTreeMap<CountKey, i64>,
    /// `cohort_spans`: players last active on day N of the cohort.
    pub spans: BTreeMap<CountKey, i64>,
}

/// The count changes of a chunk: each newly stored day counts once for its player's cohort
/// (as of the chunk's end); the stored days of a `moved` player leave their old cohort for
/// the new one; a changed span leaves its old (cohort, span) for the new one.
pub fn deltas(
    stored: &BTreeMap<PlayerKey, Span>,
    changes: &SpanChanges,
    moved_days: &[(Uuid, Uuid, NaiveDate)],
    new_days: &[(Uuid, Uuid, NaiveDate)],
) -> CountDeltas {
    let mut d = CountDeltas::default();
    let now = |key: &PlayerKey| changes.spans.get(key).or_else(|| stored.get(key)).copied();
    let number = |day: NaiveDate, first: NaiveDate| {
        i32::try_from((day - first).num_days()).unwrap_or(i32::MAX)
    };
    let add = |map: &mut BTreeMap<CountKey, i64>, key: CountKey, by: i64| {
        *map.entry(key).or_default() += by;
    };
    for &(account, player, day) in moved_days {
        let (Some(old), Some(new)) = (stored.get(&(account, player)), now(&(account, player)))
        else {
            continue;
        };
        add(
            &mut d.returns,
            (account, old.first_day, number(day, old.first_day)),
            -1,
        );
        add(
            &mut d.returns,
            (account, new.first_day, number(day, new.first_day)),
            1,
        );
    }
    for &(account, player, day) in new_days {
        if let Some(span) = now(&(account, player)) {
            add(
                &mut d.returns,
                (account, span.first_day, number(day, span.first_day)),
                1,
            );
        }
    }
    for (&(account, player), new) in &changes.spans {
        if let Some(old) = stored.get(&(account, player)) {
            add(
                &mut d.spans,
                (account, old.first_day, number(old.last_day, old.first_day)),
                -1,
            );
        }
        add(
            &mut d.spans,
            (account, new.first_day, number(new.last_day, new.first_day)),
            1,
        );
    }
    d.returns.retain(|_, by| *by != 0);
    d.spans.retain(|_, by| *by != 0);
    d
}

/// Players' active days, for retention.
#[derive(Debug, Clone, Copy)]
pub struct ActiveDays;

read_model! {
    ActiveDays: "active_days",
    tables: ["player_activity", "player_active_days", "cohort_returns", "cohort_spans"],
    fold: apply,
}

/// Folds the activity records of `messages` into the four tables; returns the rows written.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let days = active_days(messages);
    if days.is_empty() {
        return Ok(0);
    }
    let keys: Vec<PlayerKey> = days
        .iter()
        .map(|&(a, p, _)| (a, p))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut stored = BTreeMap::new();
    for batch in keys.chunks(ROWS_PER_STATEMENT) {
        stored.extend(load(conn, batch).await?);
    }
    let changes = widen(&stored, &days);
    // Before the insert, so these are the days stored before this chunk.
    let mut moved_days = Vec::new();
    for batch in changes.moved.chunks(ROWS_PER_STATEMENT) {
        moved_days.extend(days_of(conn, batch).await?);
    }
    let rows: Vec<(Uuid, Uuid, NaiveDate)> = days.into_iter().collect();
    let mut new_days = Vec::new();
    for batch in rows.chunks(ROWS_PER_STATEMENT) {
        new_days.extend(insert_days(conn, batch).await?);
    }
    let mut written = new_days.len() as u64;
    let spans: Vec<(PlayerKey, Span)> = changes.spans.iter().map(|(k, s)| (*k, *s)).collect();
    for batch in spans.chunks(ROWS_PER_STATEMENT) {
        written += upsert_spans(conn, batch).await?;
    }
    let counts = deltas(&stored, &changes, &moved_days, &new_days);
    for (table, column, map) in [
        ("cohort_returns", "day_number", &counts.returns),
        ("cohort_spans", "span", &counts.spans),
    ] {
        let changed: Vec<(&CountKey, &i64)> = map.iter().collect();
        for batch in changed.chunks(ROWS_PER_STATEMENT) {
            written += add_counts(conn, table, column, batch).await?;
        }
    }
    Ok(written)
}

async fn load(
    conn: &mut PgConnection,
    keys: &[PlayerKey],
) -> Result<Vec<(PlayerKey, Span)>, sqlx::Error> {
    let (accounts, players): (Vec<Uuid>, Vec<Uuid>) = keys.iter().copied().unzip();
    let rows: Vec<(Uuid, Uuid, NaiveDate, NaiveDate)> = sqlx::query_as(
        "SELECT a.account_id, a.player_uuid, a.first_day, a.last_day
         FROM player_activity a
         JOIN UNNEST($1::uuid[], $2::uuid[]) AS k(account_id, player_uuid)
           ON a.account_id = k.account_id AND a.player_uuid = k.player_uuid",
    )
    .bind(accounts)
    .bind(players)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(a, p, first_day, last_day)| {
            (
                (a, p),
                Span {
                    first_day,
                    last_day,
                },
            )
        })
        .collect())
}

async fn days_of(
    conn: &mut PgConnection,
    players: &[PlayerKey],
) -> Result<Vec<(Uuid, Uuid, NaiveDate)>, sqlx::Error> {
    let (accounts, uuids): (Vec<Uuid>, Vec<Uuid>) = players.iter().copied().unzip();
    sqlx::query_as(
        "SELECT d.account_id, d.player_uuid, d.day
         FROM player_active_days d
         JOIN UNNEST($1::uuid[], $2::uuid[]) AS k(account_id, player_uuid)
           ON d.account_id = k.account_id AND d.player_uuid = k.player_uuid",
    )
    .bind(accounts)
    .bind(uuids)
    .fetch_all(conn)
    .await
}

/// Inserts the days; returns those that were new.
async fn insert_days(
    conn: &mut PgConnection,
    rows: &[(Uuid, Uuid, NaiveDate)],
) -> Result<Vec<(Uuid, Uuid, NaiveDate)>, sqlx::Error> {
    sqlx::query_as(
        "INSERT INTO player_active_days (account_id, player_uuid, day)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::date[])
         ON CONFLICT (account_id, player_uuid, day) DO NOTHING
         RETURNING account_id, player_uuid, day",
    )
    .bind(rows.iter().map(|r| r.0).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.1).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.2).collect::<Vec<_>>())
    .fetch_all(conn)
    .await
}

/// The upsert is a min/max merge, so it is correct even against a row it did not load.
async fn upsert_spans(
    conn: &mut PgConnection,
    spans: &[(PlayerKey, Span)],
) -> Result<u64, sqlx::Error> {
    let result = sqlx::query(
        "INSERT INTO player_activity AS a (account_id, player_uuid, first_day, last_day)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::date[], $4::date[])
         ON CONFLICT (account_id, player_uuid) DO UPDATE
            SET first_day = LEAST(a.first_day, EXCLUDED.first_day),
                last_day = GREATEST(a.last_day, EXCLUDED.last_day)",
    )
    .bind(spans.iter().map(|(k, _)| k.0).collect::<Vec<_>>())
    .bind(spans.iter().map(|(k, _)| k.1).collect::<Vec<_>>())
    .bind(spans.iter().map(|(_, s)| s.first_day).collect::<Vec<_>>())
    .bind(spans.iter().map(|(_, s)| s.last_day).collect::<Vec<_>>())
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

/// Adds the changes to `table`'s counts, then deletes the counts they brought to 0 (a rebuild
/// never writes a 0, so neither may an update).
async fn add_counts(
    conn: &mut PgConnection,
    table: &str,
    column: &str,
    changes: &[(&CountKey, &i64)],
) -> Result<u64, sqlx::Error> {
    let accounts: Vec<Uuid> = changes.iter().map(|(k, _)| k.0).collect();
    let firsts: Vec<NaiveDate> = changes.iter().map(|(k, _)| k.1).collect();
    let numbers: Vec<i32> = changes.iter().map(|(k, _)| k.2).collect();
    let by: Vec<i64> = changes.iter().map(|(_, by)| **by).collect();
    let upsert = format!(
        "INSERT INTO {table} AS c (account_id, first_day, {column}, players)
         SELECT * FROM UNNEST($1::uuid[], $2::date[], $3::int[], $4::bigint[])
         ON CONFLICT (account_id, {column}, first_day) DO UPDATE
            SET players = c.players + EXCLUDED.players"
    );
    let written = sqlx::query(&upsert)
        .bind(&accounts)
        .bind(&firsts)
        .bind(&numbers)
        .bind(&by)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    if by.iter().any(|b| *b < 0) {
        let delete = format!(
            "DELETE FROM {table} c
             USING UNNEST($1::uuid[], $2::date[], $3::int[]) AS k(account_id, first_day, n)
             WHERE c.account_id = k.account_id AND c.first_day = k.first_day
               AND c.{column} = k.n AND c.players = 0"
        );
        sqlx::query(&delete)
            .bind(&accounts)
            .bind(&firsts)
            .bind(&numbers)
            .execute(&mut *conn)
            .await?;
    }
    Ok(written)
}

#[cfg(test)]
#[path = "active_days_tests.rs"]
mod tests;
