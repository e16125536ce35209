//! Players (contract §7 player lookup, staff): one row of `players` per (account, player) seen
//! in sessions, chat, punishments (the punished player), anti-cheat flags, rank changes and
//! account links. Custom events do not create players.
//!
//! Per chunk: one SELECT loads the rows of every player the chunk names, the records are
//! folded into them in memory in log order ([`fold`]), and one UNNEST upsert per
//! [`ROWS_PER_STATEMENT`] writes back only the rows that changed. A rebuild's bulk load keeps
//! the rows between its chunks and reads back only the players it does not keep, and none
//! of those new to the log while it keeps every row it stored ([`kept`]); during the load it
//! writes them, and the name spans, once at its end rather than at every chunk ([`bulk`]).
//!
//! Replay-safe: `first_seen`/`last_seen` are min/max; the name, the rank and the link each
//! change only for a record newer than the one that last set them, where "newer" is (record
//! time, log position). So re-applying any record, or an earlier part of the log, changes
//! nothing, and among records with equal times the later one in the log wins (the rules'
//! `changed_at >= rank_changed_at` and `at >= linked_at`). The upsert repeats those guards,
//! so it is a correct merge even on its own.
//!
//! Beside `players` (latest name only), [`names`] keeps every name a player was seen with in
//! `player_names`, for search by past names.

mod bulk;
mod fold;
mod kept;
mod kept_names;
mod names;

pub(crate) use bulk::{Kept, apply_bulk, kept_written, write_kept};
pub use fold::{Change, PlayerKey, PlayerRow, Sighting, fold, sightings_of};

use super::Positioned;
use shared::envelope::RecordBatch;
use sqlx::PgConnection;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::LazyLock;
use uuid::Uuid;

/// Rows per statement: batched, yet bounded so one statement's parameters stay small.
const ROWS_PER_STATEMENT: usize = 2_000;

/// Who each player is: names, first and last seen, rank, linked account.
#[derive(Debug, Clone, Copy)]
pub struct Players;

read_model! {
    Players: "players",
    tables: ["players", "player_names"],
    fold: apply,
    bulk_keeping: apply_bulk,
}

/// Folds the player records of `messages` into `players` and `player_names`; returns the
/// rows written.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let sightings = sightings(messages);
    if sightings.is_empty() {
        return Ok(0);
    }
    let keys: BTreeSet<PlayerKey> = sightings.iter().map(|s| (s.account_id, s.player)).collect();
    let keys: Vec<PlayerKey> = keys.into_iter().collect();
    let mut stored = BTreeMap::new();
    read_back(conn, &keys, &mut stored).await?;
    let changed = fold(&stored, &sightings);
    let spans: Vec<_> = names::spans(&sightings).into_iter().collect();
    Ok(write(conn, &changed).await? + write_names(conn, &spans).await?)
}

/// The sightings of every message, in log order.
fn sightings<'m>(messages: &[&'m Positioned]) -> Vec<Sighting<'m>> {
    messages
        .iter()
        .flat_map(|m| sightings_of(m.stream_sequence, &m.message))
        .collect()
}

/// Reads the stored rows of `keys` into `stored`.
async fn read_back(
    conn: &mut PgConnection,
    keys: &[PlayerKey],
    stored: &mut BTreeMap<PlayerKey, PlayerRow>,
) -> Result<(), sqlx::Error> {
    for batch in keys.chunks(ROWS_PER_STATEMENT) {
        for row in load(conn, batch).await? {
            stored.insert((row.account_id, row.uuid), row);
        }
    }
    Ok(())
}

/// Upserts `rows`; returns the rows written.
async fn write(conn: &mut PgConnection, rows: &[PlayerRow]) -> Result<u64, sqlx::Error> {
    let mut written = 0;
    for batch in rows.chunks(ROWS_PER_STATEMENT) {
        written += upsert(conn, batch).await?;
    }
    Ok(written)
}

/// Widens the stored name spans by `spans`; returns the rows written.
async fn write_names(
    conn: &mut PgConnection,
    spans: &[(names::NameKey<'_>, names::Span)],
) -> Result<u64, sqlx::Error> {
    let mut written = 0;
    for batch in spans.chunks(ROWS_PER_STATEMENT) {
        written += names::upsert(conn, batch).await?;
    }
    Ok(written)
}

/// The players `messages` erase: the erasure model scrubs their rows after this model's
/// transaction, so what was kept of them is no longer what is stored.
fn erased_in(messages: &[&Positioned]) -> HashSet<PlayerKey> {
    messages
        .iter()
        .filter_map(|m| match &m.message.batch {
            RecordBatch::Erasure(records) => Some(
                records
                    .iter()
                    .map(|r| (m.message.account_id, r.record.player_uuid)),
            ),
            _ => None,
        })
        .flatten()
        .collect()
}

async fn load(conn: &mut PgConnection, keys: &[PlayerKey]) -> Result<Vec<PlayerRow>, sqlx::Error> {
    let (accounts, players): (Vec<Uuid>, Vec<Uuid>) = keys.iter().copied().unzip();
    sqlx::query_as(
        "SELECT p.account_id, p.uuid, p.username, p.username_at, p.username_seq, p.names, p.first_seen,
                p.last_seen, p.rank, p.previous_rank, p.rank_expires_at, p.rank_changed_at,
                p.rank_changed_seq, p.linked_platform, p.linked_external_id,
                p.linked_external_name, p.linked_at, p.linked_seq
         FROM players p
         JOIN UNNEST($1::uuid[], $2::uuid[]) AS k(account_id, uuid)
           ON p.account_id = k.account_id AND p.uuid = k.uuid",
    )
    .bind(accounts)
    .bind(players)
    .fetch_all(conn)
    .await
}

/// Column groups that change together, each guarded by its (time, log position) stamp.
const GUARDED: [(&str, &str, &[&str]); 3] = [
    ("username_at", "username_seq", &["username"]),
    (
        "rank_changed_at",
        "rank_changed_seq",
        &["rank", "previous_rank", "rank_expires_at"],
    ),
    (
        "linked_at",
        "linked_seq",
        &[
            "linked_platform",
            "linked_external_id",
            "linked_external_name",
        ],
    ),
];

/// The upsert: each guarded group keeps the stored values unless the new ones come from a
/// newer record, so the statement never moves a row backwards; `names` is a set union.
/// `names` travels as one JSON array per row (UNNEST would flatten an array of arrays) and
/// is stored in byte order (`COLLATE "C"`), the order of Rust's `String`, so a row read back
/// compares equal to the fold's.
static UPSERT: LazyLock<String> = LazyLock::new(|| {
    let mut set = vec![
        "first_seen = LEAST(p.first_seen, EXCLUDED.first_seen)".to_owned(),
        "last_seen = GREATEST(p.last_seen, EXCLUDED.last_seen)".to_owned(),
        // Mostly no new name: the containment test skips the sort.
        "names = CASE WHEN EXCLUDED.names <@ p.names THEN p.names ELSE ARRAY(SELECT n FROM \
                 (SELECT DISTINCT unnest(p.names || EXCLUDED.names) AS n) AS d \
                 ORDER BY n COLLATE \"C\") END"
            .to_owned(),
    ];
    for (at, seq, columns) in GUARDED {
        let newer =
            format!("p.{at} IS NULL OR (EXCLUDED.{at}, EXCLUDED.{seq}) > (p.{at}, p.{seq})");
        for column in columns.iter().chain(&[at, seq]) {
            set.push(format!(
                "{column} = CASE WHEN {newer} THEN EXCLUDED.{column} ELSE p.{column} END"
            ));
        }
    }
    format!(
        "INSERT INTO players AS p (account_id, uuid, username, username_at, username_seq,
                first_seen, last_seen, rank, previous_rank, rank_expires_at, rank_changed_at,
                rank_changed_seq, linked_platform, linked_external_id, linked_external_name,
                linked_at, linked_seq, names)
         SELECT u.account_id, u.uuid, u.username, u.username_at, u.username_seq, u.first_seen,
                u.last_seen, u.rank, u.previous_rank, u.rank_expires_at, u.rank_changed_at,
                u.rank_changed_seq, u.linked_platform, u.linked_external_id,
                u.linked_external_name, u.linked_at, u.linked_seq,
                ARRAY(SELECT jsonb_array_elements_text(u.names))
         FROM UNNEST($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[],
                $5::bigint[], $6::timestamptz[], $7::timestamptz[], $8::text[], $9::text[],
                $10::timestamptz[], $11::timestamptz[], $12::bigint[], $13::text[], $14::text[],
                $15::text[], $16::timestamptz[], $17::bigint[], $18::jsonb[])
              AS u(account_id, uuid, username, username_at, username_seq, first_seen,
                   last_seen, rank, previous_rank, rank_expires_at, rank_changed_at,
                   rank_changed_seq, linked_platform, linked_external_id,
                   linked_external_name, linked_at, linked_seq, names)
         ON CONFLICT (account_id, uuid) DO UPDATE SET {}",
        set.join(",\n            ")
    )
});

/// Writes folded rows (only rows that changed reach here, so no row is rewritten as is).
async fn upsert(conn: &mut PgConnection, rows: &[PlayerRow]) -> Result<u64, sqlx::Error> {
    fn col<'a, T>(rows: &'a [PlayerRow], f: impl Fn(&'a PlayerRow) -> T) -> Vec<T> {
        rows.iter().map(f).collect()
    }
    let result = sqlx::query(UPSERT.as_str())
        .bind(col(rows, |r| r.account_id))
        .bind(col(rows, |r| r.uuid))
        .bind(col(rows, |r| r.username.as_deref()))
        .bind(col(rows, |r| r.username_at))
        .bind(col(rows, |r| r.username_seq))
        .bind(col(rows, |r| r.first_seen))
        .bind(col(rows, |r| r.last_seen))
        .bind(col(rows, |r| r.rank.as_deref()))
        .bind(col(rows, |r| r.previous_rank.as_deref()))
        .bind(col(rows, |r| r.rank_expires_at))
        .bind(col(rows, |r| r.rank_changed_at))
        .bind(col(rows, |r| r.rank_changed_seq))
        .bind(col(rows, |r| r.linked_platform.as_deref()))
        .bind(col(rows, |r| r.linked_external_id.as_deref()))
        .bind(col(rows, |r| r.linked_external_name.as_deref()))
        .bind(col(rows, |r| r.linked_at))
        .bind(col(rows, |r| r.linked_seq))
        .bind(col(rows, |r| sqlx::types::Json(&r.names)))
        .execute(conn)
        .await?;
    Ok(result.rows_affected())
}
