//! The API reference.

use crate::helpers::TestApp;
use reqwest::StatusCode;
use serde_json::Value;

#[tokio::test]
async fn the_document_covers_the_whole_base_url() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let response = app.get_with("/api/openapi.json", None).await?;
    assert_eq!(response.status(), StatusCode::OK);
    let doc: Value = response.json().await?;
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")));
    for path in [
        "/api/admin/accounts",
        "/api/admin/keys/{key_id}/rotate",
        "/api/v1/events",
        "/api/players/{uuid}",
        "/api/players/{uuid}/punishments",
        "/api/players/{uuid}/flags",
        "/api/players/{uuid}/chatlog",
        "/api/players",
        "/api/players/{uuid}/alts",
        "/api/players/{uuid}/notes",
        "/api/punishments",
        "/api/flags",
        "/api/chat",
        "/api/servers",
        "/api/staff",
        "/api/public/reviews",
        "/api/public/exchange-rates",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} is not documented");
    }
    let schemes = &doc["components"]["securitySchemes"];
    for scheme in ["admin_key", "plugin_key", "dashboard_key"] {
        assert_eq!(schemes[scheme]["scheme"], "bearer", "{scheme}");
    }
    for schema in [
        "Problem",
        "RejectedRecord",
        "PlayerProfile",
        "PunishmentPage",
        "FlagPage",
        "ChatLogPage",
        "PlayerSearchPage",
        "AltList",
        "NotePage",
        "NoteItem",
        "AccountPunishmentPage",
        "AccountFlagPage",
        "AccountChatPage",
        "ServerList",
        "StaffRoster",
    ] {
        assert!(
            doc["components"]["schemas"].get(schema).is_some(),
            "{schema}"
        );
    }

    // An account-wide row is the per-player row plus who it concerns.
    let row = &doc["components"]["schemas"]["AccountPunishment"];
    assert!(
        row.to_string()
            .contains("#/components/schemas/PunishmentItem")
            && row.to_string().contains("player_uuid"),
        "{row}"
    );

    // Ingest documents the plugin writes itself (`/api/plugin/openapi.json`).
    assert!(doc["paths"].get("/api/plugin/heartbeat").is_none());
    assert_every_error_is_problem_json_and_every_gate_documented(&doc);

    let response = app.get_with("/api/docs/", None).await?;
    assert_eq!(response.status(), StatusCode::OK);
    let html = response.text().await?;
    assert!(html.to_ascii_lowercase().contains("<html"), "{html}");
    Ok(())
}

/// Every error response is `application/problem+json`; every gated operation lists what its
/// gate answers (400 duplicate credentials, 401, 403, 503, and 429 for keys with a quota); every
/// operation with a body lists 400, 413 and 415.
fn assert_every_error_is_problem_json_and_every_gate_documented(doc: &Value) {
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            operations += 1;
            let responses = operation["responses"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            for (status, response) in &responses {
                if status.starts_with('4') || status.starts_with('5') {
                    let content = &response["content"];
                    assert!(
                        content.get("application/problem+json").is_some()
                            && content.get("application/json").is_none(),
                        "{method} {path} {status}: {content}"
                    );
                }
            }
            let schemes: Vec<String> = operation["security"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .flat_map(|o| o.keys().cloned())
                .collect();
            let mut needed = Vec::new();
            if !schemes.is_empty() {
                needed.extend(["400", "401", "403", "503"]);
            }
            if schemes.iter().any(|s| s != "admin_key") {
                needed.push("429");
            }
            if operation.get("requestBody").is_some() {
                needed.extend(["400", "413", "415", "422"]);
            }
            for status in needed {
                assert!(
                    responses.contains_key(status),
                    "{method} {path} lacks {status}"
                );
            }
        }
    }
    assert!(operations > 20, "{operations} operations");
}
