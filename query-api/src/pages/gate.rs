//! The dashboard pages' two route families (see [`shared::gate`] and `crate::auth`):
//!
//! - [`SignedIn`]: a team member with a live session (the session cookie). Without one, a page
//!   answers with a redirect to `/login`.
//! - [`Visitor`]: anyone; the sign-in and invite pages.
//!
//! Both refuse a state-changing request (POST, PUT, PATCH, DELETE) that is not same-origin, on
//! top of the cookie's `SameSite=Lax`: `Sec-Fetch-Site` must say `same-origin`, or, from a
//! browser that does not send it, `Origin` must name this host. A request with neither is
//! refused: every browser sends one of them on a POST, and a page on another site cannot forge
//! them.

use super::error::PageError;
use crate::auth::request_client_ip;
use crate::state::AppState;
use crate::team::sessions::{self, Session};
use crate::team::{Actor, Member, Visibility};
use axum::Router;
use axum::http::header::{HOST, LOCATION, ORIGIN, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use shared::gate::{Family, Gated, Meter};
use std::net::IpAddr;
use std::sync::Arc;

/// The routes of signed-in pages.
pub type PageRoutes = Router<Gated<AppState, SignedIn>>;
/// The routes anyone may open (sign-in, invites).
pub type VisitorRoutes = Router<Gated<AppState, Visitor>>;

/// A request from a signed-in team member.
#[derive(Debug, Clone)]
pub struct SignedIn {
    /// Their session (member, account name, the token's hash).
    pub session: Arc<Session>,
    /// The client's address, for the audit log's hash (never stored in clear).
    pub client_ip: IpAddr,
}

impl SignedIn {
    /// The member.
    pub fn member(&self) -> &Member {
        &self.session.member
    }

    /// What the member may see of the records ([`Visibility`]): every view that shows
    /// records reads through it.
    pub fn visibility(&self) -> Visibility {
        Visibility::member(self.session.member.role)
    }

    /// The member as the actor of a change, with their address hashed.
    pub fn actor(&self, state: &AppState) -> Actor {
        Actor::member(
            &self.session.member,
            Some(state.ip_hasher.hash(self.client_ip)),
        )
    }
}

/// A request from anyone, with its client address.
#[derive(Debug, Clone, Copy)]
pub struct Visitor {
    /// The client's address (sign-in quotas, audit hashes).
    pub client_ip: IpAddr,
}

impl Family<AppState> for SignedIn {
    async fn admit(parts: &Parts, state: &AppState) -> Result<Self, Response> {
        require_same_origin(parts).map_err(IntoResponse::into_response)?;
        let policy = &state.sessions;
        let Some(token) = policy.token(&parts.headers) else {
            return Err(to_sign_in(None));
        };
        match sessions::resolve(&state.pool, token, policy).await {
            Ok(Some(session)) => Ok(SignedIn {
                session: Arc::new(session),
                client_ip: request_client_ip(parts, state),
            }),
            // Ended or expired: the browser forgets the cookie on its way to the sign-in page.
            Ok(None) => Err(to_sign_in(Some(policy.clear_cookie()))),
            Err(error) => Err(PageError::from(error).into_response()),
        }
    }

    fn meter<'a>(&self, _: &'a AppState) -> Option<Meter<'a>> {
        None
    }
}

impl Family<AppState> for Visitor {
    async fn admit(parts: &Parts, state: &AppState) -> Result<Self, Response> {
        require_same_origin(parts).map_err(IntoResponse::into_response)?;
        Ok(Visitor {
            client_ip: request_client_ip(parts, state),
        })
    }

    fn meter<'a>(&self, _: &'a AppState) -> Option<Meter<'a>> {
        None
    }
}

/// `303 See Other` to the sign-in page (a GET whatever the method was), clearing the cookie
/// when it named a session that is gone. htmx follows it and shows the sign-in page.
fn to_sign_in(clear_cookie: Option<String>) -> Response {
    let mut response = (StatusCode::SEE_OTHER, [(LOCATION, "/login")]).into_response();
    if let Some(cookie) = clear_cookie.and_then(|c| c.parse().ok()) {
        response.headers_mut().insert(SET_COOKIE, cookie);
    }
    response
}

/// Refuses a state-changing request that is not same-origin (403 page).
fn require_same_origin(parts: &Parts) -> Result<(), PageError> {
    let changes_state = !matches!(
        parts.method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE
    );
    if changes_state && !is_same_origin(&parts.headers) {
        return Err(PageError::CrossOrigin);
    }
    Ok(())
}

/// Whether the request comes from a page of this origin.
///
/// `Sec-Fetch-Site`, when the browser sends it (every current one does), is the browser's own
/// judgement and is enough: it also holds behind a proxy that rewrites `Host` (nginx's `$host`
/// drops the port). Without it, `Origin` must name the host the request was sent to.
pub fn is_same_origin(headers: &HeaderMap) -> bool {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = text("sec-fetch-site") {
        return site == "same-origin";
    }
    match (text(ORIGIN.as_str()), text(HOST.as_str())) {
        // The scheme is not compared: behind a TLS-terminating proxy this server sees http
        // while the browser's origin is https; the host (with its port) tells sites apart.
        (Some(origin), Some(host)) => origin
            .strip_prefix("https://")
            .or_else(|| origin.strip_prefix("http://"))
            .is_some_and(|origin_host| origin_host.eq_ignore_ascii_case(host)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn only_this_origin_may_change_state() {
        let host = ("host", "127.0.0.1:8080");
        assert!(is_same_origin(&headers(&[
            host,
            ("origin", "http://127.0.0.1:8080")
        ])));
        assert!(is_same_origin(&headers(&[
            host,
            ("origin", "https://127.0.0.1:8080")
        ])));
        assert!(is_same_origin(&headers(&[
            host,
            ("sec-fetch-site", "same-origin")
        ])));
        // Behind a proxy that dropped the port from Host, the browser's word still counts.
        assert!(is_same_origin(&headers(&[
            ("host", "127.0.0.1"),
            ("origin", "http://127.0.0.1:8080"),
            ("sec-fetch-site", "same-origin")
        ])));
        assert!(!is_same_origin(&headers(&[
            host,
            ("sec-fetch-site", "same-site")
        ])));
        assert!(!is_same_origin(&headers(&[
            host,
            ("origin", "https://evil.example")
        ])));
        assert!(!is_same_origin(&headers(&[
            host,
            ("origin", "http://127.0.0.1:8080.evil.example")
        ])));
        assert!(!is_same_origin(&headers(&[host, ("origin", "null")])));
        assert!(!is_same_origin(&headers(&[
            host,
            ("origin", "http://127.0.0.1:8080"),
            ("sec-fetch-site", "cross-site")
        ])));
        assert!(!is_same_origin(&headers(&[host])));
    }
}
