//! Request extractors that answer malformed input with our problem details, not axum's text.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, JsonRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;
use shared::problem::Problem;
use shared::serve::{BodyReadTimeout, MAX_BODY_BYTES, body_timeout_problem};

/// A JSON body: 415 without a JSON content type, 413 past [`MAX_BODY_BYTES`], 400 when it is
/// not JSON or not the expected shape.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiJson<T>(pub T);

/// Like [`ApiJson`], but a request without a body (no content type, zero bytes) means
/// `T::default()`: for endpoints whose every field is optional.
#[derive(Debug, Clone, Copy, Default)]
pub struct OptionalApiJson<T>(pub T);

/// Path parameters; one that does not parse (e.g. not a UUID) names nothing, so it is a 404.
#[derive(Debug, Clone, Copy)]
pub struct ApiPath<T>(pub T);

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(shared::problem::is_json_media_type)
}

fn body_rejection(rejection: BytesRejection) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::unreadable(Problem::payload_too_large(format!(
            "request bodies are limited to {MAX_BODY_BYTES} bytes"
        )))
    } else {
        ApiError::unreadable(Problem::malformed_json(
            "the request body could not be read",
        ))
    }
}

/// Reads the whole body within the request's body read timeout (408 past it).
async fn read_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    let limit = BodyReadTimeout::of(req.extensions());
    tokio::time::timeout(limit, Bytes::from_request(req, state))
        .await
        .map_err(|_| ApiError::unreadable(body_timeout_problem(limit)))?
        .map_err(body_rejection)
}

fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // Every body this API takes is an object; serde would also fill a struct from an array
    // (`[]` reads as a struct of defaults), so that is refused here.
    if bytes.trim_ascii_start().first() == Some(&b'[') {
        return Err(ApiError::unreadable(Problem::malformed_json(
            "the body is JSON but not the expected shape: it must be an object, not an array",
        )));
    }
    match axum::Json::<T>::from_bytes(bytes) {
        Ok(axum::Json(value)) => Ok(value),
        Err(JsonRejection::JsonDataError(e)) => {
            Err(ApiError::unreadable(Problem::malformed_json(format!(
                "the body is JSON but not the expected shape: {}",
                e.body_text()
            ))))
        }
        Err(e) => Err(ApiError::unreadable(Problem::malformed_json(format!(
            "the body is not valid JSON: {}",
            e.body_text()
        )))),
    }
}

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers()) {
            return Err(ApiError::unreadable(Problem::unsupported_media_type()));
        }
        let bytes = read_body(req, state).await?;
        parse(&bytes).map(ApiJson)
    }
}

impl<T, S> FromRequest<S> for OptionalApiJson<T>
where
    T: DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let typed = is_json(req.headers());
        let has_type = req.headers().contains_key(header::CONTENT_TYPE);
        let bytes = read_body(req, state).await?;
        if bytes.is_empty() && !has_type {
            return Ok(OptionalApiJson(T::default()));
        }
        if !typed {
            return Err(ApiError::unreadable(Problem::unsupported_media_type()));
        }
        parse(&bytes).map(OptionalApiJson)
    }
}

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(ApiPath(value)),
            Err(_) => Err(ApiError::NotFound(
                "no such resource: the id in the path is not a valid UUID".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[derive(Debug, Default, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct AllDefaults {
        #[serde(default)]
        n: i64,
    }

    #[test]
    fn an_array_is_not_an_object_body() {
        // serde alone reads `[]` as a struct of defaults.
        assert!(serde_json::from_slice::<AllDefaults>(b"[]").is_ok());
        assert!(parse::<AllDefaults>(b"[]").is_err());
        assert!(parse::<AllDefaults>(b"  [1]").is_err());
        assert_eq!(
            parse::<AllDefaults>(br#"{"n": 3}"#).map(|d| d.n).ok(),
            Some(3)
        );
        assert!(parse::<AllDefaults>(b"{}").is_ok());
    }

    fn headers(content_type: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_str(content_type).expect("valid"),
        );
        h
    }

    #[test]
    fn json_content_types() {
        assert!(is_json(&headers("application/json")));
        assert!(is_json(&headers("Application/JSON; charset=utf-8")));
        assert!(is_json(&headers("application/merge-patch+json")));
        assert!(!is_json(&headers("text/plain")));
        assert!(!is_json(&headers("application/jsonx")));
        assert!(!is_json(&HeaderMap::new()));
    }
}
