//! `POST /preferences/time-zone`: whether the charts write times in the viewer's own time
//! zone (the default) or in UTC.
//!
//! Kept in a cookie, not in the database: it is a display choice of one browser (a member on
//! a laptop abroad and a desktop at home may want different ones), no page's data depends on
//! it, and the charts' script reads it where it draws. It is not a secret, so it is readable
//! by the script (no `HttpOnly`); `Secure` follows the session cookie's setting. The tables
//! under the charts stay in UTC, which their headings say.

use super::error::PageError;
use super::form::Form;
use super::gate::{PageRoutes, SignedIn};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::header::{LOCATION, REFERER, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::Deserialize;

/// The cookie's name (read by `assets/charts.js`).
pub const COOKIE: &str = "warden_tz";
/// A year: the choice outlives sessions.
const MAX_AGE: u64 = 365 * 24 * 3600;

#[derive(Debug, Deserialize)]
struct ZoneForm {
    #[serde(default)]
    zone: String,
}

/// The route.
pub fn router() -> PageRoutes {
    Router::new().route("/preferences/time-zone", post(choose))
}

async fn choose(
    _caller: SignedIn,
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<ZoneForm>,
) -> Result<Response, PageError> {
    let zone = match form.zone.as_str() {
        "local" | "utc" => form.zone.as_str(),
        _ => return Err(PageError::BadForm("zone: must be local or utc".into())),
    };
    let secure = if state.sessions.cookie_secure {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!("{COOKIE}={zone}; Max-Age={MAX_AGE}; Path=/; SameSite=Lax{secure}");
    let back = back_to(headers.get(REFERER).and_then(|v| v.to_str().ok()));
    Ok((
        StatusCode::SEE_OTHER,
        [(SET_COOKIE, cookie), (LOCATION, back)],
    )
        .into_response())
}

/// The page the form was on (the path and query of `Referer`, which the pages' same-origin
/// referrer policy sends), or the Overview. Only a path: the answer never leaves this site.
fn back_to(referer: Option<&str>) -> String {
    referer
        .and_then(|r| r.split_once("://"))
        .and_then(|(_, rest)| rest.find('/').map(|at| &rest[at..]))
        .filter(|path| path.starts_with('/') && !path.starts_with("//"))
        .map_or_else(|| "/".to_owned(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::back_to;

    #[test]
    fn the_answer_goes_back_to_a_path_of_this_site_only() {
        assert_eq!(
            back_to(Some("https://warden.example/analytics/trends?kind=joins")),
            "/analytics/trends?kind=joins"
        );
        assert_eq!(back_to(Some("https://warden.example")), "/");
        assert_eq!(back_to(Some("https://warden.example//evil.test/x")), "/");
        assert_eq!(back_to(Some("not a url")), "/");
        assert_eq!(back_to(None), "/");
    }
}
