//! The account the walk reads: read models and timeline as the projector writes them.

use super::markers::Secrets;
use crate::read_models::{Dashboard, ago, keep_recent_activity, now, player, server};
use serde_json::json;
use uuid::Uuid;

/// What the account holds: a server, a player, and the seeded markers.
pub(super) struct World {
    pub(super) dash: Dashboard,
    pub(super) lobby: Uuid,
    pub(super) griefer: Uuid,
    /// The griefer's appeal of their ban.
    pub(super) appeal: Uuid,
    pub(super) stored: Secrets,
}

/// Seeds the read models and the timeline as the projector would have written them.
pub(super) async fn seed() -> anyhow::Result<World> {
    let dash = Dashboard::start().await?;
    let (pool, account, t) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, ago(t, 5)).await?;
    let griefer = player(pool, account, "Griefer", ago(t, 3600), ago(t, 60)).await?;
    let s = Secrets::new("stored");
    let command = format!("/tell bob {}", s.command.text);
    let punishment = Uuid::new_v4();
    sqlx::query(
        "WITH c AS (INSERT INTO chat_messages (account_id, id, player_uuid, server_id, \
             entry_type, message, channel, sent_at) \
           VALUES ($1, gen_random_uuid(), $2, $3, 'chat', $4, 'global', $10), \
                  ($1, gen_random_uuid(), $2, $3, 'command', $5, NULL, $10)), \
         p AS (INSERT INTO punishments (account_id, id, player_uuid, type, reason, staff_name, \
             server_id, issued_at, scope, source_plugin, revoked_at, revoked_by_name, \
             revoke_reason) \
           VALUES ($1, $11, $2, 'ban', $6, 'Ada', $3, $10, 'global', 'litebans', $10, 'Ada', \
                   $7)), \
         f AS (INSERT INTO anticheat_flags (account_id, id, player_uuid, server_id, check_name, \
             check_type, violation_level, detail, source_plugin, is_experimental, ping_ms, tps, \
             flagged_at) \
           VALUES ($1, gen_random_uuid(), $2, $3, $8, 'A', 4.5, $8, 'grim', false, 42, 19.9, \
                   $10)) \
         INSERT INTO notes (account_id, id, player_uuid, text, evidence, author_member_id, \
             author_name, written_at, seq) \
           VALUES ($1, gen_random_uuid(), $2, $9, '[]', $1, 'Mod', $10, 1)",
    )
    .bind(account)
    .bind(griefer)
    .bind(lobby)
    .bind(&s.chat.text)
    .bind(&command)
    .bind(&s.reason.text)
    .bind(&s.revoke.text)
    .bind(&s.flag.text)
    .bind(&s.note.text)
    .bind(ago(t, 600))
    .bind(punishment)
    .execute(pool)
    .await?;
    // The griefer's appeal of the ban, as the projector stores one.
    let appeal = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO appeals (account_id, id, punishment_id, player_uuid, message, status, \
             submitted_at, updated_at, seq) \
         VALUES ($1, $2, $3, $4, 'It was not me, I promise.', 'new', $5, $5, 1)",
    )
    .bind(account)
    .bind(appeal)
    .bind(punishment)
    .bind(griefer)
    .bind(ago(t, 300))
    .execute(pool)
    .await?;
    // The timeline rows of the same records, and a custom event for funnels and trends.
    let events = [
        (
            "chat_message",
            json!({"message": s.chat.text, "channel": "global", "player_name": "Griefer"}),
        ),
        (
            "chat_command",
            json!({"message": command, "channel": null, "player_name": "Griefer"}),
        ),
        (
            "punish_ban",
            json!({"type": "ban", "action": "issue", "reason": s.reason.text,
                   "staff_name": "Ada", "player_name": "Griefer"}),
        ),
        (
            "punish_revoke",
            json!({"type": "ban", "action": "revoke", "punishment_id": punishment,
                   "revoke_reason": s.revoke.text, "staff_name": "Ada"}),
        ),
        ("quest_started", json!({"tag": "open"})),
    ];
    for (index, (name, properties)) in events.iter().enumerate() {
        let seq = 1000 * (i64::try_from(index)? + 1);
        sqlx::query(
            "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, \
               server_id, properties, occurred_at, received_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8::json, $9, $9)",
        )
        .bind(account)
        .bind(Uuid::now_v7())
        .bind(seq)
        .bind(name)
        .bind(!name.starts_with("quest"))
        .bind(griefer)
        .bind(lobby)
        .bind(properties.to_string())
        .bind(ago(t, 500 - i64::try_from(index)?))
        .execute(pool)
        .await?;
    }
    keep_recent_activity(pool, account).await?;
    Ok(World {
        dash,
        lobby,
        griefer,
        appeal,
        stored: s,
    })
}
