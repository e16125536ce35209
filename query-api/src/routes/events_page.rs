//! `GET /events`: the dashboard's Events page, and its script and stylesheet.
//!
//! The page is static (it holds no data, so it needs no key): plain HTML, one hand-written
//! script and one stylesheet, embedded in the binary. The script asks for the dashboard key and
//! calls the events, stream and funnel APIs with it. A strict Content-Security-Policy allows only
//! our own script, style and API origin, so even a bug that rendered event data as markup could
//! not run anything.

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderName};
use axum::response::IntoResponse;
use axum::routing::get;
use std::sync::LazyLock;

const PAGE_HTML: &str = include_str!("../../assets/events.html");
const SCRIPT: &str = include_str!("../../assets/events.js");
const FUNNEL_SCRIPT: &str = include_str!("../../assets/events-funnel.js");
const STYLESHEET: &str = include_str!("../../assets/events.css");

/// Where the page links its script and stylesheet (before the version query).
pub const SCRIPT_PATH: &str = "/assets/events.js";
/// See [`SCRIPT_PATH`].
pub const FUNNEL_SCRIPT_PATH: &str = "/assets/events-funnel.js";
/// See [`SCRIPT_PATH`].
pub const STYLESHEET_PATH: &str = "/assets/events.css";

/// Only our own origin may provide scripts, styles and API answers; nothing may frame the page.
/// (`img-src data:` is for the empty favicon, which saves a request that would 404.)
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; \
    base-uri 'none'; frame-ancestors 'none'";

/// The HTML may change with any deploy, so browsers revalidate it every time.
const PAGE_CACHE: &str = "no-cache";
/// Asset URLs carry a hash of their content, so a new build gets new URLs; a day is plenty.
const ASSET_CACHE: &str = "public, max-age=86400";

/// FNV-1a: stable across builds and Rust versions (unlike `DefaultHasher`), computed at compile
/// time; it only has to change when an asset does.
const fn fnv1a(bytes: &[u8], mut hash: u64) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

const ASSET_VERSION: u64 = fnv1a(
    STYLESHEET.as_bytes(),
    fnv1a(
        FUNNEL_SCRIPT.as_bytes(),
        fnv1a(SCRIPT.as_bytes(), 0xcbf2_9ce4_8422_2325),
    ),
);

/// The page with its asset links versioned (`{{ASSET_VERSION}}` in the template).
static PAGE: LazyLock<String> =
    LazyLock::new(|| PAGE_HTML.replace("{{ASSET_VERSION}}", &format!("{ASSET_VERSION:016x}")));

/// The routes of the page; they need no state, so they merge into any router.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/events", get(page))
        .route(SCRIPT_PATH, get(script))
        .route(FUNNEL_SCRIPT_PATH, get(funnel_script))
        .route(STYLESHEET_PATH, get(stylesheet))
}

fn static_response(
    content_type: &'static str,
    cache: &'static str,
    body: &'static str,
) -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, content_type),
            (CACHE_CONTROL, cache),
            (
                HeaderName::from_static("content-security-policy"),
                CONTENT_SECURITY_POLICY,
            ),
            (HeaderName::from_static("x-content-type-options"), "nosniff"),
            (HeaderName::from_static("referrer-policy"), "no-referrer"),
        ],
        body,
    )
}

async fn page() -> impl IntoResponse {
    static_response("text/html; charset=utf-8", PAGE_CACHE, PAGE.as_str())
}

async fn script() -> impl IntoResponse {
    static_response("text/javascript; charset=utf-8", ASSET_CACHE, SCRIPT)
}

async fn funnel_script() -> impl IntoResponse {
    static_response("text/javascript; charset=utf-8", ASSET_CACHE, FUNNEL_SCRIPT)
}

async fn stylesheet() -> impl IntoResponse {
    static_response("text/css; charset=utf-8", ASSET_CACHE, STYLESHEET)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::{Body, to_bytes};
    use axum::http::{Request, StatusCode};
    use tower::ServiceExt;

    async fn get(path: &str) -> (StatusCode, axum::http::HeaderMap, String) {
        let request = Request::get(path).body(Body::empty()).expect("request");
        let response = router::<()>().oneshot(request).await.expect("infallible");
        let status = response.status();
        let headers = response.headers().clone();
        let body = to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        (
            status,
            headers,
            String::from_utf8(body.to_vec()).expect("utf-8"),
        )
    }

    #[tokio::test]
    async fn each_route_answers_with_its_content_type_cache_and_policy() {
        for (path, content_type, cache) in [
            ("/events", "text/html; charset=utf-8", PAGE_CACHE),
            (SCRIPT_PATH, "text/javascript; charset=utf-8", ASSET_CACHE),
            (
                FUNNEL_SCRIPT_PATH,
                "text/javascript; charset=utf-8",
                ASSET_CACHE,
            ),
            (STYLESHEET_PATH, "text/css; charset=utf-8", ASSET_CACHE),
        ] {
            let (status, headers, body) = get(path).await;
            assert_eq!(status, StatusCode::OK, "{path}");
            assert_eq!(headers[CONTENT_TYPE], content_type, "{path}");
            assert_eq!(headers[CACHE_CONTROL], cache, "{path}");
            let policy = headers["content-security-policy"].to_str().expect("ascii");
            for directive in [
                "script-src 'self'",
                "style-src 'self'",
                "connect-src 'self'",
            ] {
                assert!(policy.contains(directive), "{path}: {policy}");
            }
            assert!(!body.is_empty(), "{path}");
        }
    }

    #[tokio::test]
    async fn the_page_links_its_versioned_assets_and_nothing_else() {
        let (_, _, html) = get("/events").await;
        let version = format!("?v={ASSET_VERSION:016x}");
        assert!(
            html.contains(&format!(
                r#"<script src="{SCRIPT_PATH}{version}" defer></script>"#
            )),
            "{html}"
        );
        assert!(
            html.contains(&format!(
                r#"<link rel="stylesheet" href="{STYLESHEET_PATH}{version}">"#
            )),
            "{html}"
        );
        assert!(!html.contains("{{"), "every placeholder is filled");
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "no CDN"
        );
        assert!(
            !html.contains("<script>"),
            "no inline script (the CSP forbids it)"
        );
        assert!(
            !html.contains("style="),
            "no inline style (the CSP forbids it)"
        );
    }

    #[test]
    fn the_asset_version_follows_the_content() {
        assert_ne!(fnv1a(b"a", 1), fnv1a(b"b", 1));
        assert_eq!(fnv1a(b"", 7), 7);
    }
}
