//! Reading a write's body: content type, size and gzip, in the order of contract §2.

use crate::error::IngestError;
use axum::body::{Body, Bytes};
use axum::http::HeaderMap;
use axum::http::header::{CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE};
use flate2::read::GzDecoder;
use shared::problem::is_json_media_type;
use shared::serve::MAX_BODY_BYTES;
use std::io::Read;
use std::time::Duration;

/// Checks the content type, then reads and (if gzipped) inflates the body within the size
/// limit and within `read_timeout` (the request's [`shared::serve::BodyReadTimeout`]; a body
/// trickled in slower than that is a 408).
pub async fn read_json_body(
    headers: &HeaderMap,
    body: Body,
    read_timeout: Duration,
) -> Result<Bytes, IngestError> {
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !is_json_media_type(content_type) {
        return Err(IngestError::UnsupportedMediaType);
    }
    let encoding = headers
        .get(CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if !matches!(encoding.as_str(), "" | "identity" | "gzip") {
        return Err(IngestError::UnsupportedEncoding(encoding));
    }
    let too_large =
        || IngestError::TooLarge(format!("the body must be at most {MAX_BODY_BYTES} bytes"));
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|len| len > MAX_BODY_BYTES) {
        return Err(too_large());
    }
    let raw = tokio::time::timeout(read_timeout, axum::body::to_bytes(body, MAX_BODY_BYTES))
        .await
        .map_err(|_| IngestError::BodyTimeout(read_timeout))?
        .map_err(|_| too_large())?;
    if encoding != "gzip" {
        return Ok(raw);
    }
    let mut inflated = Vec::with_capacity(raw.len() * 4);
    GzDecoder::new(raw.as_ref())
        .take(MAX_BODY_BYTES as u64 + 1)
        .read_to_end(&mut inflated)
        .map_err(|_| IngestError::Malformed {
            detail: "the body is not valid gzip".into(),
            errors: Vec::new(),
        })?;
    if inflated.len() > MAX_BODY_BYTES {
        return Err(IngestError::TooLarge(format!(
            "the body must be at most {MAX_BODY_BYTES} bytes after decompression"
        )));
    }
    Ok(inflated.into())
}

/// A whole body as one `T` (nothing after it); 400 `malformed_json` naming the field when it is
/// not one.
pub fn decode_strict<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, IngestError> {
    let malformed = |field: String, message: String| IngestError::Malformed {
        detail: if field.is_empty() {
            message.clone()
        } else {
            format!("{field}: {message}")
        },
        errors: vec![shared::validation::FieldError {
            field,
            code: "malformed_json".into(),
            message,
        }],
    };
    let mut json = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut json).map_err(|error| {
        let field = error.path().to_string();
        let field = if field == "." { String::new() } else { field };
        malformed(field, error.inner().to_string())
    })?;
    json.end()
        .map_err(|error| malformed(String::new(), error.to_string()))?;
    Ok(value)
}
