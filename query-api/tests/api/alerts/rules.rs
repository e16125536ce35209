//! Rules: validation, and only the account's own destinations.

use super::*;

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
