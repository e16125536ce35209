//! Destinations: URL policy, secrets shown once and sealed, Discord tokens cut, rotation.

use super::*;

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
