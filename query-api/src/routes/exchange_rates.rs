//! Exchange rates for credit pricing (GBP base): replaced by the admin API, read publicly.

use crate::auth::{AdminCaller, AdminRoutes, PublicClient, PublicRoutes};
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;
use axum::extract::State;
use axum::routing::{get, put};
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use shared::problem::Problem;
use shared::validation::FieldErrors;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The only base currency.
pub const BASE_CURRENCY: &str = "GBP";

/// Body of `PUT /api/admin/exchange-rates`: the whole table.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RatesUpdate {
    /// Must be "GBP".
    #[schema(example = "GBP", pattern = "^GBP$")]
    pub base: String,
    /// Units of each currency per 1 GBP; codes are 3 upper-case letters, rates finite and > 0.
    #[schema(example = json!({"USD": 1.27, "EUR": 1.17}))]
    pub rates: BTreeMap<String, f64>,
}

/// The current rates.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExchangeRates {
    /// Always "GBP".
    pub base: String,
    /// Units of each currency per 1 GBP; GBP itself is always present as 1.0.
    pub rates: BTreeMap<String, f64>,
    /// When the table was last replaced; null if it never was.
    pub updated_at: Option<DateTime<Utc>>,
}

impl RatesUpdate {
    /// The rules beyond the JSON shape.
    fn check(&self) -> Result<(), ApiError> {
        let mut errors = FieldErrors::new();
        if self.base != BASE_CURRENCY {
            errors.push(
                "base",
                "unsupported_base",
                "the base currency must be \"GBP\"",
            );
        }
        for (code, rate) in &self.rates {
            let field = format!("rates.{code}");
            if !is_currency_code(code) {
                errors.push(
                    &field,
                    "invalid_currency",
                    "currency codes are ISO 4217: three upper-case letters",
                );
            }
            if !rate.is_finite() || *rate <= 0.0 {
                errors.push(
                    &field,
                    "out_of_range",
                    "a rate must be a finite number above 0",
                );
            } else if code == BASE_CURRENCY && *rate != 1.0 {
                errors.push(&field, "out_of_range", "the base currency's rate is 1.0");
            }
        }
        if self.rates.len() > 500 {
            errors.push("rates", "too_many", "at most 500 currencies");
        }
        errors.into_result().map_err(ApiError::invalid)
    }
}

fn is_currency_code(code: &str) -> bool {
    code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase())
}

/// The admin routes of this resource.
pub fn admin_router() -> AdminRoutes {
    Router::new().route("/api/admin/exchange-rates", put(put_rates))
}

/// The public routes of this resource.
pub fn public_router() -> PublicRoutes {
    Router::new().route("/api/public/exchange-rates", get(public_rates))
}

/// Replace the whole exchange-rate table.
#[utoipa::path(put, path = "/api/admin/exchange-rates", tag = "admin",
    security(("admin_key" = [])),
    request_body = RatesUpdate,
    responses(
        (status = 200, description = "The rates now in force", body = ExchangeRates),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 422, description = "Base not GBP, a bad code or a bad rate", body = Problem),
    ))]
pub async fn put_rates(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiJson(update): ApiJson<RatesUpdate>,
) -> Result<Json<ExchangeRates>, ApiError> {
    update.check()?;
    let mut rates = update.rates;
    rates.insert(BASE_CURRENCY.to_owned(), 1.0);
    let (codes, values): (Vec<String>, Vec<f64>) = rates.into_iter().unzip();
    let mut tx = state.pool.begin().await?;
    // Writers take turns (readers are not blocked): two concurrent replacements would
    // otherwise both delete the old rows and then collide inserting the new ones.
    sqlx::query("LOCK TABLE exchange_rates IN SHARE ROW EXCLUSIVE MODE")
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM exchange_rates")
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO exchange_rates (currency, rate, updated_at) \
         SELECT code, rate, now() FROM UNNEST($1::text[], $2::float8[]) AS t(code, rate)",
    )
    .bind(&codes)
    .bind(&values)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    read_rates(&state).await.map(Json)
}

/// The current exchange rates, GBP base (no key needed).
#[utoipa::path(get, path = "/api/public/exchange-rates", tag = "public",
    responses((status = 200, description = "Current rates", body = ExchangeRates)))]
pub async fn public_rates(
    _: PublicClient,
    State(state): State<AppState>,
) -> Result<Json<ExchangeRates>, ApiError> {
    read_rates(&state).await.map(Json)
}

async fn read_rates(state: &AppState) -> Result<ExchangeRates, ApiError> {
    let rows: Vec<(String, f64, DateTime<Utc>)> =
        sqlx::query_as("SELECT currency::text, rate, updated_at FROM exchange_rates")
            .fetch_all(&state.pool)
            .await?;
    let updated_at = rows.iter().map(|(_, _, at)| *at).max();
    let mut rates: BTreeMap<String, f64> = rows.into_iter().map(|(c, r, _)| (c, r)).collect();
    rates.insert(BASE_CURRENCY.to_owned(), 1.0);
    Ok(ExchangeRates {
        base: BASE_CURRENCY.to_owned(),
        rates,
        updated_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(base: &str, rates: &[(&str, f64)]) -> RatesUpdate {
        RatesUpdate {
            base: base.into(),
            rates: rates.iter().map(|(c, r)| ((*c).to_owned(), *r)).collect(),
        }
    }

    #[test]
    fn rate_rules() {
        assert!(
            update("GBP", &[("USD", 1.27), ("EUR", 1.17)])
                .check()
                .is_ok()
        );
        assert!(update("GBP", &[]).check().is_ok());
        assert!(update("GBP", &[("GBP", 1.0)]).check().is_ok());
        assert!(update("USD", &[("EUR", 1.0)]).check().is_err());
        assert!(update("GBP", &[("usd", 1.0)]).check().is_err());
        assert!(update("GBP", &[("US", 1.0)]).check().is_err());
        assert!(update("GBP", &[("USDX", 1.0)]).check().is_err());
        assert!(update("GBP", &[("USD", 0.0)]).check().is_err());
        assert!(update("GBP", &[("USD", -1.0)]).check().is_err());
        assert!(update("GBP", &[("USD", f64::INFINITY)]).check().is_err());
        assert!(update("GBP", &[("GBP", 2.0)]).check().is_err());
    }
}
