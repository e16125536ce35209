//! Reading an HTML form (`application/x-www-form-urlencoded`) into a struct, with a 400 page
//! (not axum's plain text) when it cannot be read.

use super::error::PageError;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use serde::de::DeserializeOwned;

/// A form body of type `T`.
#[derive(Debug, Clone)]
pub struct Form<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Form<T> {
    type Rejection = PageError;

    async fn from_request(request: Request, state: &S) -> Result<Self, PageError> {
        let is_form = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.split(';').next().is_some_and(|m| {
                    m.trim()
                        .eq_ignore_ascii_case("application/x-www-form-urlencoded")
                })
            });
        if !is_form {
            return Err(PageError::BadForm(
                "send the form as application/x-www-form-urlencoded".into(),
            ));
        }
        let body = Bytes::from_request(request, state)
            .await
            .map_err(|_| PageError::BadForm("the form could not be read".into()))?;
        serde_urlencoded::from_bytes(&body)
            .map(Form)
            .map_err(|error| PageError::BadForm(format!("the form is incomplete: {error}")))
    }
}
