//! Every route is behind the gate of its family, as the API document says.

use crate::helpers::{TestApp, text};
use reqwest::StatusCode;
use serde_json::Value;

#[tokio::test]
async fn every_documented_route_is_behind_its_family_gate() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, dashboard) = app.account_with_dashboard_key().await?;
    let dashboard = text(&dashboard["key"]);
    let plugin = text(&app.create_key(&account, "plugin").await?["key"]);
    // The plugin key is in the directory once a dashboard route calls it the wrong kind.
    let known = app
        .status_becomes(
            "/api/servers",
            &plugin,
            StatusCode::FORBIDDEN,
            crate::helpers::WAIT,
        )
        .await?;
    assert!(known, "the plugin key never reached the directory");
    let doc: Value = app
        .get_with("/api/openapi.json", None)
        .await?
        .json()
        .await?;
    let keys = [
        ("admin_key", app.admin_key.as_str()),
        ("dashboard_key", dashboard.as_str()),
        ("plugin_key", plugin.as_str()),
    ];
    let checked =
        test_support::check_route_families(&app.client, &app.url(""), &doc, &keys).await?;
    // Admin, dashboard and public operations: the document and the router agree on all of them.
    assert!(checked >= 23, "only {checked} operations checked");
    Ok(())
}
