//! Erasing a player end to end: two players write everything personal (names,
//! chat, sessions from one IP, punishments with reasons, each as the other's staff, flags,
//! rank changes, account links, custom events (every property sealed but one), staff notes); the
//! admin API erases one. Then no API read, player page, export, SSE backfill nor a full
//! `projector rebuild` returns anything personal of the erased player, while everything of
//! the other player is still there.

mod reads;
mod writes;

use crate::dashboard::Network;
use crate::member::Member;
use projector::rebuild::{RebuildOptions, rebuild};
use reads::everything;
use reqwest::Method;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use writes::{keep_item_clear, write_both};

const SERVER: &str = "e7a5e000-0000-4000-8000-000000000001";
/// Erased.
const EVE: &str = "e7a5e000-0000-4000-8000-0000000000e1";
/// Kept.
const KIM: &str = "e7a5e000-0000-4000-8000-0000000000c2";
/// Both join from it: each is the other's alt until Eve's IP hash goes.
const SHARED_IP: &str = "198.51.100.77";

/// Eve's personal values (her IP hash is Kim's too: it is checked in `sessions` instead).
const EVES: [&str; 10] = [
    "ErasedEve",
    "eve meets the gang at the old mill",
    "eve xray at the diamond vein",
    "eve appeal accepted",
    "eve-discord-1111",
    "evie#1111",
    "eve@example.test",
    "note about eve and her clips",
    "https://clips.example.test/eve",
    "eve private spawn",
];
/// Kim's, which must all stay (Kim's punishment reason was written by Eve as staff).
const KIMS: [&str; 7] = [
    "KeptKim",
    "kim says hello to everyone",
    "kim spammed the lobby",
    "kim-discord-2222",
    "kimmy#2222",
    "kim@example.test",
    "note about kim and the lobby",
];

/// Asserts no source holds any of `erased`, and the sources together hold every `kept`.
fn nothing_of_eve_all_of_kim(
    sources: &[(String, String)],
    erased: &[&str],
    kept: &[&str],
    when: &str,
) {
    for (source, text) in sources {
        for value in erased {
            assert!(
                !text.contains(value),
                "{when}: {source} still holds {value:?}: {text}"
            );
        }
    }
    for value in kept {
        assert!(
            sources.iter().any(|(_, text)| text.contains(value)),
            "{when}: {value:?} of the kept player is gone everywhere"
        );
    }
    let kims_page = read(sources, &format!("/players/{KIM}"));
    assert!(
        kims_page.contains("KeptKim"),
        "{when}: Kim's page lost her name"
    );
}

/// The text `source` answered.
fn read<'a>(sources: &'a [(String, String)], source: &str) -> &'a str {
    sources
        .iter()
        .find(|(name, _)| name == source)
        .map(|(_, text)| text.as_str())
        .unwrap_or_else(|| panic!("no read of {source}"))
}

/// Neither player is the other's alt any more: Eve's IP hash is gone.
fn no_alts(sources: &[(String, String)], when: &str) {
    let kims = read(sources, &format!("/api/players/{KIM}/alts"));
    assert!(
        !kims.contains(EVE),
        "{when}: Eve is still Kim's alt: {kims}"
    );
    let eves = read(sources, &format!("/api/players/{EVE}/alts"));
    assert!(
        !eves.contains(KIM),
        "{when}: Kim is still Eve's alt: {eves}"
    );
}

async fn ip_hash(net: &Network, player: &str) -> Option<String> {
    sqlx::query_scalar("SELECT ip_hash FROM sessions WHERE player_uuid = $1::text::uuid")
        .bind(player)
        .fetch_one(&net.stack.db.pool)
        .await
        .expect("the player's session")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erased_player_is_gone_from_every_read_and_a_rebuild_while_the_other_stays() {
    let net = Network::start("Erasure Network").await;
    let other = net.other_account("Bystander Network").await;
    net.stack
        .create_member(&net.account.id, "owner@erase.test", "Olga", "owner")
        .await
        .expect("an owner");
    let owner = Member::sign_in(&net.stack.base, "owner@erase.test").await;
    keep_item_clear(&net).await;
    write_both(&net, &owner).await;
    let eves_hash = ip_hash(&net, EVE).await.expect("Eve's IP hash");
    let kims_hash = ip_hash(&net, KIM).await.expect("Kim's IP hash");
    assert_eq!(eves_hash, kims_hash, "one IP, one hash");

    // Before: every read shows both (so the checks below can fail), each the other's alt.
    let before = everything(&net, &owner).await;
    assert!(read(&before, &format!("/api/players/{KIM}/alts")).contains(EVE));
    let stream = read(&before, "SSE backfill");
    for value in [
        "ErasedEve",
        "eve meets the gang at the old mill",
        "eve@example.test",
    ] {
        assert!(stream.contains(value), "the backfill never held {value:?}");
    }
    let all: String = before.iter().map(|(_, text)| text.as_str()).collect();
    for value in EVES.iter().chain(KIMS.iter()) {
        assert!(all.contains(value), "{value:?} was never readable");
    }

    // The wrong doors first: a dashboard key, another account.
    let erase = format!("/api/admin/accounts/{}/players/{EVE}/erase", net.account.id);
    let (status, _) = net
        .stack
        .call(Method::POST, &erase, &net.account.dashboard_key, None)
        .await;
    assert_eq!(status, 403);
    let theirs = format!("/api/admin/accounts/{}/players/{EVE}/erase", other.id);
    let (status, answer) = net
        .stack
        .call(Method::POST, &theirs, &net.stack.admin_key, None)
        .await;
    assert_eq!(status, 404, "{answer}");

    let (status, answer) = net
        .stack
        .call(Method::POST, &erase, &net.stack.admin_key, None)
        .await;
    // The answer waits 5 s for the projector; a loaded machine can take longer (202 pending).
    // Once the projector has applied the log, asking again answers 200 at once.
    let (status, answer) = if status == 202 && answer["status"] == "pending" {
        net.stack.projected().await.expect("projected");
        net.stack
            .call(Method::POST, &erase, &net.stack.admin_key, None)
            .await
    } else {
        (status, answer)
    };
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["status"], "erased", "{answer}");
    // Twice is fine.
    let (status, again) = net
        .stack
        .call(Method::POST, &erase, &net.stack.admin_key, None)
        .await;
    assert_eq!((status, &again["erased_at"]), (200, &answer["erased_at"]));

    assert_eq!(ip_hash(&net, EVE).await, None, "Eve's IP hash is gone");
    assert_eq!(ip_hash(&net, KIM).await, Some(kims_hash.clone()));
    // Eve's hash is Kim's too (one IP), so it is not looked for in the reads: Eve's row
    // lost it (above), and with it Kim's alt.
    let erased: Vec<&str> = EVES.to_vec();
    let after = everything(&net, &owner).await;
    nothing_of_eve_all_of_kim(&after, &erased, &KIMS, "after the erasure");
    no_alts(&after, "after the erasure");
    let eve: Value =
        serde_json::from_str(read(&after, &format!("/api/players/{EVE}"))).expect("Eve's profile");
    assert_eq!(eve["erased_at"], answer["erased_at"], "{eve}");
    assert_eq!(eve["username"], Value::Null, "{eve}");
    let kim: Value =
        serde_json::from_str(read(&after, &format!("/api/players/{KIM}"))).expect("Kim's profile");
    assert_eq!(kim["erased_at"], Value::Null, "{kim}");
    let eves_page = read(&after, &format!("/players/{EVE}"));
    assert!(eves_page.contains("erased player"), "{eves_page}");

    // A full rebuild replays the log (Eve's fields read as erased) and the erasure again.
    let config = projector::Config::from_vars(&net.stack.vars).expect("projector config");
    let options = RebuildOptions {
        models: Vec::new(),
        progress_bar: false,
        progress: None,
    };
    rebuild(&config, &options, CancellationToken::new())
        .await
        .expect("the rebuild finishes");
    net.stack.projected().await.expect("projected");
    assert_eq!(
        ip_hash(&net, EVE).await,
        None,
        "the rebuild brought Eve's IP hash back"
    );
    assert_eq!(ip_hash(&net, KIM).await, Some(kims_hash));
    let rebuilt = everything(&net, &owner).await;
    nothing_of_eve_all_of_kim(&rebuilt, &erased, &KIMS, "after a rebuild");
    no_alts(&rebuilt, "after a rebuild");
    let erased_rows: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM erased_players WHERE player_uuid = $1::text::uuid",
    )
    .bind(EVE)
    .fetch_one(&net.stack.db.pool)
    .await
    .expect("count");
    assert_eq!(erased_rows, 1, "the rebuild replays the erasure once");
}
