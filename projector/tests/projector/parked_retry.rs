//! `projector parked retry`: a message parked because PostgreSQL refused it is applied once
//! the cause is fixed, and stays parked (with its new reason) while it is not.

use crate::harness::{Harness, custom_event, logged};
use crate::parking::{chat, parked, parked_for};
use chrono::Utc;
use projector::parked::{self, Retried, Selection};
use shared::records::{CustomEvent, RecordKind};
use uuid::Uuid;

/// A rule of this database (standing in for a bug fixed later) that refuses the chat line
/// `forbidden`, in the chat model only.
async fn forbid_chat_line(pool: &sqlx::PgPool) -> anyhow::Result<()> {
    sqlx::query(
        "ALTER TABLE chat_messages ADD CONSTRAINT not_forbidden CHECK (message <> 'forbidden')",
    )
    .execute(pool)
    .await?;
    Ok(())
}

#[tokio::test]
async fn a_refused_message_is_applied_after_the_fix_and_the_others_stay_parked()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let keyring = h.keyring().await?;
    let (account, server, player) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    forbid_chat_line(h.pool()).await?;
    let refused = h
        .publish(account, Utc::now(), vec![chat(server, player, "forbidden")])
        .await?;
    let nul = h
        .publish(account, Utc::now(), vec![chat(server, player, "\u{0}")])
        .await?;
    let subject =
        h.config
            .common
            .event_log
            .subjects()
            .for_records(account, RecordKind::Custom, Some("x"));
    let garbage = h.publish_raw(subject, b"not json".to_vec()).await?;
    let last = h
        .publish(
            account,
            Utc::now(),
            vec![logged::<CustomEvent>(&custom_event(player, "after", "{}"))],
        )
        .await?;
    h.caught_up_to(last).await?;
    let before = parked(h.pool()).await?;
    let states: Vec<_> = before.iter().map(|p| (p.0, p.2.as_deref())).collect();
    assert_eq!(
        states,
        [
            (refused as i64, Some("23514")),
            (nul as i64, Some("22021")),
            (garbage as i64, None)
        ]
    );

    // Not fixed yet: the retry is refused again and the message stays parked.
    let results = parked::retry(
        h.pool(),
        &keyring,
        &h.config.common.event_log.subjects(),
        Selection::One(refused),
    )
    .await?;
    assert!(
        matches!(&results[..], [(s, Retried::StillRefused(r))] if *s == refused && r.starts_with("sqlstate_23514")),
        "{results:?}"
    );

    sqlx::query("ALTER TABLE chat_messages DROP CONSTRAINT not_forbidden")
        .execute(h.pool())
        .await?;
    let results = parked::retry(
        h.pool(),
        &keyring,
        &h.config.common.event_log.subjects(),
        Selection::All,
    )
    .await?;
    assert_eq!(results[0], (refused, Retried::Applied));
    assert!(
        matches!(&results[1], (s, Retried::StillRefused(r)) if *s == nul && r.starts_with("sqlstate_22021")),
        "{results:?}"
    );
    assert!(
        matches!(&results[2], (s, Retried::Unreadable(_)) if *s == garbage),
        "{results:?}"
    );

    let lines: Vec<String> =
        sqlx::query_scalar("SELECT message FROM chat_messages WHERE account_id = $1")
            .bind(account)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(lines, ["forbidden"]);
    // Players never refused it and kept the sighting all along.
    let seen: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM players WHERE account_id = $1 AND uuid = $2)",
    )
    .bind(account)
    .bind(player)
    .fetch_one(h.pool())
    .await?;
    assert!(seen);
    let left: Vec<i64> = parked(h.pool()).await?.iter().map(|p| p.0).collect();
    assert_eq!(left, [nul as i64, garbage as i64]);
    // Retrying what is no longer parked changes nothing.
    let again = parked::retry(
        h.pool(),
        &keyring,
        &h.config.common.event_log.subjects(),
        Selection::One(refused),
    )
    .await?;
    assert_eq!(again, [(refused, Retried::NotParked)]);
    Ok(())
}

#[tokio::test]
async fn a_message_one_model_refused_is_parked_and_retried_for_that_model_only()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let keyring = h.keyring().await?;
    let (account, server, player) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    forbid_chat_line(h.pool()).await?;
    let refused = h
        .publish(account, Utc::now(), vec![chat(server, player, "forbidden")])
        .await?;
    h.caught_up_to(refused).await?;
    assert_eq!(
        parked_for(h.pool()).await?,
        [(refused as i64, "chat".to_owned())]
    );
    // The other models kept it: the player was seen, the line is on the timeline.
    let seen: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM players WHERE account_id = $1 AND uuid = $2)",
    )
    .bind(account)
    .bind(player)
    .fetch_one(h.pool())
    .await?;
    assert!(seen, "players dropped a message only chat refused");

    // From now on any write to a model that kept it is refused: a retry that re-applied it
    // there would stay parked instead of being applied.
    sqlx::raw_sql(
        "CREATE FUNCTION refuse_writes() RETURNS trigger LANGUAGE plpgsql AS
             $$ BEGIN RAISE EXCEPTION 'written again' USING ERRCODE = 'check_violation'; END $$;
         CREATE TRIGGER refuse_writes BEFORE INSERT OR UPDATE OR DELETE ON players
             FOR EACH STATEMENT EXECUTE FUNCTION refuse_writes();
         CREATE TRIGGER refuse_writes BEFORE INSERT OR UPDATE OR DELETE ON events
             FOR EACH STATEMENT EXECUTE FUNCTION refuse_writes();
         ALTER TABLE chat_messages DROP CONSTRAINT not_forbidden;",
    )
    .execute(h.pool())
    .await?;
    let results = parked::retry(
        h.pool(),
        &keyring,
        &h.config.common.event_log.subjects(),
        Selection::All,
    )
    .await?;
    assert_eq!(results, [(refused, Retried::Applied)]);
    let lines: Vec<String> =
        sqlx::query_scalar("SELECT message FROM chat_messages WHERE account_id = $1")
            .bind(account)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(lines, ["forbidden"]);
    assert!(parked(h.pool()).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn the_cli_lists_and_retries_parked_messages() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, server, player) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let nul = h
        .publish(account, Utc::now(), vec![chat(server, player, "\u{0}")])
        .await?;
    h.caught_up_to(nul).await?;

    let cli = |args: &[&str]| {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_projector"));
        command
            .args(args)
            .env("DATABASE_URL", &h.db.url)
            .env("RUST_LOG", "warn")
            .kill_on_drop(true);
        // A retry opens the sealed payloads: it reads the log's settings and master key too.
        for name in [
            "NATS_URL",
            "PRIVACY_MASTER_KEY",
            "EVENT_STREAM",
            "SUBJECT_PREFIX",
            "KEY_BUCKET",
            "RATE_BUCKET",
            "PRIVACY_BUCKET",
        ] {
            command.env(name, h.vars.get(name).unwrap_or_default());
        }
        command.output()
    };
    let listed = cli(&["parked", "list"]).await?;
    assert!(listed.status.success(), "{listed:?}");
    let stdout = String::from_utf8(listed.stdout)?;
    assert!(stdout.starts_with(&format!("{nul}\t")), "{stdout}");
    assert!(stdout.contains("\tchat\t22021\t"), "{stdout}");

    let retried = cli(&["parked", "retry", "--sequence", &nul.to_string()]).await?;
    assert!(
        !retried.status.success(),
        "a message still refused must fail the command"
    );
    let stdout = String::from_utf8(retried.stdout)?;
    assert!(stdout.contains("still parked: sqlstate_22021"), "{stdout}");

    let neither = cli(&["parked", "retry"]).await?;
    assert!(!neither.status.success(), "--sequence or --all is required");
    Ok(())
}
