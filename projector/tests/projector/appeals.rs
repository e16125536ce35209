//! Appeals: one row per punishment appealed, its status the latest valid step in log order;
//! a hostile step is skipped without stopping the projector, and a rebuild ends where the
//! live projector did.

use crate::harness::Harness;
use chrono::{DateTime, Duration, Utc};
use projector::rebuild::{RebuildOptions, rebuild};
use shared::envelope::Logged;
use shared::records::{ActionMember, Appeal, AppealStep};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

type Row = (
    Uuid,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<Uuid>,
);

fn submitted(id: Uuid, punishment: Uuid, player: Uuid, message: &str, at: DateTime<Utc>) -> Appeal {
    Appeal {
        id,
        step: AppealStep::Submitted,
        punishment_id: punishment,
        player_uuid: player,
        message: Some(message.into()),
        reply: None,
        by: None,
        revoke_action: None,
        at,
    }
}

fn staff_step(appeal: &Appeal, step: AppealStep, reply: Option<&str>, at: DateTime<Utc>) -> Appeal {
    Appeal {
        step,
        message: None,
        reply: reply.map(str::to_owned),
        by: Some(ActionMember {
            member_id: Uuid::from_u128(0x3),
            name: "Mia".into(),
        }),
        revoke_action: (step == AppealStep::Accepted).then(Uuid::now_v7),
        at,
        ..appeal.clone()
    }
}

fn batch(appeals: Vec<Appeal>) -> shared::envelope::RecordBatch {
    Appeal::into_batch(
        appeals
            .into_iter()
            .map(|record| Logged {
                id: Uuid::now_v7(),
                record,
            })
            .collect(),
    )
}

async fn rows(h: &Harness, account: Uuid) -> anyhow::Result<Vec<Row>> {
    Ok(sqlx::query_as(
        "SELECT punishment_id, status, message, reply, member_name, revoke_action
         FROM appeals WHERE account_id = $1 ORDER BY submitted_at, id",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_appeal_takes_its_latest_valid_step_and_a_second_appeal_of_a_punishment_is_not_stored()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, other_account) = (Uuid::now_v7(), Uuid::now_v7());
    let player = Uuid::now_v7();
    let (ban, mute) = (Uuid::now_v7(), Uuid::now_v7());
    let at = Utc::now() - Duration::minutes(30);
    let t = |minutes: i64| at + Duration::minutes(minutes);

    let first = submitted(
        Uuid::now_v7(),
        ban,
        player,
        "I was lagging, not flying.",
        t(0),
    );
    let again = submitted(
        Uuid::now_v7(),
        ban,
        player,
        "Please read my first appeal!",
        t(1),
    );
    let muted = submitted(
        Uuid::now_v7(),
        mute,
        player,
        "The mute was for a joke.",
        t(2),
    );
    // A step that breaks the rules (no member) between valid ones: skipped, not a stop.
    let mut nameless = staff_step(&muted, AppealStep::Denied, None, t(3));
    nameless.by = None;
    h.publish_dashboard(
        account,
        t(3),
        batch(vec![first.clone(), again, muted.clone(), nameless]),
    )
    .await?;
    // The same appeal id under another account is that account's (and names no row here).
    h.publish_dashboard(
        other_account,
        t(3),
        batch(vec![staff_step(&first, AppealStep::Denied, None, t(3))]),
    )
    .await?;
    h.publish_dashboard(
        account,
        t(5),
        batch(vec![
            staff_step(&first, AppealStep::UnderReview, None, t(4)),
            staff_step(&first, AppealStep::Accepted, Some("Welcome back."), t(5)),
            staff_step(&muted, AppealStep::UnderReview, None, t(5)),
        ]),
    )
    .await?;
    h.caught_up().await?;

    let found = rows(&h, account).await?;
    assert_eq!(found.len(), 2, "{found:?}");
    let (punishment, status, message, reply, member, revoke) = &found[0];
    assert_eq!(
        (punishment, status.as_str(), message.as_str()),
        (&ban, "accepted", "I was lagging, not flying.")
    );
    assert_eq!(
        (reply.as_deref(), member.as_deref()),
        (Some("Welcome back."), Some("Mia"))
    );
    assert!(revoke.is_some());
    let (punishment, status, _, reply, _, revoke) = &found[1];
    assert_eq!(
        (punishment, status.as_str(), reply, revoke),
        (&mute, "under_review", &None, &None)
    );
    assert!(rows(&h, other_account).await?.is_empty());

    // A rebuild replays the same steps to the same rows.
    let before = rows(&h, account).await?;
    rebuild(
        &h.config,
        &RebuildOptions::default(),
        CancellationToken::new(),
    )
    .await?;
    assert_eq!(rows(&h, account).await?, before);
    Ok(())
}
