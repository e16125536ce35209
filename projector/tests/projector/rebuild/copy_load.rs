//! A rebuild's binary `COPY` of append-only rows (`ReadModel::apply_bulk`: chat, timeline)
//! ends with exactly the rows the statements store (`ReadModel::apply`): with ids the log
//! repeats (the `COPY` is refused and the statements keep the first), and a message
//! PostgreSQL refuses is refused the same way, with the same error, so it parks the same.

use crate::harness::{logged, logged_as};
use crate::parking::chat;
use crate::workload::contents;
use chrono::{TimeZone, Utc};
use projector::projections::{BulkState, Positioned, ReadModel, chat::Chat, timeline::Timeline};
use shared::envelope::{LogMessage, RecordBatch};
use shared::records::{CustomEvent, Session};
use sqlx::{Connection, PgPool};
use test_support::TestDb;
use uuid::Uuid;

/// A fresh, migrated database.
pub(super) async fn database() -> anyhow::Result<TestDb> {
    let db = TestDb::create().await?;
    projector::MIGRATOR.run(&db.pool).await?;
    Ok(db)
}

/// Applies `messages` to `model` in one transaction, by its statements or in bulk (keeping
/// what it keeps in `bulk`); returns the SQLSTATE PostgreSQL refused them with, if it did
/// (nothing is then kept).
pub(super) async fn apply(
    pool: &PgPool,
    model: &'static dyn ReadModel,
    messages: &[Positioned],
    bulk: Option<&BulkState>,
) -> anyhow::Result<Option<String>> {
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin().await?;
    let messages: Vec<&Positioned> = messages.iter().collect();
    let applied = match bulk {
        Some(state) => model.apply_bulk(&mut tx, &messages, state).await,
        None => model.apply(&mut tx, &messages).await,
    };
    match applied {
        Ok(_) => {
            tx.commit().await?;
            Ok(None)
        }
        Err(sqlx::Error::Database(error)) => Ok(Some(format!(
            "{}: {}",
            error.code().unwrap_or_default(),
            error.message()
        ))),
        Err(error) => Err(error.into()),
    }
}

/// Log messages of every kind the two bulk folds store, with a repeated id in `repeat`.
fn messages(account: Uuid, repeat: bool) -> Vec<Positioned> {
    let (server, players) = (Uuid::now_v7(), [Uuid::now_v7(), Uuid::now_v7()]);
    let received = Utc
        .with_ymd_and_hms(2026, 10, 5, 10, 59, 59)
        .single()
        .unwrap_or_else(Utc::now);
    // Properties kept as logged (key order, 1.10); two events in one hour, one in the next.
    let event = |player: Uuid, at: &str| {
        format!(
            r#"{{"player_uuid":"{player}","name":"quest","properties":{{"b":1.10,"a":[1,2]}},
                "occurred_at":"{at}"}}"#
        )
    };
    let retried =
        logged_as::<CustomEvent>(Uuid::now_v7(), &event(players[0], "2026-10-05T10:15:00Z"));
    let mut chat_lines = vec![
        chat(server, players[0], "hello"),
        chat(server, players[1], "gg"),
    ];
    chat_lines[1].record.channel = Some("global".to_owned());
    let said_twice = chat(server, players[1], "said twice");
    let mut batches = vec![
        RecordBatch::Chat(chat_lines),
        RecordBatch::Custom(vec![
            retried.clone(),
            logged::<CustomEvent>(&event(players[0], "2026-10-05T10:59:59.999999Z")),
            logged::<CustomEvent>(&event(players[1], "2026-10-05T11:00:00Z")),
        ]),
        RecordBatch::Session(vec![logged::<Session>(&format!(
            r#"{{"server_id":"{server}","player_uuid":"{}","player_name":"Steve","event":"join",
                "at":"2026-10-06T00:00:01Z"}}"#,
            players[1]
        ))]),
        RecordBatch::Chat(vec![said_twice.clone()]),
    ];
    if repeat {
        batches.push(RecordBatch::Custom(vec![retried]));
        batches.push(RecordBatch::Chat(vec![said_twice]));
    }
    batches
        .into_iter()
        .enumerate()
        .map(|(i, batch)| Positioned {
            stream_sequence: i as u64 + 1,
            message: LogMessage::new(account, received, batch),
        })
        .collect()
}

#[tokio::test]
async fn a_bulk_load_stores_what_the_statements_store_repeated_ids_included() -> anyhow::Result<()>
{
    for repeat in [false, true] {
        let (by_statements, in_bulk) = (database().await?, database().await?);
        let account = Uuid::now_v7();
        let log = messages(account, repeat);
        let state = BulkState::default();
        // Applied in two chunks, as a rebuild would: the second meets the first's rows.
        let (first, second) = log.split_at(2);
        for model in [&Chat as &'static dyn ReadModel, &Timeline] {
            for chunk in [first, second] {
                assert_eq!(apply(&by_statements.pool, model, chunk, None).await?, None);
                assert_eq!(
                    apply(&in_bulk.pool, model, chunk, Some(&state)).await?,
                    None
                );
            }
        }
        let (expected, actual) = (
            contents(&by_statements.pool).await?,
            contents(&in_bulk.pool).await?,
        );
        for (e, a) in expected.iter().zip(&actual) {
            assert_eq!(e, a, "repeated ids: {repeat}");
        }
        let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM events")
            .fetch_one(&in_bulk.pool)
            .await?;
        assert_eq!(stored, 7, "every event once (repeated ids: {repeat})");
    }
    Ok(())
}

#[tokio::test]
async fn a_message_postgresql_refuses_is_refused_the_same_in_bulk() -> anyhow::Result<()> {
    let (by_statements, in_bulk) = (database().await?, database().await?);
    let account = Uuid::now_v7();
    let (server, player) = (Uuid::now_v7(), Uuid::now_v7());
    let poison = [Positioned {
        stream_sequence: 1,
        message: LogMessage::new(
            account,
            Utc::now(),
            RecordBatch::Chat(vec![
                chat(server, player, "kept"),
                chat(server, player, "x\u{0}"),
            ]),
        ),
    }];
    for model in [&Chat as &'static dyn ReadModel, &Timeline] {
        let expected = apply(&by_statements.pool, model, &poison, None).await?;
        let actual = apply(&in_bulk.pool, model, &poison, Some(&BulkState::default())).await?;
        assert_eq!(actual, expected, "{model:?}");
        if model.name() == "chat" {
            assert!(expected.is_some(), "the NUL was not refused");
        }
    }
    assert_eq!(
        contents(&by_statements.pool).await?,
        contents(&in_bulk.pool).await?
    );
    Ok(())
}
