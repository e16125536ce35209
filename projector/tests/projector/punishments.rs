//! Punishments: issued once, ended by the earliest revoke that names them, whatever the order.

use crate::harness::{Harness, logged, logged_as};
use chrono::{DateTime, Utc};
use shared::envelope::Logged;
use shared::records::Punishment;
use uuid::Uuid;

/// `(id, type, revoked_at, revoked_by, revoked_by_name, revoke_reason)`.
type Revocation = (
    Uuid,
    String,
    Option<DateTime<Utc>>,
    Option<Uuid>,
    Option<String>,
    Option<String>,
);

struct Ids {
    account: Uuid,
    player: Uuid,
    server: Uuid,
    staff: Uuid,
}

impl Ids {
    fn new() -> Ids {
        Ids {
            account: Uuid::now_v7(),
            player: Uuid::now_v7(),
            server: Uuid::now_v7(),
            staff: Uuid::now_v7(),
        }
    }

    /// An issue record; `extra` is more JSON fields, starting with a comma.
    fn issue(&self, kind: &str, extra: &str) -> Logged<Punishment> {
        logged(&format!(
            r#"{{"server_id":"{}","player_uuid":"{}","type":"{kind}",
                "issued_at":"2025-03-01T10:00:00Z"{extra}}}"#,
            self.server, self.player
        ))
    }

    /// A revoke record at `at` by the staff member, with `reason`; `names` picks the target.
    fn revoke(&self, kind: &str, at: &str, reason: &str, names: &str) -> Logged<Punishment> {
        logged(&format!(
            r#"{{"server_id":"{}","player_uuid":"{}","type":"{kind}","action":"revoke",
                "issued_at":"{at}","staff_uuid":"{}","staff_name":"Alex",
                "revoke_reason":"{reason}"{names}}}"#,
            self.server, self.player, self.staff
        ))
    }
}

async fn revocations(h: &Harness, account: Uuid) -> anyhow::Result<Vec<Revocation>> {
    Ok(sqlx::query_as(
        "SELECT id, type, revoked_at, revoked_by, revoked_by_name, revoke_reason
         FROM punishments WHERE account_id = $1 ORDER BY issued_at, id",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?)
}

fn at(text: &str) -> Option<DateTime<Utc>> {
    text.parse().ok()
}

#[tokio::test]
async fn an_issue_is_stored_with_its_fields_and_defaults() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let ids = Ids::new();
    let ban = ids.issue(
        "ban",
        &format!(
            r#","reason":"x-ray","staff_uuid":"{}","staff_name":"Alex","scope":"global",
                "expires_at":"2025-03-08T10:00:00Z","source_plugin":"litebans","external_id":"1""#,
            ids.staff
        ),
    );
    // A kick never expires, whatever the record says; ip_based defaults to false.
    let kick = ids.issue(
        "kick",
        r#","expires_at":"2025-03-08T10:00:00Z","ip_based":true"#,
    );
    h.publish(ids.account, Utc::now(), vec![ban.clone(), kick.clone()])
        .await?;
    h.caught_up().await?;

    type Row = (
        Uuid,
        Uuid,
        String,
        Option<String>,
        Option<Uuid>,
        Option<String>,
        Option<Uuid>,
        DateTime<Utc>,
        Option<DateTime<Utc>>,
        bool,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<DateTime<Utc>>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT id, player_uuid, type, reason, staff_uuid, staff_name, server_id, issued_at,
                expires_at, ip_based, scope, source_plugin, external_id, revoked_at
         FROM punishments WHERE account_id = $1 ORDER BY type",
    )
    .bind(ids.account)
    .fetch_all(h.pool())
    .await?;
    assert_eq!(rows.len(), 2);
    let ban_row = &rows[0];
    assert_eq!(ban_row.0, ban.id);
    assert_eq!(ban_row.1, ids.player);
    assert_eq!(ban_row.2, "ban");
    assert_eq!(ban_row.3.as_deref(), Some("x-ray"));
    assert_eq!(
        (ban_row.4, ban_row.5.as_deref()),
        (Some(ids.staff), Some("Alex"))
    );
    assert_eq!(ban_row.6, Some(ids.server));
    assert_eq!(Some(ban_row.7), at("2025-03-01T10:00:00Z"));
    assert_eq!(ban_row.8, at("2025-03-08T10:00:00Z"));
    assert!(!ban_row.9, "ip_based defaults to false");
    assert_eq!(ban_row.10.as_deref(), Some("global"));
    assert_eq!(ban_row.11.as_deref(), Some("litebans"));
    assert_eq!(ban_row.12.as_deref(), Some("1"));
    assert_eq!(ban_row.13, None);
    let kick_row = &rows[1];
    assert_eq!((kick_row.0, kick_row.2.as_str()), (kick.id, "kick"));
    assert_eq!(kick_row.8, None, "a kick never expires");
    assert!(kick_row.9);
    Ok(())
}

#[tokio::test]
async fn revokes_end_punishments_by_external_id_or_punishment_id() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let ids = Ids::new();
    let ban = ids.issue("ban", r#","source_plugin":"litebans","external_id":"7""#);
    let mute = ids.issue("mute", "");
    // The ban's revoke shares its log message (issues apply first); the mute's comes later.
    let ban_revoke = ids.revoke(
        "ban",
        "2025-03-01T11:00:00Z",
        "appeal",
        r#","source_plugin":"litebans","external_id":"7""#,
    );
    h.publish(
        ids.account,
        Utc::now(),
        vec![ban.clone(), mute.clone(), ban_revoke],
    )
    .await?;
    let mute_revoke = ids.revoke(
        "mute",
        "2025-03-01T12:00:00Z",
        "served",
        &format!(r#","punishment_id":"{}""#, mute.id),
    );
    h.publish(ids.account, Utc::now(), vec![mute_revoke])
        .await?;
    h.caught_up().await?;

    let staff = (Some(ids.staff), Some("Alex".to_owned()));
    let mut rows = revocations(&h, ids.account).await?;
    rows.sort_by_key(|r| r.1.clone());
    assert_eq!(
        rows,
        [
            (
                ban.id,
                "ban".to_owned(),
                at("2025-03-01T11:00:00Z"),
                staff.0,
                staff.1.clone(),
                Some("appeal".to_owned())
            ),
            (
                mute.id,
                "mute".to_owned(),
                at("2025-03-01T12:00:00Z"),
                staff.0,
                staff.1,
                Some("served".to_owned())
            ),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn a_second_revoke_keeps_the_first() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let ids = Ids::new();
    let ban = ids.issue("ban", r#","external_id":"3""#);
    let names = r#","external_id":"3""#;
    h.publish(ids.account, Utc::now(), vec![ban.clone()])
        .await?;
    h.publish(
        ids.account,
        Utc::now(),
        vec![ids.revoke("ban", "2025-03-01T11:00:00Z", "first", names)],
    )
    .await?;
    h.publish(
        ids.account,
        Utc::now(),
        vec![
            ids.revoke("ban", "2025-03-01T10:30:00Z", "second", names),
            ids.revoke(
                "ban",
                "2025-03-01T12:00:00Z",
                "third",
                &format!(r#","punishment_id":"{}""#, ban.id),
            ),
        ],
    )
    .await?;
    h.caught_up().await?;

    let rows = revocations(&h, ids.account).await?;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].2, at("2025-03-01T11:00:00Z"));
    assert_eq!(rows[0].5.as_deref(), Some("first"));
    Ok(())
}

#[tokio::test]
async fn a_revoke_without_its_issue_changes_nothing_until_the_issue_arrives() -> anyhow::Result<()>
{
    let h = Harness::start().await?;
    let ids = Ids::new();
    let early = ids.revoke(
        "warning",
        "2025-03-01T11:00:00Z",
        "early",
        r#","external_id":"w1""#,
    );
    let orphan = ids.revoke(
        "ban",
        "2025-03-01T11:00:00Z",
        "orphan",
        r#","external_id":"none""#,
    );
    let seq = h
        .publish(ids.account, Utc::now(), vec![early, orphan])
        .await?;
    h.caught_up_to(seq).await?;
    assert!(
        revocations(&h, ids.account).await?.is_empty(),
        "no row is made up"
    );

    // The issue logged after its revoke (a retried request) is ended by it on arrival.
    let warning = ids.issue("warning", r#","external_id":"w1""#);
    h.publish(ids.account, Utc::now(), vec![warning.clone()])
        .await?;
    h.caught_up().await?;
    let rows = revocations(&h, ids.account).await?;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, warning.id);
    assert_eq!(rows[0].2, at("2025-03-01T11:00:00Z"));
    assert_eq!(rows[0].5.as_deref(), Some("early"));
    Ok(())
}

#[tokio::test]
async fn one_plugin_punishment_under_two_record_ids_is_stored_once() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let ids = Ids::new();
    let names = r#","source_plugin":"litebans","external_id":"42""#;
    let first = ids.issue("ban", &format!(r#","reason":"first"{names}"#));
    let copy = ids.issue("ban", &format!(r#","reason":"copy"{names}"#));
    let again = ids.issue("ban", &format!(r#","reason":"again"{names}"#));
    // The same record id twice is stored once, too.
    let retry = logged_as::<Punishment>(
        first.id,
        &serde_json::to_string(&ids.issue("ban", r#","reason":"retry""#).record)?,
    );
    // LiteBans numbers each type on its own: mute 42 is another punishment.
    let mute = ids.issue("mute", names);
    // And without a source plugin, the same external id is yet another one.
    let bare = ids.issue("ban", r#","external_id":"42""#);
    h.publish(ids.account, Utc::now(), vec![first.clone(), copy])
        .await?;
    h.publish(
        ids.account,
        Utc::now(),
        vec![again, retry, mute.clone(), bare.clone()],
    )
    .await?;
    h.caught_up().await?;

    let mut rows: Vec<(Uuid, Option<String>)> =
        sqlx::query_as("SELECT id, reason FROM punishments WHERE account_id = $1")
            .bind(ids.account)
            .fetch_all(h.pool())
            .await?;
    rows.sort();
    let mut expected = vec![
        (first.id, Some("first".to_owned())),
        (mute.id, None),
        (bare.id, None),
    ];
    expected.sort();
    assert_eq!(rows, expected);
    Ok(())
}

#[tokio::test]
async fn two_accounts_punishments_stay_separated() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (one, two) = (Ids::new(), Ids::new());
    let names = r#","source_plugin":"litebans","external_id":"5""#;
    // The same plugin id, and even the same record id, under two accounts: two punishments.
    let ban_one = one.issue("ban", names);
    let ban_two = logged_as::<Punishment>(
        ban_one.id,
        &serde_json::to_string(&two.issue("ban", names).record)?,
    );
    h.publish(one.account, Utc::now(), vec![ban_one.clone()])
        .await?;
    h.publish(two.account, Utc::now(), vec![ban_two.clone()])
        .await?;
    // A revoke in account one, by external id and by punishment id, leaves account two alone.
    h.publish(
        one.account,
        Utc::now(),
        vec![
            one.revoke("ban", "2025-03-01T11:00:00Z", "one", names),
            one.revoke(
                "ban",
                "2025-03-01T11:00:00Z",
                "one",
                &format!(r#","punishment_id":"{}""#, ban_one.id),
            ),
        ],
    )
    .await?;
    h.caught_up().await?;

    let rows_one = revocations(&h, one.account).await?;
    let rows_two = revocations(&h, two.account).await?;
    assert_eq!(rows_one.len(), 1);
    assert_eq!(rows_one[0].5.as_deref(), Some("one"));
    assert_eq!(rows_two.len(), 1);
    assert_eq!(rows_two[0].0, ban_one.id);
    assert_eq!(rows_two[0].2, None, "account two's ban is untouched");
    let players: Vec<Uuid> =
        sqlx::query_scalar("SELECT player_uuid FROM punishments WHERE account_id = $1")
            .bind(two.account)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(players, [two.player]);
    Ok(())
}
