//! Ingest's errors at its HTTP boundary, rendered as problem details.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use shared::problem::{Problem, RejectedRecord};
use shared::validation::FieldError;

/// Seconds a client should wait after the log refused a write.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 2;

/// Why a plugin write was refused.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// Already rendered (authentication).
    #[error("{}", .0.detail)]
    Problem(Box<Problem>),
    /// The body is not JSON (415).
    #[error("unsupported media type")]
    UnsupportedMediaType,
    /// Unsupported `Content-Encoding` (415).
    #[error("unsupported content encoding {0}")]
    UnsupportedEncoding(String),
    /// Body or batch over the limits (413).
    #[error("{0}")]
    TooLarge(String),
    /// Not JSON, or not the expected shape (400).
    #[error("{detail}")]
    Malformed {
        /// What is wrong.
        detail: String,
        /// Field-level problems.
        errors: Vec<FieldError>,
    },
    /// Every record broke a rule (422).
    #[error("{detail}")]
    Rejected {
        /// The problem code: the single record's own code, or `validation_failed`.
        code: String,
        /// What is wrong.
        detail: String,
        /// Each record's problems.
        rejected: Vec<RejectedRecord>,
    },
    /// The body did not arrive within the body read timeout (408).
    #[error("request body not received within {0:?}")]
    BodyTimeout(std::time::Duration),
    /// The event log did not take the write; nothing was stored (503).
    #[error("event log unavailable: {0}")]
    Unavailable(String),
}

fn title_of(code: &str) -> &'static str {
    match code {
        "reserved_prefix" => "Reserved event name prefix",
        "invalid_event_name" => "Invalid event name",
        "too_deep" => "Nested too deeply",
        _ => "Validation failed",
    }
}

impl IntoResponse for IngestError {
    fn into_response(self) -> Response {
        match self {
            IngestError::Problem(problem) => *problem,
            IngestError::UnsupportedMediaType => Problem::unsupported_media_type(),
            IngestError::UnsupportedEncoding(encoding) => Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "Unsupported content encoding",
                format!("Content-Encoding '{encoding}' is not supported; send identity or gzip"),
            ),
            IngestError::TooLarge(detail) => Problem::payload_too_large(detail),
            IngestError::BodyTimeout(limit) => shared::serve::body_timeout_problem(limit),
            IngestError::Malformed { detail, errors } => {
                Problem::malformed_json(detail).with_errors(errors)
            }
            IngestError::Rejected { code, detail, rejected } => {
                let errors = if rejected.len() == 1 { rejected[0].errors.clone() } else { Vec::new() };
                Problem::new(StatusCode::UNPROCESSABLE_ENTITY, &code, title_of(&code), detail)
                    .with_errors(errors)
                    .with_rejected(rejected)
            }
            IngestError::Unavailable(reason) => {
                // The reason names broker internals: log it, don't send it.
                tracing::warn!(%reason, "write refused: event log unavailable");
                metrics::counter!("ingest_unavailable_total").increment(1);
                Problem::unavailable(
                    "the event log cannot take writes right now; nothing was stored, retry after the delay",
                    UNAVAILABLE_RETRY_AFTER_SECS,
                )
            }
        }
        .into_response()
    }
}
