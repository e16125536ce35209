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
        "/api/plugin/heartbeat",
        "/api/plugin/chat",
        "/api/v1/plugin/events",
        "/api/admin/accounts",
        "/api/admin/keys/{key_id}/rotate",
        "/api/v1/events",
        "/api/players/{uuid}",
        "/api/players/{uuid}/punishments",
        "/api/players/{uuid}/flags",
        "/api/players/{uuid}/chatlog",
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
        "Heartbeat",
        "CustomEvent",
        "WriteAccepted",
        "Problem",
        "RejectedRecord",
        "PlayerProfile",
        "PunishmentPage",
        "FlagPage",
        "ChatLogPage",
        "ServerList",
        "StaffRoster",
    ] {
        assert!(
            doc["components"]["schemas"].get(schema).is_some(),
            "{schema}"
        );
    }

    let response = app.get_with("/api/docs/", None).await?;
    assert_eq!(response.status(), StatusCode::OK);
    let html = response.text().await?;
    assert!(html.to_ascii_lowercase().contains("<html"), "{html}");
    Ok(())
}
