//! The alerts admin API: destinations (URL policy, secrets shown once and sealed, Discord
//! tokens cut, rotation), rules (validation, only the account's own destinations), the delivery
//! log (test events, "send again", filter and paging, the workers woken), accounts kept apart,
//! and the audit log.

use crate::helpers::{TestApp, error_fields, problem, text};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shared::alerts::SealingKey;
use std::time::Duration;
use uuid::Uuid;

const SEALING_KEY: &str = "alerts-test-sealing-key-0123456789abcdef";
const DISCORD: &str = "https://discord.com/api/webhooks/112233/SeCrEtToKeN-abcdWXYZ";

async fn app() -> anyhow::Result<TestApp> {
    // The default network policy (test_vars allows loopback for the receiver tests).
    TestApp::spawn_with(|vars| {
        vars.set("WEBHOOK_SECRETS_KEY", SEALING_KEY)
            .set("WEBHOOK_ALLOW_NETWORKS", "")
    })
    .await
}

impl TestApp {
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<reqwest::Response> {
        let mut request = self.admin(method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        Ok(request.send().await?)
    }

    /// `method path body`, asserting `status`; the JSON answer (`null` for none).
    async fn expect(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        status: StatusCode,
    ) -> anyhow::Result<Value> {
        let response = self.call(method.clone(), path, body).await?;
        let got = response.status();
        let text = response.text().await?;
        assert_eq!(got, status, "{method} {path}: {text}");
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn destination(&self, account: &str, kind: &str, url: &str) -> anyhow::Result<Value> {
        let path = format!("/api/admin/accounts/{account}/destinations");
        self.expect(
            Method::POST,
            &path,
            Some(json!({"kind": kind, "url": url})),
            StatusCode::CREATED,
        )
        .await
    }
}

#[tokio::test]
async fn destinations_keep_their_secrets_and_refuse_private_addresses() -> anyhow::Result<()> {
    let app = app().await?;
    let account = app.create_account("Network").await?;
    let base = format!("/api/admin/accounts/{account}/destinations");

    // The default policy refuses loopback, private and link-local addresses, in any spelling.
    for url in [
        "http://127.0.0.1:9/x",
        "http://localhost/",
        "https://10.1.2.3/",
        "http://[::ffff:192.168.0.1]/",
        "http://169.254.169.254/latest",
    ] {
        let response = app
            .call(
                Method::POST,
                &base,
                Some(json!({"kind": "webhook", "url": url})),
            )
            .await?;
        let body = problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "forbidden_address",
        )
        .await?;
        assert_eq!(error_fields(&body), ["url"], "{url}");
    }
    for (kind, url, code) in [
        ("webhook", "ftp://hooks.example.com/", "unsupported_scheme"),
        (
            "webhook",
            "https://user:pw@hooks.example.com/",
            "url_credentials",
        ),
        ("webhook", "not a url", "invalid_url"),
        (
            "discord",
            "https://example.com/api/webhooks/1/x",
            "not_discord_webhook",
        ),
    ] {
        let response = app
            .call(Method::POST, &base, Some(json!({"kind": kind, "url": url})))
            .await?;
        let body = problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
        assert_eq!(body["errors"][0]["code"], code, "{url}");
    }
    let unknown = format!("/api/admin/accounts/{}/destinations", Uuid::now_v7());
    let response = app
        .call(
            Method::POST,
            &unknown,
            Some(json!({"kind": "discord", "url": DISCORD})),
        )
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;

    // A webhook's secret is in the answer that creates it, and nowhere after.
    let hook = app
        .destination(&account, "webhook", "https://hooks.example.com/warden")
        .await?;
    let secret = text(&hook["secret"]);
    assert!(secret.starts_with("whsec_") && secret.len() > 40, "{hook}");
    assert_eq!(hook["name"], "hooks.example.com");
    let id = text(&hook["id"]);
    let shown = app
        .expect(Method::GET, &format!("{base}/{id}"), None, StatusCode::OK)
        .await?;
    assert!(
        shown.get("secret").is_none() && shown["enabled"] == true,
        "{shown}"
    );
    let listed = app.expect(Method::GET, &base, None, StatusCode::OK).await?;
    assert!(!listed.to_string().contains(&secret));

    // At rest it is sealed, bound to the destination's id.
    let (sealed,): (Vec<u8>,) =
        sqlx::query_as("SELECT secret_sealed FROM alert_destinations WHERE id = $1")
            .bind(Uuid::parse_str(&id)?)
            .fetch_one(&app.db.pool)
            .await?;
    assert!(!String::from_utf8_lossy(&sealed).contains(&secret[6..]));
    let key = SealingKey::new(SEALING_KEY)?;
    assert_eq!(
        key.open(Uuid::parse_str(&id)?.as_bytes(), &sealed).ok(),
        Some(secret.clone())
    );
    assert!(key.open(Uuid::now_v7().as_bytes(), &sealed).is_err());

    // Rotation: a new secret, once; the old one signs for 24 more hours.
    let rotated = app
        .expect(
            Method::POST,
            &format!("{base}/{id}/rotate-secret"),
            None,
            StatusCode::OK,
        )
        .await?;
    let new_secret = text(&rotated["secret"]);
    assert!(new_secret.starts_with("whsec_") && new_secret != secret);
    let expires = chrono::DateTime::parse_from_rfc3339(&text(&rotated["previous_expires_at"]))?;
    let hours =
        (expires.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_minutes() as f64 / 60.0;
    assert!((23.9..=24.0).contains(&hours), "{hours}");

    // A Discord URL's token is cut everywhere; it has no secret to rotate.
    let discord = app.destination(&account, "discord", DISCORD).await?;
    assert!(discord.get("secret").is_none(), "{discord}");
    let discord_id = text(&discord["id"]);
    let listed = app.expect(Method::GET, &base, None, StatusCode::OK).await?;
    assert!(!listed.to_string().contains("SeCrEtToKeN"), "{listed}");
    let shown = app
        .expect(
            Method::GET,
            &format!("{base}/{discord_id}"),
            None,
            StatusCode::OK,
        )
        .await?;
    assert_eq!(
        shown["url"],
        "https://discord.com/api/webhooks/112233/…WXYZ"
    );
    let response = app
        .call(
            Method::POST,
            &format!("{base}/{discord_id}/rotate-secret"),
            None,
        )
        .await?;
    problem(response, StatusCode::CONFLICT, "no_secret").await?;
    // Its kind stays: another kind's URL is a conflict, and a body must be an object.
    let body = json!({"url": "https://hooks.example.com/other"});
    let response = app
        .call(Method::PATCH, &format!("{base}/{discord_id}"), Some(body))
        .await?;
    problem(response, StatusCode::CONFLICT, "kind_mismatch").await?;
    let response = app
        .call(Method::POST, &base, Some(json!(["discord", DISCORD])))
        .await?;
    problem(response, StatusCode::BAD_REQUEST, "malformed_json").await?;

    // Disable, enable, a refused new URL, and delete.
    let off = app
        .expect(
            Method::PATCH,
            &format!("{base}/{id}"),
            Some(json!({"enabled": false})),
            StatusCode::OK,
        )
        .await?;
    assert!(
        off["enabled"] == false
            && off["disabled_at"].is_string()
            && off["disabled_reason"].is_string(),
        "{off}"
    );
    let on = app
        .expect(
            Method::PATCH,
            &format!("{base}/{id}"),
            Some(json!({"enabled": true, "name": "Ops"})),
            StatusCode::OK,
        )
        .await?;
    assert!(
        on["enabled"] == true && on["disabled_at"].is_null() && on["name"] == "Ops",
        "{on}"
    );
    let response = app
        .call(
            Method::PATCH,
            &format!("{base}/{id}"),
            Some(json!({"url": "http://127.0.0.1/"})),
        )
        .await?;
    problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "forbidden_address",
    )
    .await?;
    app.expect(
        Method::DELETE,
        &format!("{base}/{discord_id}"),
        None,
        StatusCode::NO_CONTENT,
    )
    .await?;
    let response = app
        .call(Method::GET, &format!("{base}/{discord_id}"), None)
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;

    let actions: Vec<String> =
        sqlx::query_scalar("SELECT action FROM audit_log WHERE account_id = $1 ORDER BY id")
            .bind(Uuid::parse_str(&account)?)
            .fetch_all(&app.db.pool)
            .await?;
    assert_eq!(
        actions,
        [
            "alert_destination_created",
            "alert_secret_rotated",
            "alert_destination_created",
            "alert_destination_changed",
            "alert_destination_changed",
            "alert_destination_deleted"
        ]
    );
    let detail: Vec<String> =
        sqlx::query_scalar("SELECT detail::text FROM audit_log WHERE account_id = $1")
            .bind(Uuid::parse_str(&account)?)
            .fetch_all(&app.db.pool)
            .await?;
    // No secret, and no whole URL (a path or query may hold a credential): hosts only.
    let detail = detail.concat();
    assert!(
        !detail.contains("whsec_")
            && !detail.contains("SeCrEtToKeN")
            && !detail.contains("/warden")
    );
    assert!(detail.contains("hooks.example.com"), "{detail}");
    Ok(())
}

#[tokio::test]
async fn without_a_sealing_key_webhooks_wait_but_discord_works() -> anyhow::Result<()> {
    // An empty setting is no setting.
    let app = TestApp::spawn_with(|vars| vars.set("WEBHOOK_SECRETS_KEY", "")).await?;
    let account = app.create_account("Network").await?;
    let path = format!("/api/admin/accounts/{account}/destinations");
    let response = app
        .call(
            Method::POST,
            &path,
            Some(json!({"kind": "webhook", "url": "https://hooks.example.com/"})),
        )
        .await?;
    problem(
        response,
        StatusCode::SERVICE_UNAVAILABLE,
        "alerts_not_configured",
    )
    .await?;
    app.destination(&account, "discord", DISCORD).await?;
    Ok(())
}

#[tokio::test]
async fn rules_are_checked_and_name_only_their_account_s_destinations() -> anyhow::Result<()> {
    let app = app().await?;
    let ours = app.create_account("Ours").await?;
    let theirs = app.create_account("Theirs").await?;
    let our_dest = text(&app.destination(&ours, "discord", DISCORD).await?["id"]);
    let their_dest = text(&app.destination(&theirs, "discord", DISCORD).await?["id"]);
    let rules = format!("/api/admin/accounts/{ours}/alert-rules");

    let body = json!({"kind": "punishment_issued", "destinations": [our_dest, their_dest]});
    let response = app.call(Method::POST, &rules, Some(body)).await?;
    let refused = problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    assert_eq!(refused["errors"][0]["field"], "destinations[1]");
    assert_eq!(refused["errors"][0]["code"], "unknown_destination");

    for (body, fields) in [
        (
            json!({"kind": "anticheat_threshold", "destinations": [our_dest], "flags": 1, "window_seconds": 0}),
            vec!["flags", "window_seconds"],
        ),
        (
            json!({"kind": "tps_low", "destinations": [our_dest], "below": 25, "minutes": 5, "extra": 1}),
            vec!["extra"],
        ),
        (
            json!({"kind": "nonsense", "destinations": []}),
            vec!["destinations", "kind"],
        ),
        (
            json!({"kind": "custom_event", "destinations": [our_dest], "event_name": "session_start"}),
            vec!["event_name"],
        ),
        (
            json!({"kind": "punishment_revoked", "destinations": [our_dest], "punishment_types": ["ban", "ban"]}),
            vec!["punishment_types"],
        ),
        (
            json!({"kind": "server_offline", "destinations": [our_dest], "name": ""}),
            vec!["name"],
        ),
    ] {
        let response = app.call(Method::POST, &rules, Some(body.clone())).await?;
        let refused = problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
        assert_eq!(error_fields(&refused), fields, "{body}");
    }

    let body = json!({"kind": "anticheat_threshold", "destinations": [our_dest], "flags": 5, "window_seconds": 60, "name": "Bursts"});
    let rule = app
        .expect(Method::POST, &rules, Some(body), StatusCode::CREATED)
        .await?;
    assert_eq!(
        rule["spec"],
        json!({"kind": "anticheat_threshold", "flags": 5, "window_seconds": 60})
    );
    assert_eq!(rule["destinations"], json!([our_dest]));
    let rule_id = text(&rule["id"]);
    let one = format!("{rules}/{rule_id}");
    let replaced = app
        .expect(
            Method::PUT,
            &one,
            Some(json!({"kind": "server_offline", "destinations": [our_dest], "enabled": false})),
            StatusCode::OK,
        )
        .await?;
    assert!(
        replaced["kind"] == "server_offline"
            && replaced["enabled"] == false
            && replaced["name"].is_null(),
        "{replaced}"
    );
    assert_eq!(replaced["created_at"], rule["created_at"]);
    let listed = app
        .expect(Method::GET, &rules, None, StatusCode::OK)
        .await?;
    assert_eq!(listed["items"].as_array().map(Vec::len), Some(1));

    // The other account sees none of it, and cannot touch it.
    let their_rules = format!("/api/admin/accounts/{theirs}/alert-rules");
    let listed = app
        .expect(Method::GET, &their_rules, None, StatusCode::OK)
        .await?;
    assert_eq!(listed["items"], json!([]));
    for method in [Method::GET, Method::DELETE] {
        let response = app
            .call(method, &format!("{their_rules}/{rule_id}"), None)
            .await?;
        problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    }
    let body = json!({"kind": "server_online", "destinations": [their_dest]});
    let response = app
        .call(Method::PUT, &format!("{their_rules}/{rule_id}"), Some(body))
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    let their_dests = format!("/api/admin/accounts/{theirs}/destinations/{our_dest}");
    for (method, suffix) in [
        (Method::GET, ""),
        (Method::PATCH, ""),
        (Method::POST, "/test"),
        (Method::GET, "/deliveries"),
        (Method::DELETE, ""),
    ] {
        let body = (method == Method::PATCH).then(|| json!({"enabled": false}));
        let response = app
            .call(method, &format!("{their_dests}{suffix}"), body)
            .await?;
        problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    }
    let response = app
        .call(
            Method::GET,
            &format!("/api/admin/accounts/{}/alert-rules", Uuid::now_v7()),
            None,
        )
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;

    app.expect(Method::DELETE, &one, None, StatusCode::NO_CONTENT)
        .await?;
    let response = app.call(Method::GET, &one, None).await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    Ok(())
}

#[tokio::test]
async fn test_events_and_resends_queue_deliveries_and_wake_the_workers() -> anyhow::Result<()> {
    let app = app().await?;
    let account = app.create_account("Network").await?;
    let dest = text(
        &app.destination(&account, "webhook", "https://hooks.example.com/a")
            .await?["id"],
    );
    let base = format!("/api/admin/accounts/{account}/destinations/{dest}");
    let mut listener = sqlx::postgres::PgListener::connect_with(&app.db.pool).await?;
    listener.listen("alert_deliveries").await?;

    let queued = app
        .expect(
            Method::POST,
            &format!("{base}/test"),
            None,
            StatusCode::ACCEPTED,
        )
        .await?;
    let delivery = text(&queued["delivery_id"]);
    tokio::time::timeout(Duration::from_secs(5), listener.recv()).await??;
    let log = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries"),
            None,
            StatusCode::OK,
        )
        .await?;
    let row = &log["deliveries"][0];
    assert_eq!(row["id"], delivery.as_str());
    assert_eq!(
        row["webhook_id"],
        format!("msg_{}", Uuid::parse_str(&delivery)?.simple())
    );
    assert!(
        row["event_type"] == "test" && row["status"] == "pending" && row["attempts"] == 0,
        "{row}"
    );
    assert!(log["next_cursor"].is_null());
    let detail = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries/{delivery}"),
            None,
            StatusCode::OK,
        )
        .await?;
    assert_eq!(detail["payload"]["message"], "A test event from Warden");
    assert_eq!(detail["payload"]["destination_id"], dest.as_str());
    assert_eq!(detail["attempt_log"], json!([]));

    // As if the workers had given up after an attempt: "send again" makes it pending again,
    // same id, with 26 more hours of retries.
    sqlx::query(
        "UPDATE alert_deliveries SET status = 'failed', attempts = 1, give_up_at = now() WHERE id = $1; ",
    )
    .bind(Uuid::parse_str(&delivery)?)
    .execute(&app.db.pool)
    .await?;
    sqlx::query("INSERT INTO alert_delivery_attempts (delivery_id, attempt, attempted_at, status_code, duration_ms) VALUES ($1, 1, now(), 503, 12)")
        .bind(Uuid::parse_str(&delivery)?)
        .execute(&app.db.pool)
        .await?;
    let failed = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries?status=failed"),
            None,
            StatusCode::OK,
        )
        .await?;
    assert_eq!(failed["deliveries"].as_array().map(Vec::len), Some(1));
    let detail = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries/{delivery}"),
            None,
            StatusCode::OK,
        )
        .await?;
    assert_eq!(detail["attempt_log"][0]["status_code"], 503);
    let resent = app
        .expect(
            Method::POST,
            &format!("{base}/deliveries/{delivery}/resend"),
            None,
            StatusCode::ACCEPTED,
        )
        .await?;
    assert_eq!(resent["delivery_id"], delivery.as_str());
    tokio::time::timeout(Duration::from_secs(5), listener.recv()).await??;
    let (status, hours): (String, f64) = sqlx::query_as(
        "SELECT status, EXTRACT(EPOCH FROM give_up_at - now())::float8 / 3600 FROM alert_deliveries WHERE id = $1",
    )
    .bind(Uuid::parse_str(&delivery)?)
    .fetch_one(&app.db.pool)
    .await?;
    assert!(status == "pending" && hours > 25.9, "{status} {hours}");
    let failed = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries?status=failed"),
            None,
            StatusCode::OK,
        )
        .await?;
    assert_eq!(failed["deliveries"], json!([]));

    // Newest first, page by page, nothing twice.
    for _ in 0..2 {
        app.expect(
            Method::POST,
            &format!("{base}/test"),
            None,
            StatusCode::ACCEPTED,
        )
        .await?;
    }
    let first = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries?limit=2"),
            None,
            StatusCode::OK,
        )
        .await?;
    let cursor = text(&first["next_cursor"]);
    let second = app
        .expect(
            Method::GET,
            &format!("{base}/deliveries?limit=2&status=pending&cursor={cursor}"),
            None,
            StatusCode::OK,
        )
        .await?;
    let ids: Vec<String> = [&first, &second]
        .iter()
        .flat_map(|page| page["deliveries"].as_array().cloned().unwrap_or_default())
        .map(|d| text(&d["id"]))
        .collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[2], delivery);
    assert!(second["next_cursor"].is_null());
    for query in ["status=lost", "cursor=abc", "limit=0"] {
        let response = app
            .call(Method::GET, &format!("{base}/deliveries?{query}"), None)
            .await?;
        problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
    }
    let response = app
        .call(
            Method::POST,
            &format!("{base}/deliveries/{}/resend", Uuid::now_v7()),
            None,
        )
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    Ok(())
}

#[tokio::test]
async fn the_reference_documents_every_alerts_route() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let doc: Value = app
        .get_with("/api/openapi.json", None)
        .await?
        .json()
        .await?;
    let base = "/api/admin/accounts/{account_id}";
    for path in [
        "/destinations",
        "/destinations/{destination_id}",
        "/destinations/{destination_id}/rotate-secret",
        "/destinations/{destination_id}/test",
        "/destinations/{destination_id}/deliveries",
        "/destinations/{destination_id}/deliveries/{delivery_id}",
        "/destinations/{destination_id}/deliveries/{delivery_id}/resend",
        "/alert-rules",
        "/alert-rules/{rule_id}",
    ] {
        assert!(
            doc["paths"].get(format!("{base}{path}")).is_some(),
            "{path}"
        );
    }
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["NewRule"]["oneOf"].as_array().map(Vec::len),
        Some(9)
    );
    assert_eq!(
        schemas["Rule"]["properties"]["spec"]["$ref"],
        "#/components/schemas/RuleSpec"
    );
    Ok(())
}
