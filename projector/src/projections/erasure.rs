//! Player erasures: for each `erasure` record, every read model drops or blanks the
//! player's personal fields, in this model's transaction, and `erased_players` records it.
//!
//! query-api destroyed the player's key before it logged the erasure, so from then on the log
//! reads the player's sealed fields as erased for every reader (a rebuild included); this
//! scrub removes what the read models already hold in clear, and what was logged before
//! sealing existed (which a replay reads in clear again, and this record scrubs again at its
//! place in the log). The model [depends on](ReadModel::depends_on) every model it scrubs, so
//! it applies a chunk only once they committed it: a chunk holding a player's records and
//! their erasure stores the records first and scrubs them after.
//!
//! # What is dropped or blanked (table: rows of the player unless said otherwise)
//!
//! - `players`: `username` and `names` (all names), the linked account's platform, id and name;
//! - `player_names`: every row deleted;
//! - `sessions`: `ip_hash` set to NULL;
//! - `chat_messages`: every row deleted;
//! - `notes`: every note about the player deleted;
//! - `appeals`: every appeal of the player deleted;
//! - `punishments`: `reason`, `revoke_reason` of punishments of the player; `staff_name` where
//!   the player was the staff member; `revoked_by_name` where they revoked;
//! - `punishment_revokes`: `revoke_reason` of revokes of the player's punishments;
//!   `revoked_by_name` where they revoked;
//! - `events` (timeline): the player's custom events keep name and time, their properties
//!   become `{}`; the player's internal events lose `player_name`, `reason`, `revoke_reason`
//!   (null) and a chat line's `message` (""); punishments and rank changes the player made as
//!   staff lose `staff_name`;
//! - `recent_events` (the Overview's newest activity events): as `events`;
//! - `alert_deliveries` (the notifier's outbox, history included): the same fields of payloads
//!   about the player or naming them as staff, their name among a banned-alt list, and a
//!   staff rank change's `staff_name` equal to one of their names (those payloads carry no
//!   staff UUID).
//!
//! # What remains
//!
//! UUIDs and times, and what counts: the `players` row (first and last seen, rank and its
//! history times, when a link was made), sessions (times, server, client version: playtime),
//! punishment and revoke rows without text (type, times, staff UUID, scope, plugin ids),
//! anti-cheat flags (check, level, detail, ping, TPS: no name is stored with them), timeline
//! rows with their non-personal properties (channel, client version, type, group), and every
//! aggregate (active days, cohorts, event rollups, server rollups, alert state). Audit rows
//! name players by UUID only. Notifications already delivered to a webhook are beyond reach.

use super::{Positioned, ReadModel};
use futures::future::BoxFuture;
use serde_json::json;
use shared::envelope::{RecordBatch, event_seq};
use sqlx::PgConnection;
use uuid::Uuid;

/// Player erasures: `erased_players`, and the scrub of every other model.
#[derive(Debug, Clone, Copy)]
pub struct Erasure;

impl ReadModel for Erasure {
    fn name(&self) -> &'static str {
        "erasure"
    }

    fn tables(&self) -> &'static [&'static str] {
        &["erased_players"]
    }

    /// Every model whose tables the scrub reads and rewrites.
    fn depends_on(&self) -> &'static [&'static str] {
        &[
            "timeline",
            "players",
            "sessions",
            "punishments",
            "chat",
            "notes",
            "appeals",
        ]
    }

    fn apply<'a>(
        &'a self,
        conn: &'a mut PgConnection,
        messages: &'a [&'a Positioned],
    ) -> BoxFuture<'a, Result<u64, sqlx::Error>> {
        Box::pin(apply(conn, messages))
    }
}

/// One erasure of a chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Erased {
    /// The account.
    pub(crate) account_id: Uuid,
    /// The player erased.
    pub(crate) player_uuid: Uuid,
}

/// The erasures in `messages`, in log order.
pub(crate) fn erasures<'a>(
    messages: impl IntoIterator<Item = &'a shared::envelope::LogMessage>,
) -> Vec<Erased> {
    messages
        .into_iter()
        .flat_map(|m| match &m.batch {
            RecordBatch::Erasure(records) => records
                .iter()
                .map(|r| Erased {
                    account_id: m.account_id,
                    player_uuid: r.record.player_uuid,
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// Scrubs and records every erasure of `messages`; returns the rows written.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let mut written = 0;
    for m in messages {
        let RecordBatch::Erasure(records) = &m.message.batch else {
            continue;
        };
        for (index, logged) in records.iter().enumerate() {
            let erasure = &logged.record;
            let account = m.message.account_id;
            written += scrub(conn, account, erasure.player_uuid).await?;
            // The first erasure of a player stays on record; a second one scrubbed nothing new.
            written += sqlx::query(
                "INSERT INTO erased_players (account_id, player_uuid, erased_at, erased_by, seq)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (account_id, player_uuid) DO NOTHING",
            )
            .bind(account)
            .bind(erasure.player_uuid)
            .bind(erasure.erased_at)
            .bind(author(&erasure.by))
            .bind(event_seq(m.stream_sequence, index))
            .execute(&mut *conn)
            .await?
            .rows_affected();
            tracing::info!(account_id = %account, player_uuid = %erasure.player_uuid, "player erased");
        }
    }
    Ok(written)
}

/// Who erased, as stored: a forged or broken record's author must not make PostgreSQL refuse
/// the erasure (a refused message is parked, and its scrub with it).
fn author(by: &str) -> &str {
    let length = by.chars().count();
    if (1..=64).contains(&length) && !by.contains('\0') {
        by
    } else {
        "unknown"
    }
}

/// Drops or blanks every personal field of `player` in `account`'s read models (see the
/// module docs); returns the rows changed. Idempotent.
pub(crate) async fn scrub(
    conn: &mut PgConnection,
    account: Uuid,
    player: Uuid,
) -> Result<u64, sqlx::Error> {
    // Read before the names go: payloads that name a staff member without a UUID.
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT n FROM (
             SELECT unnest(names || array_remove(ARRAY[username], NULL)) AS n
             FROM players WHERE account_id = $1 AND uuid = $2
             UNION ALL
             SELECT name FROM player_names WHERE account_id = $1 AND player_uuid = $2) names
         WHERE n <> ''",
    )
    .bind(account)
    .bind(player)
    .fetch_all(&mut *conn)
    .await?;
    let own_fields = json!({
        "player_name": null, "reason": null, "revoke_reason": null, "message": "",
    });
    let own_payload_fields = json!({
        "player_name": null, "reason": null, "revoke_reason": null, "properties": {},
    });
    let staff_fields = json!({ "staff_name": null });

    let statements: [(&str, Vec<Bind<'_>>); 17] = [
        (
            "UPDATE players SET username = NULL, names = '{}', linked_platform = NULL,
                 linked_external_id = NULL, linked_external_name = NULL
             WHERE account_id = $1 AND uuid = $2
               AND (username IS NOT NULL OR names <> '{}' OR linked_platform IS NOT NULL
                    OR linked_external_id IS NOT NULL OR linked_external_name IS NOT NULL)",
            vec![],
        ),
        (
            "DELETE FROM player_names WHERE account_id = $1 AND player_uuid = $2",
            vec![],
        ),
        (
            "UPDATE sessions SET ip_hash = NULL
             WHERE account_id = $1 AND player_uuid = $2 AND ip_hash IS NOT NULL",
            vec![],
        ),
        (
            "DELETE FROM chat_messages WHERE account_id = $1 AND player_uuid = $2",
            vec![],
        ),
        (
            "DELETE FROM notes WHERE account_id = $1 AND player_uuid = $2",
            vec![],
        ),
        (
            "DELETE FROM appeals WHERE account_id = $1 AND player_uuid = $2",
            vec![],
        ),
        // Revokes first: they find the player's punishments by id or by plugin id.
        (
            "UPDATE punishment_revokes r SET revoke_reason = NULL
             FROM punishments p
             WHERE p.account_id = $1 AND p.player_uuid = $2 AND r.account_id = $1
               AND r.revoke_reason IS NOT NULL
               AND (r.punishment_id = p.id
                    OR (p.external_id IS NOT NULL AND r.external_id = p.external_id
                        AND r.type = p.type
                        AND coalesce(r.source_plugin, '') = coalesce(p.source_plugin, '')))",
            vec![],
        ),
        (
            "UPDATE punishment_revokes SET revoked_by_name = NULL
             WHERE account_id = $1 AND revoked_by = $2 AND revoked_by_name IS NOT NULL",
            vec![],
        ),
        (
            "UPDATE punishments SET reason = NULL, revoke_reason = NULL
             WHERE account_id = $1 AND player_uuid = $2
               AND (reason IS NOT NULL OR revoke_reason IS NOT NULL)",
            vec![],
        ),
        (
            "UPDATE punishments SET staff_name = NULL
             WHERE account_id = $1 AND staff_uuid = $2 AND staff_name IS NOT NULL",
            vec![],
        ),
        (
            "UPDATE punishments SET revoked_by_name = NULL
             WHERE account_id = $1 AND revoked_by = $2 AND revoked_by_name IS NOT NULL",
            vec![],
        ),
        // The player's timeline: custom events keep name and time only; internal ones keep
        // what is not personal. Read through events_account_player_time_incl_idx.
        (
            "UPDATE events SET properties = CASE
                 WHEN is_internal AND json_typeof(properties) = 'object'
                     THEN erased_properties(properties, $3)
                 ELSE '{}'::json END
             WHERE account_id = $1 AND player_uuid = $2",
            vec![Bind::Json(&own_fields)],
        ),
        // What the player did as staff, on other players' timelines (punishments and rank
        // changes name their staff member by UUID in the properties).
        (
            "UPDATE events SET properties = erased_properties(properties, $3)
             WHERE account_id = $1 AND is_internal
               AND name IN ('punish_ban', 'punish_mute', 'punish_kick', 'punish_warning',
                            'punish_revoke', 'rank_change')
               AND json_typeof(properties) = 'object'
               AND properties ->> 'staff_uuid' = $2::text
               AND properties ->> 'staff_name' IS NOT NULL",
            vec![Bind::Json(&staff_fields)],
        ),
        // The Overview's copy of the newest of those events.
        (
            "UPDATE recent_events SET properties = CASE
                 WHEN json_typeof(properties) = 'object'
                     THEN erased_properties(properties, $3)
                 ELSE '{}'::json END
             WHERE account_id = $1 AND player_uuid = $2",
            vec![Bind::Json(&own_fields)],
        ),
        (
            "UPDATE recent_events SET properties = erased_properties(properties, $3)
             WHERE account_id = $1
               AND name IN ('punish_ban', 'punish_mute', 'punish_kick', 'punish_warning',
                            'punish_revoke', 'rank_change')
               AND json_typeof(properties) = 'object'
               AND properties ->> 'staff_uuid' = $2::text
               AND properties ->> 'staff_name' IS NOT NULL",
            vec![Bind::Json(&staff_fields)],
        ),
        (
            "UPDATE alert_deliveries SET payload =
                 erased_properties(payload::json, CASE WHEN payload ->> 'player_uuid' = $2::text
                     THEN $3 ELSE '{}'::jsonb END
                     || CASE WHEN payload ->> 'staff_uuid' = $2::text
                             OR (NOT payload ? 'staff_uuid' AND payload ->> 'staff_name' = ANY($4))
                         THEN $5 ELSE '{}'::jsonb END)::jsonb
             WHERE account_id = $1 AND jsonb_typeof(payload) = 'object'
               AND (payload ->> 'player_uuid' = $2::text OR payload ->> 'staff_uuid' = $2::text
                    OR (NOT payload ? 'staff_uuid' AND payload ->> 'staff_name' = ANY($4)))",
            vec![
                Bind::Json(&own_payload_fields),
                Bind::Names(&names),
                Bind::Json(&staff_fields),
            ],
        ),
        // A banned-alt notification about someone else lists the player by UUID and name.
        // The outbox has no index by account: erasures are rare, and it is pruned.
        (
            "UPDATE alert_deliveries SET payload = jsonb_set(payload, '{banned_alts}',
                 (SELECT jsonb_agg(CASE WHEN alt ->> 'uuid' = $2::text
                                        THEN alt || '{\"username\": null}' ELSE alt END
                                   ORDER BY n)
                  FROM jsonb_array_elements(payload -> 'banned_alts') WITH ORDINALITY AS a(alt, n)))
             WHERE account_id = $1 AND jsonb_typeof(payload -> 'banned_alts') = 'array'
               AND payload -> 'banned_alts' @> jsonb_build_array(jsonb_build_object('uuid', $2::text))",
            vec![],
        ),
    ];
    let mut changed = 0;
    for (sql, binds) in statements {
        let mut query = sqlx::query(sql).bind(account).bind(player);
        for bind in binds {
            query = match bind {
                Bind::Json(value) => query.bind(value),
                Bind::Names(names) => query.bind(names),
            };
        }
        changed += query.execute(&mut *conn).await?.rows_affected();
    }
    tracing::debug!(%account, %player, changed, "scrubbed an erased player");
    Ok(changed)
}

/// An extra parameter of a scrub statement (after the account and player).
enum Bind<'a> {
    Json(&'a serde_json::Value),
    Names(&'a [String]),
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use shared::envelope::{LogMessage, Logged};
    use shared::records::PlayerErasure;

    #[test]
    fn a_broken_author_is_stored_as_unknown_rather_than_refused() {
        assert_eq!(author("admin"), "admin");
        let member = Uuid::now_v7().to_string();
        assert_eq!(author(&member), member);
        for broken in ["", "a\0b", &"x".repeat(65)] {
            assert_eq!(author(broken), "unknown", "{broken:?}");
        }
    }

    #[test]
    fn the_erasures_of_a_chunk_are_found_in_log_order() {
        let account = Uuid::now_v7();
        let erasure = |player: u128| Logged {
            id: Uuid::now_v7(),
            record: PlayerErasure {
                player_uuid: Uuid::from_u128(player),
                erased_at: Utc::now(),
                by: "admin".into(),
            },
        };
        let messages = [
            LogMessage::new(
                account,
                Utc::now(),
                PlayerErasure::into_batch(vec![erasure(1), erasure(2)]),
            ),
            LogMessage::new(account, Utc::now(), RecordBatch::Chat(Vec::new())),
            LogMessage::new(
                account,
                Utc::now(),
                PlayerErasure::into_batch(vec![erasure(3)]),
            ),
        ];
        let found: Vec<Uuid> = erasures(&messages)
            .into_iter()
            .map(|e| e.player_uuid)
            .collect();
        assert_eq!(found, [1, 2, 3].map(Uuid::from_u128));
        assert!(erasures(&messages).iter().all(|e| e.account_id == account));
    }
}
