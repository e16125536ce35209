//! Every route is behind the plugin gate, as ingest's API document says.

use crate::helpers::TestIngest;
use serde_json::Value;

#[tokio::test]
async fn every_documented_route_is_behind_the_plugin_gate() {
    let ingest = TestIngest::start().await;
    let doc: Value = ingest
        .http
        .get(format!("{}{}", ingest.base, ingest::routes::openapi::PATH))
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("the document is JSON");
    let keys = [
        ("plugin_key", ingest.plugin_key.as_str()),
        ("dashboard_key", ingest.dashboard_key.as_str()),
        ("admin_key", ingest.admin_key.as_str()),
    ];
    let checked = test_support::check_route_families(&ingest.http, &ingest.base, &doc, &keys)
        .await
        .expect("every route behind its gate");
    // The seven record endpoints, the custom events, the action feed, its acks and the appeal
    // links.
    assert_eq!(checked, 11, "operations checked");
}
