//! The erasure projection over records logged in clear (as before sealing existed,
//! or with `PRIVACY_ENCRYPTION=off`): the crypto-shredding cannot reach those, so the
//! `erasure` record's scrub is all that removes them, live and again in a rebuild. Also what
//! only the scrub reaches: the notifier's outbox payloads.

use crate::harness::{Harness, eventually, logged};
use chrono::Utc;
use projector::projections;
use projector::rebuild::{RebuildOptions, rebuild};
use serde_json::json;
use shared::envelope::{LogMessage, Logged};
use shared::records::{
    AccountLink, Appeal, AppealStep, ChatEntry, CustomEvent, Note, NoteAuthor, PlayerErasure,
    Punishment, RankChange, Session,
};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

const SERVER: Uuid = Uuid::from_u128(0x5e);
const EVE: Uuid = Uuid::from_u128(0xe7e);
const KIM: Uuid = Uuid::from_u128(0xc1);
const HASH: &str = "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12";

const EVES: [&str; 8] = [
    "EveErased",
    "eve secret words",
    "eve ban reason",
    "eve-link-id",
    "eve@mail.test",
    "eve note text",
    "EveOldName",
    "eve appeal words",
];
const KIMS: [&str; 6] = [
    "KimKept",
    "kim hello words",
    "kim warn reason",
    "kim@mail.test",
    "kim note text",
    "kim appeal words",
];

/// Every row of every read model and of the outbox, as text, for the account.
async fn all_rows(pool: &PgPool, account: Uuid) -> anyhow::Result<Vec<(String, String)>> {
    let mut rows = Vec::new();
    for table in projections::tables().chain(["alert_deliveries"]) {
        let texts: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT to_jsonb(t)::text FROM {table} t WHERE t.account_id = $1"
        ))
        .bind(account)
        .fetch_all(pool)
        .await?;
        rows.extend(texts.into_iter().map(|text| (table.to_owned(), text)));
    }
    Ok(rows)
}

fn check(rows: &[(String, String)], when: &str) {
    for (table, text) in rows {
        for value in EVES {
            assert!(
                !text.contains(value),
                "{when}: {table} holds {value:?}: {text}"
            );
        }
    }
    for value in KIMS {
        assert!(
            rows.iter().any(|(_, text)| text.contains(value)),
            "{when}: {value:?} of the kept player is gone"
        );
    }
    let kims_hash = rows.iter().any(|(table, text)| {
        table == "sessions" && text.contains(HASH) && text.contains(&KIM.to_string())
    });
    assert!(kims_hash, "{when}: Kim's IP hash is gone");
    let eves_hash = rows.iter().any(|(table, text)| {
        table == "sessions" && text.contains(HASH) && text.contains(&EVE.to_string())
    });
    assert!(!eves_hash, "{when}: Eve's IP hash is still stored");
}

/// Outbox rows as the notifier writes them: about Eve, naming her as staff (by UUID, and by
/// name only in a rank change), listing her as a banned alt; and one about Kim alone.
async fn outbox(pool: &PgPool, account: Uuid) -> anyhow::Result<()> {
    sqlx::query("INSERT INTO accounts (id, name) VALUES ($1, 'erasure')")
        .bind(account)
        .execute(pool)
        .await?;
    let destination = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO alert_destinations (id, account_id, kind, name, url)
         VALUES ($1, $2, 'discord', 'mods', 'https://discord.example/api/webhooks/1/x')",
    )
    .bind(destination)
    .bind(account)
    .execute(pool)
    .await?;
    let payloads = [
        json!({"player_uuid": EVE, "player_name": "EveErased", "reason": "eve ban reason",
               "staff_uuid": KIM, "staff_name": "KimKept"}),
        json!({"player_uuid": KIM, "player_name": "KimKept", "reason": "kim warn reason",
               "staff_uuid": EVE, "staff_name": "EveErased"}),
        json!({"player_uuid": KIM, "player_name": "KimKept", "group": "helper",
               "staff_name": "EveOldName"}),
        json!({"player_uuid": KIM, "player_name": "KimKept",
               "banned_alts": [{"uuid": EVE, "username": "EveErased"}]}),
        json!({"player_uuid": EVE, "name": "shop", "properties": {"email": "eve@mail.test"}}),
    ];
    for payload in payloads {
        sqlx::query(
            "INSERT INTO alert_deliveries (id, account_id, destination_id, event_type, payload,
                                           occurred_at)
             VALUES ($1, $2, $3, 'punishment.issued', $4, now())",
        )
        .bind(Uuid::now_v7())
        .bind(account)
        .bind(destination)
        .bind(payload)
        .execute(pool)
        .await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erasure_scrubs_what_was_logged_in_clear_live_and_in_a_rebuild() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let account = Uuid::now_v7();
    let at = Utc::now() - chrono::Duration::minutes(10);
    let t = |minutes: i64| (at + chrono::Duration::minutes(minutes)).to_rfc3339();
    outbox(h.pool(), account).await?;

    let sessions: Vec<Logged<Session>> = [
        (EVE, "EveOldName", 0),
        (EVE, "EveErased", 1),
        (KIM, "KimKept", 1),
    ]
    .into_iter()
    .map(|(player, name, minute)| {
        logged(&format!(
            r#"{{"server_id":"{SERVER}","player_uuid":"{player}","player_name":"{name}",
                    "event":"join","ip_hash":"{HASH}","at":"{}"}}"#,
            t(minute)
        ))
    })
    .collect();
    h.publish(account, at, sessions).await?;
    let chat: Vec<Logged<ChatEntry>> = [
        (EVE, "EveErased", "eve secret words"),
        (KIM, "KimKept", "kim hello words"),
    ]
    .into_iter()
    .map(|(player, name, text)| {
        logged(&format!(
            r#"{{"server_id":"{SERVER}","player_uuid":"{player}","player_name":"{name}",
                    "entry_type":"chat","message":"{text}","sent_at":"{}"}}"#,
            t(2)
        ))
    })
    .collect();
    h.publish(account, at, chat).await?;
    let punishments: Vec<Logged<Punishment>> = vec![
        logged(&format!(
            r#"{{"server_id":"{SERVER}","player_uuid":"{EVE}","player_name":"EveErased",
                "type":"ban","reason":"eve ban reason","staff_uuid":"{KIM}",
                "staff_name":"KimKept","issued_at":"{}"}}"#,
            t(3)
        )),
        logged(&format!(
            r#"{{"server_id":"{SERVER}","player_uuid":"{KIM}","player_name":"KimKept",
                "type":"warning","reason":"kim warn reason","staff_uuid":"{EVE}",
                "staff_name":"EveErased","issued_at":"{}"}}"#,
            t(3)
        )),
    ];
    h.publish(account, at, punishments).await?;
    let rank: Vec<Logged<RankChange>> = vec![logged(&format!(
        r#"{{"player_uuid":"{KIM}","player_name":"KimKept","action":"add","group":"helper",
            "staff_uuid":"{EVE}","staff_name":"EveErased","changed_at":"{}"}}"#,
        t(4)
    ))];
    h.publish(account, at, rank).await?;
    let link: Vec<Logged<AccountLink>> = vec![logged(&format!(
        r#"{{"player_uuid":"{EVE}","platform":"discord","external_id":"eve-link-id",
            "external_name":"EveErased","action":"link","at":"{}"}}"#,
        t(4)
    ))];
    h.publish(account, at, link).await?;
    for (player, email) in [(EVE, "eve@mail.test"), (KIM, "kim@mail.test")] {
        let event: Vec<Logged<CustomEvent>> = vec![logged(&format!(
            r#"{{"player_uuid":"{player}","name":"shop","occurred_at":"{}",
                "properties":{{"email":"{email}","item":"sword"}}}}"#,
            t(5)
        ))];
        h.publish(account, at, event).await?;
    }
    let notes = [(EVE, "eve note text"), (KIM, "kim note text")]
        .into_iter()
        .map(|(player, text)| Logged {
            id: Uuid::now_v7(),
            record: Note {
                player_uuid: player,
                punishment_id: None,
                text: text.into(),
                evidence: vec![],
                author: NoteAuthor {
                    member_id: Uuid::from_u128(1),
                    name: "Mia".into(),
                },
                written_at: at,
            },
        })
        .collect();
    h.publish_notes(account, at, notes).await?;
    let appeals = [(EVE, "eve appeal words"), (KIM, "kim appeal words")]
        .into_iter()
        .map(|(player, message)| Logged {
            id: Uuid::now_v7(),
            record: Appeal {
                id: Uuid::now_v7(),
                step: AppealStep::Submitted,
                punishment_id: Uuid::now_v7(),
                player_uuid: player,
                message: Some(message.into()),
                reply: None,
                by: None,
                revoke_action: None,
                at,
            },
        })
        .collect();
    h.publish_dashboard(account, at, Appeal::into_batch(appeals))
        .await?;
    h.caught_up().await?;
    let before = all_rows(h.pool(), account).await?;
    for value in EVES.iter().chain(KIMS.iter()) {
        assert!(
            before.iter().any(|(_, text)| text.contains(value)),
            "{value:?} was never stored"
        );
    }

    let erasure = PlayerErasure {
        player_uuid: EVE,
        erased_at: Utc::now(),
        by: "admin".into(),
    };
    let subjects = h.config.common.event_log.subjects();
    let message = LogMessage::new(
        account,
        Utc::now(),
        PlayerErasure::into_batch(vec![Logged {
            id: Uuid::now_v7(),
            record: erasure,
        }]),
    );
    h.publish_raw(
        subjects.for_records(account, PlayerErasure::KIND, None),
        message.encode(),
    )
    .await?;
    h.caught_up().await?;
    let erased: Option<String> = sqlx::query_scalar(
        "SELECT erased_by FROM erased_players WHERE account_id = $1 AND player_uuid = $2",
    )
    .bind(account)
    .bind(EVE)
    .fetch_optional(h.pool())
    .await?;
    assert_eq!(erased.as_deref(), Some("admin"));
    check(&all_rows(h.pool(), account).await?, "after the erasure");
    // The aggregates stay: Eve's sessions, punishments and active days are still counted.
    let (sessions, punishments): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM sessions WHERE account_id = $1 AND player_uuid = $2),
                (SELECT count(*) FROM punishments WHERE account_id = $1 AND player_uuid = $2)",
    )
    .bind(account)
    .bind(EVE)
    .fetch_one(h.pool())
    .await?;
    assert_eq!((sessions, punishments), (2, 1));

    // A rebuild replays the clear records, then the erasure at its place: scrubbed again.
    rebuild(
        &h.config,
        &RebuildOptions::default(),
        CancellationToken::new(),
    )
    .await?;
    eventually("the rebuilt erasure", || async {
        let found: Option<i64> = sqlx::query_scalar(
            "SELECT seq FROM erased_players WHERE account_id = $1 AND player_uuid = $2",
        )
        .bind(account)
        .bind(EVE)
        .fetch_optional(h.pool())
        .await?;
        Ok(found.map(drop))
    })
    .await?;
    check(&all_rows(h.pool(), account).await?, "after a rebuild");
    Ok(())
}
