//! The notifier opens the sealed log: notifications carry clear names and reasons,
//! and those of a player whose key is destroyed carry none.

use super::Notifying;
use crate::harness::logged;
use crate::sealed_log::sealed;
use serde_json::{Value, json};
use shared::envelope::RecordBatch;
use uuid::Uuid;

#[tokio::test]
async fn notifications_carry_clear_names_and_an_erased_players_carry_none() -> anyhow::Result<()> {
    let n = Notifying::start().await?;
    let (account, destination) = n.account().await?;
    n.rule(
        account,
        Some("Bans"),
        json!({"kind": "punishment_issued"}),
        &[destination],
    )
    .await?;
    let keyring = n.h.keyring().await?;
    let (server, kept, erased, staff) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let ban = |player: Uuid, name: &str| {
        logged(
            &json!({"server_id": server, "player_uuid": player, "player_name": name,
                    "type": "ban", "reason": format!("x-ray ({name})"), "staff_uuid": staff,
                    "staff_name": "Mod"})
            .to_string(),
        )
    };
    let first = sealed(
        &n.h,
        &keyring,
        account,
        RecordBatch::Punishment(vec![ban(kept, "Griefer")]),
    )
    .await?;
    let second = sealed(
        &n.h,
        &keyring,
        account,
        RecordBatch::Punishment(vec![ban(erased, "Gone")]),
    )
    .await?;
    // Destroyed before the notifier could read it (nothing of the player is in the log yet).
    keyring.destroy_player(account, erased).await?;
    for (subject, bytes) in [first, second] {
        n.h.publish_raw(subject, bytes).await?;
    }

    let rows = n.rows_reach(account, 2).await?;
    let fields = |row: usize| {
        let p = &rows[row].payload;
        (
            p["player_uuid"].clone(),
            p["player_name"].clone(),
            p["reason"].clone(),
            p["staff_name"].clone(),
        )
    };
    assert_eq!(
        fields(0),
        (
            json!(kept),
            json!("Griefer"),
            json!("x-ray (Griefer)"),
            json!("Mod")
        )
    );
    assert_eq!(
        fields(1),
        (json!(erased), Value::Null, Value::Null, json!("Mod")),
        "the staff member's name is theirs, not the erased player's"
    );
    Ok(())
}
