//! Players (contract §7 player lookup, staff): one row of `players` per (account, player) seen
//! in sessions, chat, punishments (the punished player), anti-cheat flags, rank changes and
//! account links. Custom events do not create players.
//!
//! Per chunk: one SELECT loads the rows of every player the chunk names, the records are
//! folded into them in memory in log order ([`fold`]), and one UNNEST upsert per
//! [`ROWS_PER_STATEMENT`] writes back only the rows that changed. A rebuild's bulk load keeps
//! the rows between its chunks and reads back only the players it does not keep, and none
//! of those new to the log while it keeps every row it stored ([`kept`]).
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

mod fold;
mod kept;
mod names;

pub use fold::{Change, PlayerKey, PlayerRow, Sighting, fold, sightings_of};
pub(crate) use kept::Kept;

use super::{BulkState, Positioned};
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
    apply_keeping(conn, messages, None).await
}

/// [`apply`] into a rebuild's copy, keeping the rows in `state` rather than reading them
/// back at the next chunk ([`kept`]).
pub(crate) async fn apply_bulk(
    conn: &mut PgConnection,
    messages: &[&Positioned],
    state: &BulkState,
) -> Result<u64, sqlx::Error> {
    apply_keeping(conn, messages, Some(&state.players)).await
}

/// [`apply`], taking the rows `kept` keeps (if any) instead of reading them back, and keeping
/// the rows it stored once its statements succeeded (or putting back those it took, as they
/// were, when they failed).
async fn apply_keeping(
    conn: &mut PgConnection,
    messages: &[&Positioned],
    kept: Option<&Kept>,
) -> Result<u64, sqlx::Error> {
    let sightings: Vec<Sighting<'_>> = messages
        .iter()
        .flat_map(|m| sightings_of(m.stream_sequence, &m.message))
        .collect();
    let erased = kept.map(|_| erased_in(messages)).unwrap_or_default();
    if sightings.is_empty() {
        if let Some(kept) = kept {
            kept.put_back(BTreeMap::new(), Vec::new(), &erased);
        }
        return Ok(0);
    }
    let keys: BTreeSet<PlayerKey> = sightings.iter().map(|s| (s.account_id, s.player)).collect();
    let keys: Vec<PlayerKey> = keys.into_iter().collect();
    let (mut stored, missing) = match kept {
        Some(kept) => kept.take(keys),
        None => (BTreeMap::new(), keys),
    };
    let stored_now = store(conn, &sightings, &missing, &mut stored).await;
    let Some(kept) = kept else {
        return stored_now.map(|(written, _)| written);
    };
    match stored_now {
        Ok((written, changed)) => {
            kept.put_back(stored, changed, &erased);
            Ok(written)
        }
        Err(error) => {
            kept.restore(stored);
            Err(error)
        }
    }
}

/// Reads back the rows of the `missing` players into `stored` (the rows of the others), folds
/// `sightings` into them and writes what changed; returns the rows written and the changed
/// rows.
async fn store(
    conn: &mut PgConnection,
    sightings: &[Sighting<'_>],
    missing: &[PlayerKey],
    stored: &mut BTreeMap<PlayerKey, PlayerRow>,
) -> Result<(u64, Vec<PlayerRow>), sqlx::Error> {
    for batch in missing.chunks(ROWS_PER_STATEMENT) {
        for row in load(conn, batch).await? {
            stored.insert((row.account_id, row.uuid), row);
        }
    }
    let changed = fold(stored, sightings);
    let mut written = 0;
    for batch in changed.chunks(ROWS_PER_STATEMENT) {
        written += upsert(conn, batch).await?;
    }
    let spans: Vec<_> = names::spans(sightings).into_iter().collect();
    for batch in spans.chunks(ROWS_PER_STATEMENT) {
        written += names::upsert(conn, batch).await?;
    }
    Ok((written, changed))
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
