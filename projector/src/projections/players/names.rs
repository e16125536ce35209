//! `player_names`: every name each player has been seen with, and when (first and last).
//! Feeds search by past names and the Investigate page's "names over time".
//!
//! Replay-safe by construction: a row is keyed by (account, player, name) and only ever
//! widens its `[first_seen, last_seen]` span (LEAST/GREATEST), so re-applying any record,
//! in any order, changes nothing.

use super::Sighting;
use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use std::collections::BTreeMap;
use uuid::Uuid;

/// (account, player, name): one row of `player_names`.
pub(super) type NameKey<'a> = (Uuid, Uuid, &'a str);
/// When a name was first and last seen.
pub(super) type Span = (DateTime<Utc>, DateTime<Utc>);

/// The span each (account, player, name) is seen in among `sightings`, ordered by key.
pub(super) fn spans<'a>(sightings: &[Sighting<'a>]) -> BTreeMap<NameKey<'a>, Span> {
    let mut spans = BTreeMap::new();
    for s in sightings {
        let Some(name) = s.name else { continue };
        spans
            .entry((s.account_id, s.player, name))
            .and_modify(|(first, last): &mut Span| {
                *first = (*first).min(s.at);
                *last = (*last).max(s.at);
            })
            .or_insert((s.at, s.at));
    }
    spans
}

/// Widens the stored spans by `spans` (one statement); returns the rows inserted or widened.
/// A row the batch does not widen is not rewritten (the `WHERE`), so a replay writes nothing.
pub(super) async fn upsert(
    conn: &mut PgConnection,
    spans: &[(NameKey<'_>, Span)],
) -> Result<u64, sqlx::Error> {
    let mut columns = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for ((account, player, name), (first, last)) in spans {
        columns.0.push(*account);
        columns.1.push(*player);
        columns.2.push(*name);
        columns.3.push(*first);
        columns.4.push(*last);
    }
    let result = sqlx::query(
        "INSERT INTO player_names AS n (account_id, player_uuid, name, first_seen, last_seen)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[],
                $5::timestamptz[])
         ON CONFLICT (account_id, player_uuid, name) DO UPDATE
         SET first_seen = LEAST(n.first_seen, EXCLUDED.first_seen),
             last_seen = GREATEST(n.last_seen, EXCLUDED.last_seen)
         WHERE EXCLUDED.first_seen < n.first_seen OR EXCLUDED.last_seen > n.last_seen",
    )
    .bind(columns.0)
    .bind(columns.1)
    .bind(columns.2)
    .bind(columns.3)
    .bind(columns.4)
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projections::players::Change;

    fn seen<'a>(player: Uuid, name: Option<&'a str>, minute: u32) -> Sighting<'a> {
        Sighting {
            account_id: Uuid::nil(),
            player,
            at: DateTime::from_timestamp(i64::from(minute) * 60, 0).unwrap_or_default(),
            seq: i64::from(minute),
            name,
            change: Change::Seen,
        }
    }

    #[test]
    fn each_name_spans_its_first_and_last_sighting_in_any_order() {
        let p = Uuid::from_u128(1);
        let spans = spans(&[
            seen(p, Some("Old"), 5),
            seen(p, Some("New"), 9),
            seen(p, Some("Old"), 2),
            seen(p, None, 30),
            seen(p, Some("Old"), 7),
        ]);
        let minute = |m: i64| DateTime::from_timestamp(m * 60, 0).unwrap_or_default();
        assert_eq!(spans.len(), 2, "a sighting without a name adds none");
        assert_eq!(spans[&(Uuid::nil(), p, "Old")], (minute(2), minute(7)));
        assert_eq!(spans[&(Uuid::nil(), p, "New")], (minute(9), minute(9)));
    }
}
