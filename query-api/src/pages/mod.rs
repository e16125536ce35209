//! The staff dashboard: server-rendered pages (askama templates in `query-api/templates/`),
//! enhanced by htmx, behind a team member's session.
//!
//! - One module per page (`/team` is `team.rs`, its template `team.html`).
//! - [`PAGES`] lists the pages of the navigation bar with the [`Area`] each needs and the task
//!   group it sits in ([`nav`]); a member sees the links their role allows ([`Role::allows`])
//!   and a page they may not open answers 403. Adding a page: one line in [`PAGES`], its
//!   module, its template, its router in [`router`].
//! - Every page answers with the headers of [`page_headers`]: a strict Content-Security-Policy
//!   (no inline script or style, nothing from another origin), no caching, no framing.
//! - Forms are plain POSTs answered with a redirect (or the page again, with what went wrong),
//!   so everything works without JavaScript; htmx (`hx-boost`) only makes it smoother.

pub mod activity;
pub mod activity_stream;
pub mod alert_delivery;
pub mod alert_destination;
pub mod alert_rule;
pub mod alerts;
pub mod analytics;
pub mod anticheat;
pub mod appeal;
pub mod appeals;
pub mod assets;
pub mod audit;
pub mod charts;
pub mod chat;
pub mod connect;
pub mod display;
pub mod error;
pub mod events;
pub mod form;
pub mod funnels;
pub mod gate;
pub mod invite;
mod live_feed;
pub mod log_append;
pub mod log_form;
pub mod login;
pub mod nav;
pub mod notes;
pub mod overview;
pub mod params;
pub mod players;
pub mod privacy_settings;
pub mod punish;
pub mod punishments;
pub mod quota;
pub mod servers;
pub mod settings;
pub mod staff;
pub mod team;
pub mod time_zone;

use crate::state::AppState;
use crate::team::{Area, Role};
use axum::Router;
use axum::extract::Request;
use axum::http::HeaderValue;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use error::PageError;
use gate::{PageRoutes, SignedIn, VisitorRoutes};
use nav::{NavEntry, NavGroup};
use shared::gate::mount;

/// One page of the navigation bar.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    /// Where it is.
    pub path: &'static str,
    /// Its name in the bar and its heading.
    pub title: &'static str,
    /// What the member's role must allow.
    pub area: Area,
    /// The task group of the bar it sits in; None for a link of its own.
    pub group: Option<NavGroup>,
}

/// The navigation bar, in order: a group shows where its first page is. Pages built later are
/// listed too: the bar is where a member learns what their role opens.
#[rustfmt::skip]
pub const PAGES: &[Page] = &[
    Page { path: "/", title: "Overview", area: Area::Overview, group: None },
    Page { path: "/servers", title: "Servers", area: Area::Servers, group: None },
    Page { path: "/players", title: "Players", area: Area::Players, group: Some(NavGroup::Moderation) },
    Page { path: "/punishments", title: "Punishments", area: Area::Punishments, group: Some(NavGroup::Moderation) },
    Page { path: "/appeals", title: "Appeals", area: Area::Punish, group: Some(NavGroup::Moderation) },
    Page { path: "/anticheat", title: "Anti-cheat", area: Area::Flags, group: Some(NavGroup::Moderation) },
    Page { path: "/chat", title: "Chat logs", area: Area::ChatLogs, group: Some(NavGroup::Moderation) },
    Page { path: "/staff", title: "Staff", area: Area::Staff, group: Some(NavGroup::Moderation) },
    Page { path: "/events", title: "Events", area: Area::Events, group: Some(NavGroup::Analytics) },
    Page { path: "/analytics/trends", title: "Trends", area: Area::Analytics, group: Some(NavGroup::Analytics) },
    Page { path: "/funnels", title: "Funnels", area: Area::Funnels, group: Some(NavGroup::Analytics) },
    Page { path: "/analytics/retention", title: "Retention", area: Area::Analytics, group: Some(NavGroup::Analytics) },
    Page { path: "/team", title: "Team", area: Area::Members, group: Some(NavGroup::Administration) },
    Page { path: "/alerts", title: "Alerts", area: Area::Alerts, group: Some(NavGroup::Administration) },
    Page { path: "/settings", title: "Settings", area: Area::Settings, group: Some(NavGroup::Administration) },
    Page { path: "/connect", title: "Connect a server", area: Area::Keys, group: Some(NavGroup::Administration) },
    Page { path: "/audit", title: "Audit log", area: Area::Audit, group: Some(NavGroup::Administration) },
];

/// The page at `path` in [`PAGES`].
pub fn page(path: &str) -> Option<&'static Page> {
    PAGES.iter().find(|page| page.path == path)
}

/// What the layout (`shell.html`) shows around every signed-in page.
#[derive(Debug, Clone)]
pub struct Shell {
    /// The page's title.
    pub title: &'static str,
    /// The links and groups this member's role allows.
    pub nav: Vec<NavEntry>,
    /// Whether the header's player search is shown (the role may open Players).
    pub search: bool,
    /// The member's display name.
    pub member_name: String,
    /// Their role.
    pub role: Role,
    /// Their account's name.
    pub account_name: String,
}

impl Shell {
    /// The layout of the page at `path` for this member, or 403 when their role does not allow
    /// it. Every signed-in page handler starts here.
    pub fn for_page(caller: &SignedIn, path: &str) -> Result<Shell, PageError> {
        let page = page(path).ok_or(PageError::NotFound)?;
        let member = caller.member();
        if !member.role.allows(page.area) {
            return Err(PageError::Forbidden {
                title: page.title,
                role: member.role,
            });
        }
        Ok(Shell {
            title: page.title,
            nav: nav::entries(member.role, page.path),
            search: member.role.allows(Area::Players),
            member_name: member.display_name.clone(),
            role: member.role,
            account_name: caller.session.account_name.clone(),
        })
    }
}

/// Renders a template as an HTML answer.
pub fn render(template: &impl askama::Template) -> Result<Response, PageError> {
    Ok(Html(template.render()?).into_response())
}

/// Every page, mounted behind its family's gate, with [`page_headers`] on every answer
/// (redirects and refusals from the gate included).
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(mount(signed_in(), state.clone()))
        .merge(mount(visitor(), state))
        .layer(middleware::from_fn(page_headers))
        .merge(assets::router())
}

/// The pages behind a session.
fn signed_in() -> PageRoutes {
    Router::new()
        .merge(overview::router())
        .merge(servers::router())
        .merge(players::router())
        .merge(punishments::router())
        .merge(anticheat::router())
        .merge(chat::router())
        .merge(notes::router())
        .merge(punish::router())
        .merge(appeals::router())
        .merge(staff::router())
        .merge(events::router())
        .merge(funnels::router())
        .merge(analytics::router())
        .merge(login::signed_in_router())
        .merge(team::router())
        .merge(settings::router())
        .merge(connect::router())
        .merge(alerts::router())
        .merge(alert_destination::router())
        .merge(alert_delivery::router())
        .merge(alert_rule::router())
        .merge(audit::router())
        .merge(time_zone::router())
}

/// The pages anyone may open.
fn visitor() -> VisitorRoutes {
    Router::new()
        .merge(login::router())
        .merge(invite::router())
        .merge(appeal::router())
}

/// Only our own origin may provide scripts, styles, images and answers; forms post only here;
/// nothing may frame a page. No 'unsafe-inline', no 'unsafe-eval' (htmx runs with `allowEval`
/// off, see `base.html`). `img-src data:` is for the empty favicon.
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'self'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
    form-action 'self'; base-uri 'none'";

/// The headers every page answer carries.
async fn page_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
    );
    // Pages hold one member's view of private data: never stored by the browser or a proxy.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    // Caches and htmx's history must not mix a page with the partial of the same URL.
    headers.insert("vary", HeaderValue::from_static("HX-Request, Cookie"));
    response
}
