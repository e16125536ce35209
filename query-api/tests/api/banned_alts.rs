//! The activity feed's banned-alt mark (`alts::banned_alts`): one query for a batch of joins
//! finds, for each, an alt banned now behind one of the player's IP hashes or the join's own;
//! a revoked or expired ban, a mute, another account's player and an unrelated hash do not
//! count.

use crate::read_models::{Dashboard, Punishment, ago, join_from, now, player, punishment, server};
use query_api::routes::account_reads::alts::{BannedAlt, banned_alts};
use uuid::Uuid;

#[tokio::test]
async fn a_join_is_marked_by_an_alt_banned_now_in_its_own_account_only() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account, now) = (dash.pool(), dash.account, now());
    let lobby = server(pool, account, Some("Lobby"), true, now).await?;
    let main = player(pool, account, "Main", ago(now, 9000), now).await?;
    let banned = player(pool, account, "Banny", ago(now, 9000), now).await?;
    let pardoned = player(pool, account, "Pardoned", ago(now, 9000), now).await?;
    let muted = player(pool, account, "Muted", ago(now, 9000), now).await?;
    let lone = player(pool, account, "Lone", ago(now, 9000), now).await?;
    let newcomer = Uuid::new_v4();
    join_from(pool, account, (main, lobby), "hash-home", ago(now, 5000)).await?;
    join_from(pool, account, (banned, lobby), "hash-home", ago(now, 4000)).await?;
    join_from(
        pool,
        account,
        (pardoned, lobby),
        "hash-home",
        ago(now, 3000),
    )
    .await?;
    join_from(pool, account, (muted, lobby), "hash-home", ago(now, 2000)).await?;
    join_from(pool, account, (lone, lobby), "hash-lone", ago(now, 1000)).await?;
    let sanction = |player, kind, expires_at| Punishment {
        player,
        kind,
        staff: None,
        server: None,
        issued_at: ago(now, 100),
        expires_at,
    };
    punishment(pool, account, sanction(banned, "ban", None)).await?;
    punishment(pool, account, sanction(muted, "mute", None)).await?;
    // An expired ban and a revoked one.
    punishment(pool, account, sanction(pardoned, "ban", Some(ago(now, 50)))).await?;
    let revoked = punishment(pool, account, sanction(pardoned, "ban", None)).await?;
    sqlx::query("UPDATE punishments SET revoked_at = $3 WHERE account_id = $1 AND id = $2")
        .bind(account)
        .bind(revoked)
        .bind(ago(now, 10))
        .execute(pool)
        .await?;
    // Another account: a banned player behind the same hash, and one of its own joins.
    let (other, _) = dash.app.account_with_dashboard_key().await?;
    let other: Uuid = other.parse()?;
    let other_lobby = server(pool, other, Some("Lobby"), true, now).await?;
    let outsider = player(pool, other, "Outsider", ago(now, 9000), now).await?;
    join_from(
        pool,
        other,
        (outsider, other_lobby),
        "hash-lone",
        ago(now, 500),
    )
    .await?;
    punishment(pool, other, sanction(outsider, "ban", None)).await?;

    let mut found = banned_alts(
        pool,
        account,
        &[
            (main, None),
            // A first join, not stored yet: its own hash is what links it.
            (newcomer, Some("hash-home".to_owned())),
            (lone, None),
            (banned, None),
        ],
    )
    .await?;
    let mark = |player| BannedAlt {
        player,
        uuid: banned,
        username: Some("Banny".to_owned()),
        banned_alts: 1,
    };
    // One row per marked join, in no particular order.
    found.sort_by_key(|alt| alt.player);
    let mut expected = vec![mark(main), mark(newcomer)];
    expected.sort_by_key(|alt| alt.player);
    assert_eq!(found, expected);

    // The ban revoked: no mark left.
    sqlx::query(
        "UPDATE punishments SET revoked_at = $2 WHERE account_id = $1 AND player_uuid = $3",
    )
    .bind(account)
    .bind(ago(now, 5))
    .bind(banned)
    .execute(pool)
    .await?;
    assert_eq!(banned_alts(pool, account, &[(main, None)]).await?, vec![]);
    // The other account's own join sees its own banned player only through its own sessions.
    assert_eq!(banned_alts(pool, other, &[(outsider, None)]).await?, vec![]);
    assert_eq!(banned_alts(pool, account, &[]).await?, vec![]);
    Ok(())
}
