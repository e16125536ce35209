//! The Overview's activity list as two small tables (migration 0030): `recent_events`, the
//! newest joins, quits, punishments, revokes and rank changes of each account (written by the
//! timeline model), and `recent_flags`, its newest anti-cheat flags (the anti-cheat model).
//!
//! Each model adds what its fold stored, in its own transaction, and then deletes the
//! account's rows past the newest [`RECENT_ACTIVITY_KEPT`]. The rows kept are therefore the
//! newest of everything the model ever stored, whatever the chunks were: a row once past the
//! newest is never among them again, so a rebuild keeps the same rows as the live projector.
//! The erasure scrub and the retention sweep change these tables as they change the large ones.

use shared::timeline::{ACTIVITY_EVENTS, RECENT_ACTIVITY_KEPT, TimelineEvent};
use sqlx::PgConnection;
use std::collections::{BTreeSet, HashSet};
use uuid::Uuid;

/// Adds the activity events among `stored` (timeline rows just stored, none already in
/// `events`) to `recent_events` and deletes what is past the newest of each account they
/// touched; returns the rows added.
pub(crate) async fn keep_events<'a>(
    conn: &mut PgConnection,
    stored: impl IntoIterator<Item = &'a TimelineEvent>,
) -> Result<u64, sqlx::Error> {
    let kept = newest_per_account(
        stored
            .into_iter()
            .filter(|e| e.is_internal && ACTIVITY_EVENTS.contains(&e.name.as_str())),
    );
    if kept.is_empty() {
        return Ok(0);
    }
    let added = sqlx::query(
        "INSERT INTO recent_events (account_id, id, seq, name, player_uuid, server_id,
                                    properties, occurred_at)
         SELECT account_id, id, seq, name, player_uuid, server_id, properties::json,
                occurred_at
         FROM UNNEST($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::uuid[], $6::uuid[],
                     $7::text[], $8::timestamptz[])
              AS t(account_id, id, seq, name, player_uuid, server_id, properties, occurred_at)
         ON CONFLICT (account_id, id) DO NOTHING",
    )
    .bind(kept.iter().map(|e| e.account_id).collect::<Vec<_>>())
    .bind(kept.iter().map(|e| e.id).collect::<Vec<_>>())
    .bind(kept.iter().map(|e| e.seq).collect::<Vec<_>>())
    .bind(kept.iter().map(|e| e.name.as_str()).collect::<Vec<_>>())
    .bind(kept.iter().map(|e| e.player_uuid).collect::<Vec<_>>())
    .bind(kept.iter().map(|e| e.server_id).collect::<Vec<_>>())
    .bind(
        kept.iter()
            .map(|e| e.properties.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(kept.iter().map(|e| e.occurred_at).collect::<Vec<_>>())
    .execute(&mut *conn)
    .await?
    .rows_affected();
    let accounts: BTreeSet<Uuid> = kept.iter().map(|e| e.account_id).collect();
    prune(conn, Kept::Events, accounts).await?;
    Ok(added)
}

/// Deletes the flags of `accounts` past the newest kept in `recent_flags` (the anti-cheat
/// model adds them in its insert's statement); returns the rows deleted.
pub(crate) async fn prune_flags(
    conn: &mut PgConnection,
    accounts: BTreeSet<Uuid>,
) -> Result<u64, sqlx::Error> {
    prune(conn, Kept::Flags, accounts).await
}

/// The newest [`RECENT_ACTIVITY_KEPT`] of `events` per account, in the order
/// `recent_events_account_time_idx` keeps (newest first). An id given twice (a record logged
/// twice in one chunk, both copies reported as the one stored) counts once, as first given.
fn newest_per_account<'a>(
    events: impl Iterator<Item = &'a TimelineEvent>,
) -> Vec<&'a TimelineEvent> {
    let mut seen = HashSet::new();
    let mut events: Vec<&TimelineEvent> = events
        .filter(|e| seen.insert((e.account_id, e.id)))
        .collect();
    events.sort_by_key(|e| {
        (
            e.account_id,
            std::cmp::Reverse((e.occurred_at, e.seq, e.id)),
        )
    });
    let mut kept = Vec::new();
    let mut run: Option<(Uuid, i64)> = None;
    for e in events {
        let n = match run {
            Some((account, n)) if account == e.account_id => n + 1,
            _ => 1,
        };
        run = Some((e.account_id, n));
        if n <= RECENT_ACTIVITY_KEPT {
            kept.push(e);
        }
    }
    kept
}

/// One of the two tables.
#[derive(Debug, Clone, Copy)]
enum Kept {
    Events,
    Flags,
}

impl Kept {
    /// Its name and the order of its time index (newest first).
    fn table_and_order(self) -> (&'static str, &'static str) {
        match self {
            Kept::Events => ("recent_events", "occurred_at DESC, seq DESC, id DESC"),
            Kept::Flags => ("recent_flags", "flagged_at DESC, id DESC"),
        }
    }
}

/// Deletes the rows of `accounts` in `table` past the newest [`RECENT_ACTIVITY_KEPT`]: one
/// range of the time index per account, past its first rows.
async fn prune(
    conn: &mut PgConnection,
    table: Kept,
    accounts: BTreeSet<Uuid>,
) -> Result<u64, sqlx::Error> {
    if accounts.is_empty() {
        return Ok(0);
    }
    let (table, order) = table.table_and_order();
    let sql = format!(
        "DELETE FROM {table} r USING (
             SELECT a.account_id, x.id
             FROM UNNEST($1::uuid[]) AS a(account_id)
             CROSS JOIN LATERAL (
                 SELECT id FROM {table} WHERE account_id = a.account_id
                 ORDER BY {order} OFFSET $2) x) past
         WHERE r.account_id = past.account_id AND r.id = past.id"
    );
    let deleted = sqlx::query(&sql)
        .bind(accounts.into_iter().collect::<Vec<_>>())
        .bind(RECENT_ACTIVITY_KEPT)
        .execute(conn)
        .await?
        .rows_affected();
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::minutes(minutes)
    }

    fn event(account: u128, name: &str, minute: i64, seq: i64) -> TimelineEvent {
        TimelineEvent {
            account_id: Uuid::from_u128(account),
            id: Uuid::now_v7(),
            seq,
            name: name.to_owned(),
            is_internal: true,
            player_uuid: None,
            server_id: None,
            properties: "{}".to_owned(),
            occurred_at: at(minute),
            received_at: at(minute),
        }
    }

    #[test]
    fn only_the_newest_activity_of_each_account_is_kept() {
        let total = RECENT_ACTIVITY_KEPT + 5;
        let mut events: Vec<TimelineEvent> =
            (0..total).map(|i| event(1, "session_join", i, i)).collect();
        events.push(event(2, "punish_ban", 0, 1_000));
        // Same time: the later position in the log is the newer.
        events.push(event(2, "punish_kick", 0, 1_001));
        // A copy of an id already given (the newest): counted once, as first given.
        let mut copy = events[RECENT_ACTIVITY_KEPT as usize + 4].clone();
        copy.seq = 5_000;
        events.push(copy);
        let kept = newest_per_account(events.iter());
        let of = |account: u128| -> Vec<i64> {
            kept.iter()
                .filter(|e| e.account_id == Uuid::from_u128(account))
                .map(|e| e.seq)
                .collect()
        };
        let expected: Vec<i64> = (5..total).rev().collect();
        assert_eq!(of(1), expected);
        assert_eq!(of(2), [1_001, 1_000]);
    }
}
