//! What the per-player history lists (punishments, flags, chatlog) share: the "has this
//! account seen the player" check, and keyset paging with `?limit` and `?cursor`.

use crate::error::ApiError;
use shared::validation::FieldErrors;
use sqlx::{PgPool, Postgres, QueryBuilder};
use uuid::Uuid;

pub use super::paging::{DEFAULT_LIMIT, MAX_LIMIT};

/// Where a history page ends: the last item's time and id.
pub type HistoryCursor = super::paging::KeysetCursor<Uuid>;

/// `?limit` (1..=500, default 50) and `?cursor` of a history list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// Page size.
    pub limit: i64,
    /// Continue after this position.
    pub cursor: Option<HistoryCursor>,
}

impl PageRequest {
    /// Parses a raw query string; other parameters are ignored.
    pub fn parse(query: &str) -> Result<PageRequest, ApiError> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).map_err(|_| {
            ApiError::invalid_field(
                "query",
                "malformed_query",
                "the query string is not URL-encoded",
            )
        })?;
        let mut page = PageRequest {
            limit: DEFAULT_LIMIT,
            cursor: None,
        };
        let mut errors = FieldErrors::new();
        for (key, value) in pairs {
            match key.as_str() {
                "limit" => match value.parse::<i64>() {
                    Ok(limit) if (1..=MAX_LIMIT).contains(&limit) => page.limit = limit,
                    _ => errors.push(
                        "limit",
                        "out_of_range",
                        format!("must be an integer from 1 to {MAX_LIMIT}"),
                    ),
                },
                "cursor" => match HistoryCursor::parse(&value) {
                    Some(cursor) => page.cursor = Some(cursor),
                    None => errors.push(
                        "cursor",
                        "invalid_cursor",
                        "not a cursor from this API: pass next_cursor back unchanged",
                    ),
                },
                _ => {}
            }
        }
        errors.into_result().map_err(ApiError::invalid)?;
        Ok(page)
    }

    /// Appends ` AND (time, id) < (cursor)` when there is a cursor, then the newest-first
    /// order and a limit one past the page (that extra row says whether there is a next page).
    ///
    /// `time` and `id` are the columns of the list's `(…, time DESC, id DESC)` index, so a page
    /// is one index range however deep it is: no OFFSET, no sort.
    pub fn push_keyset(&self, sql: &mut QueryBuilder<'_, Postgres>, time: &str, id: &str) {
        if let Some(cursor) = self.cursor {
            sql.push(format!(" AND ({time}, {id}) < ("))
                .push_bind(cursor.at)
                .push(", ")
                .push_bind(cursor.key)
                .push(")");
        }
        sql.push(format!(" ORDER BY {time} DESC, {id} DESC LIMIT "))
            .push_bind(self.limit + 1);
    }

    /// Cuts rows fetched by [`PageRequest::push_keyset`] to the page, with its `next_cursor`
    /// (None at the end).
    pub fn finish<T>(
        &self,
        mut rows: Vec<T>,
        position: impl Fn(&T) -> HistoryCursor,
    ) -> (Vec<T>, Option<String>) {
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next = more
            .then(|| rows.last())
            .flatten()
            .map(|last| position(last).encode());
        (rows, next)
    }
}

/// A 404 unless the account has seen the player (it has a `players` row).
pub async fn require_player(pool: &PgPool, account_id: Uuid, player: Uuid) -> Result<(), ApiError> {
    let seen = sqlx::query_scalar::<_, bool>(
        "SELECT EXISTS (SELECT 1 FROM players WHERE account_id = $1 AND uuid = $2)",
    )
    .bind(account_id)
    .bind(player)
    .fetch_one(pool)
    .await?;
    if seen {
        Ok(())
    } else {
        Err(player_not_found(player))
    }
}

/// The 404 for a player the account has never seen.
pub fn player_not_found(player: Uuid) -> ApiError {
    ApiError::NotFound(format!("no player {player} has been seen on this account"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn field_codes(query: &str) -> Vec<(String, String)> {
        match PageRequest::parse(query) {
            Err(ApiError::Validation { errors, .. }) => {
                errors.into_iter().map(|e| (e.field, e.code)).collect()
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn cursor_round_trips() {
        let cursor = HistoryCursor {
            at: DateTime::from_timestamp_micros(1_735_689_600_123_456).expect("valid"),
            key: Uuid::nil(),
        };
        assert_eq!(
            cursor.encode(),
            "1735689600123456_00000000-0000-0000-0000-000000000000"
        );
        assert_eq!(HistoryCursor::parse(&cursor.encode()), Some(cursor));
        for bad in [
            "",
            "x",
            "1_",
            "_00000000-0000-0000-0000-000000000000",
            "1_2",
        ] {
            assert_eq!(HistoryCursor::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn limits_and_cursors_are_checked() -> Result<(), ApiError> {
        assert_eq!(PageRequest::parse("")?.limit, DEFAULT_LIMIT);
        assert_eq!(PageRequest::parse("limit=500&x=y")?.limit, 500);
        assert_eq!(PageRequest::parse("limit=1")?.limit, 1);
        for bad in ["limit=0", "limit=501", "limit=ten", "limit=2.5", "limit=-1"] {
            assert_eq!(
                field_codes(bad),
                [("limit".into(), "out_of_range".into())],
                "{bad}"
            );
        }
        assert_eq!(
            field_codes("cursor=abc"),
            [("cursor".into(), "invalid_cursor".into())]
        );
        Ok(())
    }

    #[test]
    fn finish_reports_a_next_page_only_when_there_is_one() -> Result<(), ApiError> {
        let page = PageRequest::parse("limit=2")?;
        let at = |i: i64| HistoryCursor {
            at: DateTime::from_timestamp_micros(i).expect("valid"),
            key: Uuid::nil(),
        };
        let (items, next) = page.finish(vec![3, 2, 1], |i| at(*i));
        assert_eq!((items, next), (vec![3, 2], Some(at(2).encode())));
        let (items, next) = page.finish(vec![3, 2], |i| at(*i));
        assert_eq!((items, next), (vec![3, 2], None));
        Ok(())
    }
}
