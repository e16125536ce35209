//! Customer reviews: written through the admin API, read publicly (published ones only).

use crate::auth::{AdminCaller, AdminRoutes, PublicClient, PublicRoutes};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, patch, post};
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use shared::problem::Problem;
use shared::validation::FieldErrors;
use utoipa::ToSchema;
use uuid::Uuid;

/// A review as the admin API returns it.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct Review {
    /// The review's id (UUIDv7).
    pub id: Uuid,
    /// Who wrote it.
    pub author: String,
    /// 1..=5 stars.
    pub rating: i16,
    /// Optional headline.
    pub title: Option<String>,
    /// The text.
    pub body: String,
    /// Whether the public list shows it.
    pub published: bool,
    /// When it was (last) published; null while unpublished.
    pub published_at: Option<DateTime<Utc>>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// A review as the public list shows it.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct PublicReview {
    /// The review's id.
    pub id: Uuid,
    /// Who wrote it.
    pub author: String,
    /// 1..=5 stars.
    pub rating: i16,
    /// Optional headline.
    pub title: Option<String>,
    /// The text.
    pub body: String,
    /// When it was published.
    pub published_at: DateTime<Utc>,
}

/// Published reviews.
#[derive(Debug, Serialize, ToSchema)]
pub struct PublicReviewList {
    /// Newest first.
    pub items: Vec<PublicReview>,
}

/// Body of `POST /api/admin/reviews`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewReview {
    /// 1..=128 characters.
    #[schema(min_length = 1, max_length = 128, pattern = "^[^\\x00]*$")]
    pub author: String,
    /// 1..=5.
    #[schema(minimum = 1, maximum = 5)]
    #[serde(deserialize_with = "shared::whole_number::deserialize")]
    pub rating: i64,
    /// At most 200 characters.
    #[serde(default)]
    #[schema(min_length = 0, max_length = 200, pattern = "^[^\\x00]*$")]
    pub title: Option<String>,
    /// 1..=10000 characters.
    #[schema(min_length = 1, max_length = 10000, pattern = "^[^\\x00]*$")]
    pub body: String,
    /// Show it on the public list (default false).
    #[serde(default)]
    pub published: bool,
}

/// Body of `PATCH /api/admin/reviews/{id}`: only the fields present change.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewPatch {
    /// 1..=128 characters.
    #[schema(min_length = 1, max_length = 128, pattern = "^[^\\x00]*$")]
    pub author: Option<String>,
    /// 1..=5.
    #[schema(minimum = 1, maximum = 5)]
    #[serde(default, deserialize_with = "shared::whole_number::deserialize")]
    pub rating: Option<i64>,
    /// At most 200 characters; `null` removes the title.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, min_length = 0, max_length = 200, pattern = "^[^\\x00]*$")]
    pub title: Option<Option<String>>,
    /// 1..=10000 characters.
    #[schema(min_length = 1, max_length = 10000, pattern = "^[^\\x00]*$")]
    pub body: Option<String>,
    /// Publishing sets `published_at`; unpublishing clears it.
    pub published: Option<bool>,
}

/// Tells a field sent as `null` (`Some(None)`) from one left out (`None`).
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

fn check(
    author: Option<&str>,
    rating: Option<i64>,
    title: Option<&str>,
    body: Option<&str>,
) -> Result<Option<i16>, ApiError> {
    let mut errors = FieldErrors::new();
    errors.text("author", author, 1, 128);
    let rating = rating.map(|r| i16::try_from(r).ok().filter(|r| (1..=5).contains(r)));
    if rating == Some(None) {
        errors.push("rating", "out_of_range", "must be an integer from 1 to 5");
    }
    errors.text("title", title, 0, 200);
    errors.text("body", body, 1, 10_000);
    errors.into_result().map_err(ApiError::invalid)?;
    Ok(rating.flatten())
}

const REVIEW_COLUMNS: &str = "id, author, rating, title, body, published, published_at, created_at";

/// The admin routes of this resource.
pub fn admin_router() -> AdminRoutes {
    Router::new()
        .route("/api/admin/reviews", post(create_review))
        .route(
            "/api/admin/reviews/{id}",
            patch(update_review).delete(delete_review),
        )
}

/// The public routes of this resource.
pub fn public_router() -> PublicRoutes {
    Router::new().route("/api/public/reviews", get(public_reviews))
}

/// Add a review.
#[utoipa::path(post, path = "/api/admin/reviews", tag = "admin",
    security(("admin_key" = [])),
    request_body = NewReview,
    responses(
        (status = 201, description = "Created", body = Review),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 422, description = "A field breaks its rule", body = Problem),
    ))]
pub async fn create_review(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiJson(new): ApiJson<NewReview>,
) -> Result<(StatusCode, Json<Review>), ApiError> {
    let rating = check(
        Some(&new.author),
        Some(new.rating),
        new.title.as_deref(),
        Some(&new.body),
    )?;
    let review = sqlx::query_as::<_, Review>(&format!(
        "INSERT INTO reviews (id, author, rating, title, body, published, published_at) \
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 THEN now() END) RETURNING {REVIEW_COLUMNS}"
    ))
    .bind(Uuid::now_v7())
    .bind(&new.author)
    .bind(rating)
    .bind(&new.title)
    .bind(&new.body)
    .bind(new.published)
    .fetch_one(&state.pool)
    .await?;
    Ok((StatusCode::CREATED, Json(review)))
}

/// Change some fields of a review.
#[utoipa::path(patch, path = "/api/admin/reviews/{id}", tag = "admin",
    security(("admin_key" = [])),
    params(("id" = Uuid, Path, description = "The review")),
    request_body = ReviewPatch,
    responses(
        (status = 200, description = "The review after the change", body = Review),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown review", body = Problem),
        (status = 422, description = "A field breaks its rule", body = Problem),
    ))]
pub async fn update_review(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(patch): ApiJson<ReviewPatch>,
) -> Result<Json<Review>, ApiError> {
    let title = patch.title.as_ref().and_then(|t| t.as_deref());
    let rating = check(
        patch.author.as_deref(),
        patch.rating,
        title,
        patch.body.as_deref(),
    )?;
    // SET expressions see the row's old values, so `NOT published` means "was unpublished".
    let review = sqlx::query_as::<_, Review>(&format!(
        "UPDATE reviews SET author = COALESCE($2, author), rating = COALESCE($3, rating), \
           title = CASE WHEN $4 THEN $5 ELSE title END, body = COALESCE($6, body), \
           published = COALESCE($7, published), \
           published_at = CASE WHEN $7 IS NULL THEN published_at \
                               WHEN $7 AND NOT published THEN now() \
                               WHEN $7 THEN published_at END, \
           updated_at = now() \
         WHERE id = $1 RETURNING {REVIEW_COLUMNS}"
    ))
    .bind(id)
    .bind(&patch.author)
    .bind(rating)
    .bind(patch.title.is_some())
    .bind(title)
    .bind(&patch.body)
    .bind(patch.published)
    .fetch_optional(&state.pool)
    .await?
    .ok_or_else(|| ApiError::NotFound(format!("there is no review with id {id}")))?;
    Ok(Json(review))
}

/// Delete a review.
#[utoipa::path(delete, path = "/api/admin/reviews/{id}", tag = "admin",
    security(("admin_key" = [])),
    params(("id" = Uuid, Path, description = "The review")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown review", body = Problem),
    ))]
pub async fn delete_review(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<StatusCode, ApiError> {
    let deleted = sqlx::query("DELETE FROM reviews WHERE id = $1")
        .bind(id)
        .execute(&state.pool)
        .await?
        .rows_affected();
    if deleted == 0 {
        return Err(ApiError::NotFound(format!(
            "there is no review with id {id}"
        )));
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Published reviews, newest first (no key needed).
#[utoipa::path(get, path = "/api/public/reviews", tag = "public",
    responses((status = 200, description = "Published reviews, newest first", body = PublicReviewList)))]
pub async fn public_reviews(
    _: PublicClient,
    State(state): State<AppState>,
) -> Result<Json<PublicReviewList>, ApiError> {
    let items = sqlx::query_as::<_, PublicReview>(
        "SELECT id, author, rating, title, body, published_at FROM reviews \
         WHERE published ORDER BY published_at DESC, id DESC",
    )
    .fetch_all(&state.pool)
    .await?;
    Ok(Json(PublicReviewList { items }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn review_rules() {
        assert_eq!(
            check(Some("a"), Some(5), None, Some("b")).ok(),
            Some(Some(5))
        );
        assert!(check(Some(""), Some(5), None, Some("b")).is_err());
        assert!(check(Some("a"), Some(0), None, Some("b")).is_err());
        assert!(check(Some("a"), Some(6), None, Some("b")).is_err());
        assert!(check(Some("a"), Some(70_000), None, Some("b")).is_err());
        assert!(check(Some("a"), Some(3), Some(&"t".repeat(201)), Some("b")).is_err());
        assert!(check(Some("a"), Some(3), None, Some("")).is_err());
        assert_eq!(check(None, None, None, None).ok(), Some(None));
    }

    #[test]
    fn patch_tells_null_from_absent() -> Result<(), serde_json::Error> {
        let cleared: ReviewPatch = serde_json::from_str(r#"{"title":null}"#)?;
        assert_eq!(cleared.title, Some(None));
        let untouched: ReviewPatch = serde_json::from_str("{}")?;
        assert_eq!(untouched.title, None);
        Ok(())
    }
}
