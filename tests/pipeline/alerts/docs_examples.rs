//! `docs/webhooks.md` against real deliveries: one rule of every kind, the records a plugin
//! sends to trigger each, and every documented event type delivered through the whole stack to
//! the receiver (signatures checked there by the reference `standardwebhooks` library). Each
//! body must have its documented example's shape; the documented types must be exactly the
//! product's; and the page's "Verify a signature" code must accept a real delivery and refuse
//! a tampered one.

use super::AlertRig;
use super::documented::{enum_values, examples, fenced, section, shape_diff, webhooks_md};
use reqwest::Method;
use serde_json::{Value, json};
use shared::alerts::EventType;
use std::collections::BTreeSet;
use std::time::Duration;
use test_support::Received;

const SERVER: &str = "d0c50000-0000-4000-8000-000000000001";
const BANNED: &str = "d0c50000-0000-4000-8000-0000000000b1";
const ALT: &str = "d0c50000-0000-4000-8000-0000000000a1";
const MUTED: &str = "d0c50000-0000-4000-8000-0000000000c1";
const STAFF: &str = "d0c50000-0000-4000-8000-0000000000d1";
const IP: &str = "203.0.113.77";
/// A `tps_low` rule fires after at least a minute of low TPS: the sweep needs that long.
const TPS_DEADLINE: Duration = Duration::from_secs(150);
/// How often the low-TPS server beats meanwhile (the default sync interval is 15 s).
const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);

#[tokio::test]
async fn every_documented_event_type_is_delivered_in_the_documented_shape() -> anyhow::Result<()> {
    let md = webhooks_md()?;
    let every = section(&md, "### Every event type")?;
    let documented = examples(every)?;
    let product: BTreeSet<String> = EventType::ALL.iter().map(|t| t.to_string()).collect();
    let docs: BTreeSet<String> = documented.keys().cloned().collect();
    let unsent: Vec<_> = docs.difference(&product).collect();
    let undocumented: Vec<_> = product.difference(&docs).collect();
    assert!(unsent.is_empty(), "documented, never sent: {unsent:?}");
    assert!(
        undocumented.is_empty(),
        "sent, not documented: {undocumented:?}"
    );

    let mut rig = AlertRig::start(|vars| vars.set("NOTIFIER_SWEEP_MS", 200)).await?;
    let (destination, secret) = rig.webhook_destination().await?;
    // Each rule is named as its example is (or not, where the example's `rule_name` is null).
    let name_of = |t: &str| documented[t]["data"]["rule_name"].clone();
    for (rule, example) in [
        (json!({"kind": "punishment_issued"}), "punishment.issued"),
        (json!({"kind": "punishment_revoked"}), "punishment.revoked"),
        (
            json!({"kind": "anticheat_threshold", "flags": 2, "window_seconds": 60}),
            "anticheat.threshold",
        ),
        (json!({"kind": "server_offline"}), "server.offline"),
        (json!({"kind": "server_online"}), "server.online"),
        (
            json!({"kind": "tps_low", "below": 15.0, "minutes": 1}),
            "server.tps_low",
        ),
        (
            json!({"kind": "banned_alt_joined"}),
            "player.banned_alt_joined",
        ),
        (json!({"kind": "staff_rank_change"}), "rank.staff_joined"),
        (
            json!({"kind": "custom_event", "event_name": "store_purchase"}),
            "event.custom",
        ),
    ] {
        let mut rule = rule;
        rule["destinations"] = json!([destination]);
        if let Some(name) = name_of(example).as_str() {
            rule["name"] = json!(name);
        }
        let (status, body) = rig.admin(Method::POST, "/alert-rules", Some(rule)).await;
        anyhow::ensure!(status == 201, "rule for {example}: {status} {body}");
    }

    let beat = |online: bool, tps: f64| {
        json!({"server_id": SERVER, "name": "Lobby", "tps": tps, "player_count": 1,
               "max_players": 20, "online": online})
    };
    // Up, down (server.offline), up again (server.online), then low TPS (server.tps_low
    // after a minute).
    for heartbeat in [
        beat(true, 20.0),
        beat(false, 20.0),
        beat(true, 20.0),
        beat(true, 12.4),
    ] {
        rig.plugin("/api/plugin/heartbeat", heartbeat).await?;
    }
    let punish = |player: &str, name: &str, kind: &str| {
        json!({"server_id": SERVER, "player_uuid": player, "player_name": name, "type": kind,
               "reason": "X-ray", "staff_uuid": STAFF, "staff_name": "jeb_"})
    };
    let join = |player: &str, name: &str| {
        json!({"server_id": SERVER, "player_uuid": player, "player_name": name,
               "event": "join", "ip": IP})
    };
    rig.plugin("/api/plugin/sessions", json!([join(BANNED, "Notch")]))
        .await?;
    rig.plugin(
        "/api/plugin/punishments",
        json!([
            punish(BANNED, "Notch", "ban"),
            punish(MUTED, "Chatty", "mute")
        ]),
    )
    .await?;
    let flag = |check: &str| {
        json!({"server_id": SERVER, "player_uuid": BANNED, "player_name": "Notch",
               "check_name": check, "violation_level": 3.0})
    };
    rig.plugin(
        "/api/plugin/anticheat-flags",
        json!([flag("Fly"), flag("Speed")]),
    )
    .await?;
    let rank = |group: &str, previous: &str| {
        json!({"player_uuid": STAFF, "player_name": "jeb_", "action": "set", "group": group,
               "previous_group": previous, "staff_name": "Notch"})
    };
    rig.plugin(
        "/api/plugin/rank-changes",
        json!([rank("moderator", "member"), rank("member", "moderator")]),
    )
    .await?;
    let properties = documented["event.custom"]["data"]["properties"].clone();
    rig.plugin(
        "/api/v1/plugin/events",
        json!({"player_uuid": BANNED, "name": "store_purchase", "properties": properties}),
    )
    .await?;
    // The alt rule reads the read models: the ban and the first join must be projected first.
    rig.stack.projected().await?;
    rig.plugin("/api/plugin/sessions", json!([join(ALT, "NewAccount42")]))
        .await?;
    let test_path = format!("/destinations/{destination}/test");
    let (status, body) = rig.admin(Method::POST, &test_path, None).await;
    anyhow::ensure!(status == 202, "test event: {status} {body}");

    // The mute's revoke names the mute (punishment.revoked).
    let received = wait_types(&rig, &["punishment.issued"], 2, pipeline_tests::WAIT).await?;
    let mute_id = received
        .iter()
        .map(|r| &r.body["data"])
        .find(|d| d["punishment_type"] == "mute")
        .map(|d| d["punishment_id"].clone())
        .ok_or_else(|| anyhow::anyhow!("no punishment.issued for the mute"))?;
    let mut revoke = punish(MUTED, "Chatty", "mute");
    revoke["action"] = json!("revoke");
    revoke["punishment_id"] = mute_id;
    revoke["revoke_reason"] = json!("Appeal accepted");
    rig.plugin("/api/plugin/punishments", json!([revoke]))
        .await?;

    let all_but_tps: Vec<&str> = documented
        .keys()
        .map(String::as_str)
        .filter(|t| !t.starts_with("server.tps_"))
        .collect();
    wait_types(&rig, &all_but_tps, 1, pipeline_tests::WAIT).await?;
    // The server keeps beating with low TPS, as a plugin does every sync interval (silent for
    // three intervals, it would count as offline and its low spell would not fire).
    let until = tokio::time::Instant::now() + TPS_DEADLINE;
    while !has_type(&rig.receiver.received().await?, "server.tps_low") {
        anyhow::ensure!(
            tokio::time::Instant::now() < until,
            "no server.tps_low within {TPS_DEADLINE:?}"
        );
        rig.plugin("/api/plugin/heartbeat", beat(true, 12.4))
            .await?;
        tokio::time::sleep(HEARTBEAT_EVERY).await;
    }
    rig.plugin("/api/plugin/heartbeat", beat(true, 19.8))
        .await?;
    let received = wait_types(&rig, &["server.tps_recovered"], 1, pipeline_tests::WAIT).await?;

    // Every delivery: verified by the reference library, of a documented type, in its shape.
    let mut problems = Vec::new();
    for delivery in &received {
        let kind = delivery.event_type.clone().unwrap_or_default();
        if !delivery.accepted() {
            problems.push(format!("{kind}: not accepted: {:?}", delivery.error));
        }
        let Some(example) = documented.get(&kind) else {
            problems.push(format!("`{kind}` was sent but is not documented"));
            continue;
        };
        let mut diff = Vec::new();
        shape_diff(&kind, example, &delivery.body, &mut diff);
        for (field, value) in delivery.body["data"].as_object().into_iter().flatten() {
            let allowed = enum_values(every, field);
            if let (Some(allowed), Some(value)) = (allowed, value.as_str())
                && !allowed.contains(value)
            {
                diff.push(format!(
                    "{kind}.data.{field}: `{value}` is not in {allowed:?}"
                ));
            }
        }
        problems.extend(diff);
    }
    let seen: BTreeSet<String> = received
        .iter()
        .filter_map(|r| r.event_type.clone())
        .collect();
    let never: Vec<_> = docs.difference(&seen).collect();
    assert!(
        never.is_empty(),
        "documented types never delivered: {never:?}"
    );
    assert!(
        problems.is_empty(),
        "docs/webhooks.md vs deliveries:\n{}",
        problems.join("\n")
    );

    // The page's own verification code, on a real delivery (and on a tampered copy).
    let sample = received
        .iter()
        .find(|r| r.event_type.as_deref() == Some("punishment.issued"))
        .ok_or_else(|| anyhow::anyhow!("no punishment.issued"))?;
    run_documented_verification(&md, &secret, sample)?;
    Ok(())
}

impl AlertRig {
    /// Posts `body` to a plugin endpoint with the account's plugin key; wants 202.
    async fn plugin(&self, path: &str, body: Value) -> anyhow::Result<()> {
        let key = &self.account.plugin_key;
        let (status, answer) = self.stack.call(Method::POST, path, key, Some(body)).await;
        anyhow::ensure!(status == 202, "{path}: {status} {answer}");
        Ok(())
    }
}

fn has_type(received: &[Received], event_type: &str) -> bool {
    received
        .iter()
        .any(|r| r.event_type.as_deref() == Some(event_type))
}

/// Waits until the receiver holds at least `n` deliveries of each of `types`.
async fn wait_types(
    rig: &AlertRig,
    types: &[&str],
    n: usize,
    deadline: Duration,
) -> anyhow::Result<Vec<Received>> {
    let what = format!("{n} of each of {types:?}");
    rig.receiver
        .wait_until(deadline, &what, |all| {
            types.iter().all(|t| {
                let of = |r: &&Received| r.event_type.as_deref() == Some(*t);
                all.iter().filter(of).count() >= n
            })
        })
        .await
}

/// Runs the "Verify a signature" section's Python blocks, as written but for the secret, on
/// `delivery`'s raw bytes and headers; the script also checks that a changed body fails both.
fn run_documented_verification(md: &str, secret: &str, delivery: &Received) -> anyhow::Result<()> {
    let verify = section(md, "## Verify a signature")?;
    let blocks = fenced(verify, "python");
    anyhow::ensure!(
        blocks.len() == 2,
        "expected 2 python examples, found {}",
        blocks.len()
    );
    let library = blocks[0].replace("\"whsec_...\"", &format!("{secret:?}"));
    anyhow::ensure!(
        library != blocks[0],
        "the library example has no \"whsec_...\" to fill in"
    );
    let headers = json!({
        "webhook-id": delivery.webhook_id,
        "webhook-timestamp": delivery.webhook_timestamp,
        "webhook-signature": delivery.webhook_signature,
        "content-type": delivery.content_type,
    });
    let script = format!(
        "import base64, json, sys\n\
         raw_body = base64.b64decode({raw:?})\n\
         request_headers = json.loads({headers:?})\n\
         {library}\n\
         assert payload['type'] == 'punishment.issued', payload\n\
         {by_hand}\n\
         assert verify({secret:?}, request_headers, raw_body)\n\
         assert not verify({secret:?}, request_headers, raw_body + b' ')\n\
         raw_body = raw_body + b' '\n\
         try:\n    {library_tampered}\nexcept Exception:\n    pass\nelse:\n    sys.exit('the library accepted a changed body')\n\
         print('verified')\n",
        raw = delivery.raw_body_b64.clone().unwrap_or_default(),
        headers = headers.to_string(),
        by_hand = blocks[1],
        library_tampered = library
            .lines()
            .filter(|l| l.contains(".verify("))
            .collect::<String>(),
    );
    let python = std::env::var("NATS_SERVER_BIN")
        .ok()
        .map(|bin| std::path::PathBuf::from(bin).with_file_name("python"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| "python3".into());
    let output = std::process::Command::new(&python)
        .arg("-c")
        .arg(&script)
        .output()?;
    anyhow::ensure!(
        output.status.success() && String::from_utf8_lossy(&output.stdout).contains("verified"),
        "docs/webhooks.md's verification code on a real delivery: {}{}\n{script}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}
