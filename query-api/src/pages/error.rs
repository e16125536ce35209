//! What a page answers when it cannot show itself: an HTML page with a clear message and the
//! right status (403 for a role that may not, 404, 400, 429, 500), never JSON.

use crate::error::ApiError;
use crate::team::{Role, TeamError};
use askama::Template;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

/// Why a page could not be shown.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// The member's role does not allow the page (`title`).
    #[error("the {role} role does not allow {title}")]
    Forbidden {
        /// The page's title.
        title: &'static str,
        /// The member's role.
        role: Role,
    },
    /// A state-changing request from another origin.
    #[error("cross-origin request refused")]
    CrossOrigin,
    /// Nothing here.
    #[error("not found")]
    NotFound,
    /// A form that could not be read.
    #[error("unreadable form: {0}")]
    BadForm(String),
    /// Too many attempts; try again after this many seconds.
    #[error("throttled")]
    Throttled(u64),
    /// A failure with a problem-details meaning (422, 409, 403, 404, or a logged 500).
    #[error(transparent)]
    Api(#[from] ApiError),
    /// Rendering a template failed (500, logged).
    #[error("rendering failed")]
    Render(#[from] askama::Error),
}

impl From<TeamError> for PageError {
    fn from(error: TeamError) -> Self {
        PageError::Api(ApiError::Team(error))
    }
}

impl From<sqlx::Error> for PageError {
    fn from(error: sqlx::Error) -> Self {
        PageError::Api(ApiError::Database(error))
    }
}

impl From<crate::key_store::KeyStoreError> for PageError {
    fn from(error: crate::key_store::KeyStoreError) -> Self {
        PageError::Api(ApiError::KeyStore(error))
    }
}

/// The error page.
#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    status: u16,
    title: &'a str,
    message: &'a str,
}

impl PageError {
    /// The status, the heading and the message the page shows.
    pub fn describe(&self) -> (StatusCode, String, String) {
        match self {
            PageError::Forbidden { title, role } => (
                StatusCode::FORBIDDEN,
                "Not available for your role".into(),
                format!(
                    "The {title} page is not available to the {} role. An owner or admin of \
                     your team can change your role.",
                    role.label()
                ),
            ),
            PageError::CrossOrigin => (
                StatusCode::FORBIDDEN,
                "Request refused".into(),
                "This form was not sent from this dashboard, so nothing was changed. Open the \
                 dashboard and try again from there."
                    .into(),
            ),
            PageError::NotFound => (
                StatusCode::NOT_FOUND,
                "Page not found".into(),
                "There is no page here.".into(),
            ),
            PageError::BadForm(detail) => (
                StatusCode::BAD_REQUEST,
                "The form could not be read".into(),
                detail.clone(),
            ),
            PageError::Throttled(wait) => (
                StatusCode::TOO_MANY_REQUESTS,
                "Too many attempts".into(),
                format!("Too many attempts. Try again in {wait} seconds."),
            ),
            PageError::Api(error) => {
                let problem = error.to_problem();
                let status = StatusCode::from_u16(problem.status)
                    .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                (status, problem.title, problem.detail)
            }
            PageError::Render(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong".into(),
                "The page could not be shown. Try again in a moment.".into(),
            ),
        }
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let (status, title, message) = self.describe();
        if status.is_server_error() {
            // The one place a page's server-side failure is logged; the page says nothing of it.
            let mut chain = self.to_string();
            let mut source = std::error::Error::source(&self);
            while let Some(cause) = source {
                chain.push_str(": ");
                chain.push_str(&cause.to_string());
                source = cause.source();
            }
            tracing::error!(error = %chain, status = status.as_u16(), "page failed");
        }
        let page = ErrorPage {
            status: status.as_u16(),
            title: &title,
            message: &message,
        };
        let body = page
            .render()
            .unwrap_or_else(|_| format!("{} {title}: {message}", status.as_u16()));
        let mut response = (status, Html(body)).into_response();
        if let PageError::Throttled(wait) = self {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(wait));
        }
        response
    }
}
