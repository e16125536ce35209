//! The alerts admin API: destinations (URL policy, secrets shown once and sealed, Discord
//! tokens cut, rotation), rules (validation, only the account's own destinations), the delivery
//! log (test events, "send again", filter and paging, the workers woken), accounts kept apart,
//! and the audit log. One file per resource; the shared setup is here.

mod deliveries;
mod destinations;
mod rules;

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
