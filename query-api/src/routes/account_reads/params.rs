//! Query parameters the account-wide lists share: UUID, time, boolean and text filters,
//! parsed into field errors (one 422 naming every bad parameter), and the SQL they add.

use crate::error::ApiError;
use crate::routes::history::PageRequest;
use crate::routes::paging::query_pairs;
use chrono::{DateTime, Utc};
use shared::validation::FieldErrors;
use sqlx::{PgPool, Postgres, QueryBuilder};
use uuid::Uuid;

/// Longest text filter (a name, a channel, a keyword), in characters.
pub const MAX_TEXT: usize = 100;

/// The raw pairs of a query string plus the paging and time range every list takes.
#[derive(Debug, Default)]
pub struct ListParams {
    /// `?limit` and `?cursor`.
    pub page: PageRequest,
    /// `?from` (inclusive).
    pub from: Option<DateTime<Utc>>,
    /// `?to` (exclusive).
    pub to: Option<DateTime<Utc>>,
    /// Every other `key=value` pair, for the list's own filters.
    pub rest: Vec<(String, String)>,
}

impl ListParams {
    /// Takes paging and the time range out of `query`, recording bad values in `errors`.
    pub fn parse(query: Option<&str>, errors: &mut FieldErrors) -> Result<ListParams, ApiError> {
        let mut params = ListParams::default();
        for (key, value) in query_pairs(query.unwrap_or(""))? {
            if params.page.take(&key, &value, errors) {
                continue;
            }
            match key.as_str() {
                "from" => params.from = time(errors, "from", &value),
                "to" => params.to = time(errors, "to", &value),
                _ => params.rest.push((key, value)),
            }
        }
        errors.query_time("from", params.from);
        errors.query_time("to", params.to);
        if let (Some(from), Some(to)) = (params.from, params.to)
            && from > to
        {
            errors.push("from", "out_of_range", "from must not be after to");
        }
        Ok(params)
    }

    /// Appends ` AND from <= column AND column < to` for the bounds given.
    pub fn push_range(&self, sql: &mut QueryBuilder<'_, Postgres>, column: &str) {
        push_range(sql, column, self.from, self.to);
    }
}

/// Appends ` AND from <= column AND column < to` for the bounds given.
pub fn push_range(
    sql: &mut QueryBuilder<'_, Postgres>,
    column: &str,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
) {
    if let Some(from) = from {
        sql.push(format!(" AND {column} >= ")).push_bind(from);
    }
    if let Some(to) = to {
        sql.push(format!(" AND {column} < ")).push_bind(to);
    }
}

/// A player named in a filter: by UUID, or by a name they have or had in the account (the
/// staff pages let a moderator type either).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlayerRef {
    /// Exactly this player.
    Uuid(Uuid),
    /// Every player of the account whose current or past name is this (case-insensitive).
    Name(String),
}

impl PlayerRef {
    /// A UUID when `value` is one, else a name (a [`text`] filter), else an error in `errors`.
    pub fn parse(errors: &mut FieldErrors, field: &str, value: &str) -> Option<PlayerRef> {
        let value = value.trim();
        match Uuid::parse_str(value) {
            Ok(uuid) => Some(PlayerRef::Uuid(uuid)),
            Err(_) => text(errors, field, value).map(PlayerRef::Name),
        }
    }

    /// Appends ` AND <the player is this one>` for a row whose player UUID is `uuid_column`;
    /// `name_column`, when given, is a name the row itself carries (a staff name as the plugin
    /// reported it), matched too. A name is resolved through the account's players and their
    /// past names (`player_names`), both read by `(account_id, lower(name))` indexes.
    pub fn push_match(
        &self,
        sql: &mut QueryBuilder<'_, Postgres>,
        account_id: Uuid,
        uuid_column: &str,
        name_column: Option<&str>,
    ) {
        match self {
            PlayerRef::Uuid(uuid) => {
                sql.push(format!(" AND {uuid_column} = ")).push_bind(*uuid);
            }
            PlayerRef::Name(name) => {
                sql.push(" AND (");
                if let Some(column) = name_column {
                    sql.push(format!("lower({column}) = lower("))
                        .push_bind(name.clone())
                        .push(") OR ");
                }
                sql.push(format!("{uuid_column} IN ("));
                push_named(sql, account_id, name);
                sql.push("))");
            }
        }
    }
}

/// The UUIDs of the account's players whose current or past name is `name`
/// (case-insensitive): what a live feed filtered by a name follows.
pub async fn players_named(
    pool: &PgPool,
    account_id: Uuid,
    name: &str,
) -> Result<Vec<Uuid>, sqlx::Error> {
    let mut sql = QueryBuilder::<Postgres>::new("");
    push_named(&mut sql, account_id, name);
    sql.build_query_scalar().fetch_all(pool).await
}

/// `SELECT` of the UUIDs of the account's players named `name`, now (`players`) or before
/// (`player_names`), each read by its `(account_id, lower(name))` index.
fn push_named(sql: &mut QueryBuilder<'_, Postgres>, account_id: Uuid, name: &str) {
    sql.push("SELECT pl.uuid FROM players pl WHERE pl.account_id = ")
        .push_bind(account_id)
        .push(" AND pl.username IS NOT NULL AND lower(pl.username) = lower(")
        .push_bind(name.to_owned())
        .push(") UNION SELECT pn.player_uuid FROM player_names pn WHERE pn.account_id = ")
        .push_bind(account_id)
        .push(" AND lower(pn.name) = lower(")
        .push_bind(name.to_owned())
        .push(")");
}

/// A UUID parameter, or an `invalid_uuid` error.
pub fn uuid(errors: &mut FieldErrors, field: &str, value: &str) -> Option<Uuid> {
    let parsed = Uuid::parse_str(value).ok();
    if parsed.is_none() {
        errors.push(field, "invalid_uuid", "not a UUID");
    }
    parsed
}

/// An RFC 3339 time parameter, or an `invalid_timestamp` error.
pub fn time(errors: &mut FieldErrors, field: &str, value: &str) -> Option<DateTime<Utc>> {
    let parsed = DateTime::parse_from_rfc3339(value)
        .ok()
        .map(|t| t.with_timezone(&Utc));
    if parsed.is_none() {
        errors.push(
            field,
            "invalid_timestamp",
            "not an RFC 3339 timestamp (e.g. 2025-01-31T12:00:00Z)",
        );
    }
    parsed
}

/// `true`/`false` (or `1`/`0`), or an `invalid_boolean` error.
pub fn boolean(errors: &mut FieldErrors, field: &str, value: &str) -> Option<bool> {
    match value {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => {
            errors.push(field, "invalid_boolean", "must be true or false");
            None
        }
    }
}

/// A non-empty text filter of at most [`MAX_TEXT`] characters without NUL (which PostgreSQL
/// text cannot hold, so it could never match and would fail the query).
pub fn text(errors: &mut FieldErrors, field: &str, value: &str) -> Option<String> {
    if value.is_empty() || value.chars().count() > MAX_TEXT {
        errors.push(
            field,
            "out_of_range",
            format!("must be 1 to {MAX_TEXT} characters"),
        );
        return None;
    }
    if value.contains('\0') {
        errors.push(field, "invalid_characters", shared::validation::NUL_MESSAGE);
        return None;
    }
    Some(value.to_owned())
}

/// `text` as a LIKE pattern that matches it literally: `\`, `%` and `_` escaped (PostgreSQL's
/// default LIKE escape is `\`).
pub fn like_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_match_literally() {
        assert_eq!(like_literal("a_b%c\\d"), "a\\_b\\%c\\\\d");
        assert_eq!(like_literal("Steve"), "Steve");
    }

    #[test]
    fn bad_values_are_field_errors() {
        let mut errors = FieldErrors::new();
        assert_eq!(uuid(&mut errors, "player_uuid", "nope"), None);
        assert_eq!(boolean(&mut errors, "active", "yes"), None);
        assert_eq!(time(&mut errors, "from", "yesterday"), None);
        assert_eq!(text(&mut errors, "q", ""), None);
        assert_eq!(text(&mut errors, "q", "a\0b"), None);
        let codes: Vec<String> = errors
            .into_result()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.code)
            .collect();
        assert_eq!(
            codes,
            [
                "invalid_uuid",
                "invalid_boolean",
                "invalid_timestamp",
                "out_of_range",
                "invalid_characters"
            ]
        );
    }
}
