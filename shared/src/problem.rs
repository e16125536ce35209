//! RFC 9457 problem details: the body of every error response, from every service.

use crate::keys::AuthError;
use crate::validation::FieldError;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Where the error catalogue lives; `type` is this followed by the code in kebab case.
pub const ERROR_TYPE_BASE: &str = "https://warden.dev/errors/";

/// One refused record of a batch write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RejectedRecord {
    /// Position of the record in the request (0 for a single record).
    pub index: usize,
    /// Stable code of the first problem, e.g. `validation_failed` or `reserved_prefix`.
    pub code: String,
    /// Every problem found in the record.
    pub errors: Vec<FieldError>,
}

/// A problem-details body, with any headers the response needs.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Problem {
    /// URI naming the kind of problem.
    #[serde(rename = "type")]
    pub type_uri: String,
    /// Short summary of the kind of problem.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// Stable snake_case identifier of the problem.
    pub code: String,
    /// What went wrong in this request, and how to fix it.
    pub detail: String,
    /// Field-level problems, when there are any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
    /// For a write whose every record was refused: each record's problems.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<Vec<RejectedRecord>>,
    #[serde(skip)]
    #[schema(ignore)]
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Problem {
    /// A problem of `status` with a stable `code`.
    pub fn new(status: StatusCode, code: &str, title: &str, detail: impl Into<String>) -> Self {
        Self {
            type_uri: format!("{ERROR_TYPE_BASE}{}", code.replace('_', "-")),
            title: title.to_owned(),
            status: status.as_u16(),
            code: code.to_owned(),
            detail: detail.into(),
            errors: Vec::new(),
            rejected: None,
            headers: Vec::new(),
        }
    }

    /// Adds field-level problems.
    pub fn with_errors(mut self, errors: Vec<FieldError>) -> Self {
        self.errors = errors;
        self
    }

    /// Adds the list of refused records.
    pub fn with_rejected(mut self, rejected: Vec<RejectedRecord>) -> Self {
        self.rejected = Some(rejected);
        self
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// The status as a [`StatusCode`].
    pub fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// 404 `not_found`.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", "Not found", detail)
    }

    /// 400 `malformed_json`.
    pub fn malformed_json(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "malformed_json",
            "Malformed JSON",
            detail,
        )
    }

    /// 422 `validation_failed` (or the first error's more specific code).
    pub fn validation(detail: impl Into<String>, errors: Vec<FieldError>) -> Self {
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
            "Validation failed",
            detail,
        )
        .with_errors(errors)
    }

    /// 415 `unsupported_media_type`.
    pub fn unsupported_media_type() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "Unsupported media type",
            "request bodies must be JSON: send Content-Type: application/json",
        )
    }

    /// 413 `payload_too_large`.
    pub fn payload_too_large(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "Payload too large",
            detail,
        )
    }

    /// 503 `unavailable` with `Retry-After`.
    pub fn unavailable(detail: impl Into<String>, retry_after_secs: u64) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "Service unavailable",
            detail,
        )
        .with_header(
            header::RETRY_AFTER,
            HeaderValue::from(retry_after_secs.max(1)),
        )
    }

    /// 500 `internal`: says nothing about the cause (log it where it happened).
    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Internal server error",
            "something went wrong on our side; it has been logged",
        )
    }

    /// 405 with the allowed methods.
    pub fn method_not_allowed() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "Method not allowed",
            "this path does not accept that method; see the Allow header",
        )
    }

    /// The 400/401/403/503 for an authentication failure on an endpoint that needs `needed`.
    pub fn from_auth(error: AuthError, needed: crate::keys::KeyKind) -> Self {
        let bearer = (header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        match error {
            AuthError::Missing => Self::new(
                StatusCode::UNAUTHORIZED,
                "missing_credentials",
                "Missing credentials",
                format!(
                    "send the {} key as Authorization: Bearer <key>",
                    needed.as_str()
                ),
            )
            .with_header(bearer.0, bearer.1),
            AuthError::Invalid => Self::new(
                StatusCode::UNAUTHORIZED,
                "invalid_credentials",
                "Invalid credentials",
                "the key is unknown, malformed, expired or revoked",
            )
            .with_header(bearer.0, bearer.1),
            AuthError::WrongKind { presented } => Self::new(
                StatusCode::FORBIDDEN,
                "wrong_key_type",
                "Wrong key type",
                format!(
                    "this endpoint needs a {} key; a {} key was sent",
                    needed.as_str(),
                    presented.as_str()
                ),
            ),
            AuthError::NotReady => Self::unavailable("the service is starting; retry shortly", 1),
            AuthError::Duplicate => Self::new(
                StatusCode::BAD_REQUEST,
                "duplicate_credentials",
                "Duplicate credentials",
                "send exactly one Authorization header",
            ),
        }
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = self.status_code();
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        for (name, value) in self.headers {
            headers.insert(name, value);
        }
        response
    }
}

/// True when a `Content-Type` value is JSON: `application/json` (any parameters) or
/// `application/*+json`. Anything else on a body-carrying request is a 415.
pub fn is_json_media_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// Fallback for unknown paths: 404 problem details.
pub async fn unknown_path() -> Problem {
    Problem::not_found("no such path; see /api/docs for the API reference")
}

/// Fallback for a known path with the wrong method: 405 problem details (axum adds `Allow`).
pub async fn wrong_method() -> Problem {
    Problem::method_not_allowed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_media_types() {
        assert!(is_json_media_type("application/json"));
        assert!(is_json_media_type("Application/JSON; charset=utf-8"));
        assert!(is_json_media_type("application/problem+json"));
        assert!(!is_json_media_type("text/plain"));
        assert!(!is_json_media_type(""));
        assert!(!is_json_media_type("application/jsonx"));
    }

    #[test]
    fn problem_body_has_the_contract_fields() {
        let p = Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "reserved_prefix",
            "Reserved event name prefix",
            "d",
        );
        let json = serde_json::to_value(&p).expect("serializes");
        assert_eq!(json["type"], "https://warden.dev/errors/reserved-prefix");
        assert_eq!(json["status"], 422);
        assert_eq!(json["code"], "reserved_prefix");
        assert!(json.get("errors").is_none());
    }
}
