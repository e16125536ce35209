//! The HTTP boundary's error type: every failure becomes RFC 9457 problem details.

use crate::key_store::KeyStoreError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use shared::keys::{AuthError, KeyKind};
use shared::problem::Problem;
use shared::validation::FieldError;
use uuid::Uuid;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The key was missing, unknown, revoked, or of the wrong kind.
    #[error("authentication failed ({error:?}, needed {needed:?})")]
    Auth {
        /// What went wrong.
        error: AuthError,
        /// The kind the endpoint needs.
        needed: KeyKind,
    },
    /// The body could not be read as JSON of the expected shape (415, 413 or 400).
    #[error("unreadable request: {}", .0.detail)]
    Unreadable(Box<Problem>),
    /// Well-formed input that breaks a rule (422).
    #[error("validation failed: {detail}")]
    Validation {
        /// Summary for the problem's `detail`.
        detail: String,
        /// Every field-level problem.
        errors: Vec<FieldError>,
    },
    /// The path names something that does not exist (404).
    #[error("not found: {0}")]
    NotFound(String),
    /// A refusal with problem details of its own (e.g. 422 `forbidden_address`, 409, 503
    /// `alerts_not_configured`).
    #[error("refused: {}", .0.detail)]
    Refused(Box<Problem>),
    /// A key, account or bucket operation failed.
    #[error(transparent)]
    KeyStore(#[from] KeyStoreError),
    /// A team (member, invite, session) operation failed.
    #[error(transparent)]
    Team(#[from] crate::team::TeamError),
    /// A query failed (500, logged).
    #[error("database query failed")]
    Database(#[from] sqlx::Error),
    /// Stored data could not be turned into a response (500, logged).
    #[error("stored data could not be served")]
    Internal(#[source] anyhow::Error),
}

impl ApiError {
    /// A 422 with one field error.
    pub fn invalid_field(field: &str, code: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        ApiError::Validation {
            detail: format!("{field}: {message}"),
            errors: vec![FieldError {
                field: field.to_owned(),
                code: code.to_owned(),
                message,
            }],
        }
    }

    /// A 422 from a list of field errors.
    pub fn invalid(errors: Vec<FieldError>) -> Self {
        let detail = errors
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect::<Vec<_>>()
            .join("; ");
        ApiError::Validation { detail, errors }
    }

    /// A 415, 413 or 400 about the request itself.
    pub fn unreadable(problem: Problem) -> Self {
        ApiError::Unreadable(Box::new(problem))
    }

    /// The problem details this error answers with (the pages show its title and detail).
    pub fn to_problem(&self) -> Problem {
        match self {
            ApiError::Auth { error, needed } => Problem::from_auth(*error, *needed),
            ApiError::Unreadable(problem) => (**problem).clone(),
            ApiError::Validation { detail, errors } => {
                Problem::validation(detail.clone(), errors.clone())
            }
            ApiError::NotFound(detail) => Problem::not_found(detail.clone()),
            ApiError::Refused(problem) => (**problem).clone(),
            ApiError::KeyStore(error) => key_store_problem(error),
            ApiError::Team(error) => team_problem(error),
            ApiError::Database(_) | ApiError::Internal(_) => Problem::internal(),
        }
    }
}

fn key_store_problem(error: &KeyStoreError) -> Problem {
    match error {
        KeyStoreError::AccountNotFound(id) => not_found("account", *id),
        KeyStoreError::KeyNotFound(id) => not_found("key", *id),
        KeyStoreError::AlreadyRevoked(id) => Problem::new(
            StatusCode::CONFLICT,
            "already_revoked",
            "Key already revoked",
            format!("key {id} is already revoked (or rotated); create a new key instead"),
        ),
        KeyStoreError::Bucket(_) => Problem::unavailable(
            "the key bucket cannot take the change right now; nothing was changed, retry",
            1,
        ),
        KeyStoreError::Rejected(errors) => ApiError::invalid(errors.clone()).to_problem(),
        KeyStoreError::Database(_) | KeyStoreError::Corrupt(_) => Problem::internal(),
    }
}

/// The problem for a team error (shared with the dashboard pages, which show its detail).
pub fn team_problem(error: &crate::team::TeamError) -> Problem {
    use crate::team::TeamError;
    match error {
        TeamError::AccountNotFound(id) => not_found("account", *id),
        TeamError::MemberNotFound(id) => not_found("member", *id),
        TeamError::InviteNotFound(id) => not_found("open invite", *id),
        TeamError::InviteUnusable => Problem::new(
            StatusCode::GONE,
            "invite_unusable",
            "Invite not valid",
            error.to_string(),
        ),
        TeamError::LoginTaken(_) => Problem::new(
            StatusCode::CONFLICT,
            "login_taken",
            "Login taken",
            error.to_string(),
        ),
        TeamError::LastOwner => Problem::new(
            StatusCode::CONFLICT,
            "last_owner",
            "The last owner stays",
            error.to_string(),
        ),
        TeamError::NotAllowed(detail) => Problem::new(
            StatusCode::FORBIDDEN,
            "role_not_allowed",
            "Not allowed for this role",
            detail.clone(),
        ),
        TeamError::Rejected(errors) => ApiError::invalid(errors.clone()).to_problem(),
        TeamError::Corrupt(_) | TeamError::Hashing(_) | TeamError::Database(_) => {
            Problem::internal()
        }
    }
}

fn not_found(what: &str, id: Uuid) -> Problem {
    Problem::not_found(format!("there is no {what} with id {id}"))
}

/// The error and its sources, `: `-separated, for one log line.
fn cause_chain(error: &dyn std::error::Error) -> String {
    let mut chain = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        chain.push_str(": ");
        chain.push_str(&cause.to_string());
        source = cause.source();
    }
    chain
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let problem = self.to_problem();
        if problem.status >= 500 {
            // The one place server-side failures are logged; the body says nothing about them.
            tracing::error!(error = %cause_chain(&self), status = problem.status, "request failed");
        }
        problem.into_response()
    }
}
