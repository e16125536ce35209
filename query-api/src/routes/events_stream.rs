//! `GET /api/v1/events/stream`: new events as Server-Sent Events, with the list's filters.
//!
//! Each SSE `id` is the event's timeline `seq`; reconnecting with `Last-Event-ID` backfills
//! from the event log with no gap and no repeat. Keep-alive comments go out every 15 s. A
//! subscriber that falls behind gets `event: missed` and is then backfilled from the log.
//!
//! A key holds at most `MAX_STREAMS_PER_KEY` streams at once (429 `too_many_streams` past
//! it), and its streams end when it does: on a revocation, or at the end of a rotation's
//! grace period, each sends `event: revoked` and closes ([`crate::open_streams`]).
//!
//! [`open`] is the stream itself; the Events page's session route (`crate::pages::events_stream`)
//! serves the same stream to a signed-in member, with its own refusals and ending.

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::fanout::{Feed, LiveEvent, LiveEvents};
use crate::open_streams::{OpenRefused, StreamSlot};
use crate::routes::events::EventFilter;
use crate::state::AppState;
use crate::team::Visibility;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::{Stream, StreamExt};
use shared::keys::{AuthError, KeyKind};
use shared::problem::Problem;
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Events buffered per subscriber before it counts as slow.
const SUBSCRIBER_BUFFER: usize = 256;
/// Keep-alive comment interval (the contract asks for at least every 15 s).
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// `Retry-After` of a `too_many_streams` refusal: a slot frees only when one of the key's own
/// streams ends, which nobody can predict, so a few seconds rather than a hammering 1.
const TOO_MANY_STREAMS_RETRY_SECS: u64 = 5;
/// The `data` of the last event a stream sends when its key stops working.
const REVOKED_DATA: &str = r#"{"code":"key_revoked","detail":"this stream's key was revoked or its rotation grace period ended"}"#;

/// The stream's path; its response lasts as long as the client stays.
pub const PATH: &str = "/api/v1/events/stream";

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route(PATH, get(stream_events))
}

/// Stream the account's new events (Server-Sent Events).
#[utoipa::path(get, path = "/api/v1/events/stream", tag = "events",
    security(("dashboard_key" = [])),
    params(
        ("name" = Option<Vec<String>>, Query, explode = true, description = "Only these event names"),
        ("player_uuid" = Option<Uuid>, Query, description = "Only this player's events"),
        ("from" = Option<String>, Query, description = "occurred_at at or after (RFC 3339)"),
        ("to" = Option<String>, Query, description = "occurred_at before (RFC 3339)"),
        ("internal" = Option<bool>, Query, description = "Include internal events; default false"),
        ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this event's seq"),
    ),
    responses(
        (status = 200, description = "text/event-stream; each event's data is an events-list item, its id the seq. `event: missed` (data `{\"skipped\":N}`) when the subscriber fell behind (it is backfilled right after). When the key is revoked, or its rotation grace period ends, the stream sends `event: revoked` (data `{\"code\":\"key_revoked\",...}`) within 2 s and closes.", content_type = "text/event-stream", body = String),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "A filter or Last-Event-ID is invalid", body = Problem),
        (status = 429, description = "`rate_limited` (the dashboard quota; an open counts as one request), or `too_many_streams`: the key already holds MAX_STREAMS_PER_KEY open streams on this replica (default 20); `Retry-After` is set", body = Problem),
    ))]
pub async fn stream_events(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    // A 429 comes before the 422s of the filters (contract §2's check order).
    let slot = match state.streams.open(caller.key_id) {
        Ok(slot) => slot,
        Err(OpenRefused::TooMany { limit }) => return Ok(too_many_streams(limit, "key")),
        // The key was revoked between authentication and here.
        Err(OpenRefused::KeyEnded) => {
            return Err(ApiError::Auth {
                error: AuthError::Invalid,
                needed: KeyKind::Dashboard,
            });
        }
    };
    let filter = EventFilter::parse(query.as_deref().unwrap_or(""))?;
    let resume = last_event_id(&headers)?;
    let ended = slot.ended();
    let ending = Ending {
        slot,
        ended,
        data: REVOKED_DATA,
    };
    let reader = (caller.account_id, Visibility::KEY);
    Ok(open(&state, reader, filter, resume, ending))
}

/// The `Last-Event-ID` a reconnecting client sent, if any (422 when it is not a seq).
pub fn last_event_id(headers: &HeaderMap) -> Result<Option<i64>, ApiError> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .map(Some)
        .ok_or_else(|| {
            ApiError::invalid_field(
                "Last-Event-ID",
                "invalid_last_event_id",
                "must be the id of an event from this stream",
            )
        })
}

/// What ends a stream besides its client leaving or shutdown: `ended` resolving (its key
/// revoked, its session over), after which the stream sends `event: revoked` with `data` and
/// closes. It holds the stream's `slot`, given back however the stream ends.
pub struct Ending<E> {
    /// The stream's place in its caller's count.
    pub slot: StreamSlot,
    /// Resolves when the caller stops being allowed to read.
    pub ended: E,
    /// The `data` of the last event.
    pub data: &'static str,
}

/// The Server-Sent Events answer of `account_id`'s events under `filter`, as `visibility` may
/// see them, resuming after `resume` (a seq) when set: the stream of `GET
/// /api/v1/events/stream` (a dashboard key) and of the Events page's `GET /events/stream` (a
/// member's session). An event whose properties are withheld from the reader arrives with
/// `{}` as its properties and `"withheld": true`.
pub fn open<E>(
    state: &AppState,
    (account_id, visibility): (Uuid, Visibility),
    filter: EventFilter,
    resume: Option<i64>,
    ending: Ending<E>,
) -> Response
where
    E: Future<Output = ()> + Send + 'static,
{
    let (out, feed) = mpsc::channel(SUBSCRIBER_BUFFER);
    // Subscribe before any backfill, so no event can fall between the two.
    let ring = state.live.subscribe();
    let subscriber = Subscriber {
        live: state.live.clone(),
        account: account_id,
        filter,
        ring,
        out,
    };
    tokio::spawn(subscriber.run(resume, state.shutdown.clone()));
    let events = ReceiverStream::new(feed).map(move |item| to_sse(item, visibility));
    let stream = until_ended(events, ending);
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}

/// 429 `too_many_streams`; `holder` is who holds the streams ("key", "member").
pub fn too_many_streams(limit: usize, holder: &str) -> Response {
    metrics::counter!("sse_streams_refused_total", "reason" => "too_many_streams").increment(1);
    Problem::new(
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_streams",
        "Too many open streams",
        format!(
            "this {holder} already holds {limit} open event streams on this server; close one \
             (or share one stream between your clients) and retry"
        ),
    )
    .with_header(RETRY_AFTER, HeaderValue::from(TOO_MANY_STREAMS_RETRY_SECS))
    .into_response()
}

/// `events` until `ending.ended` resolves, then `event: revoked`, then the end. The stream
/// owns the slot, so the caller's count goes down however the stream ends: this, the client
/// leaving (the body is dropped) or shutdown (the feed ends).
fn until_ended<E>(
    events: impl Stream<Item = Event> + Send + Unpin + 'static,
    ending: Ending<E>,
) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static
where
    E: Future<Output = ()> + Send + 'static,
{
    let Ending { slot, ended, data } = ending;
    let ended = Box::pin(ended);
    futures::stream::unfold(Some((events, ended, slot)), move |open| async move {
        let (mut events, mut ended, slot) = open?;
        tokio::select! {
            // Nothing more is sent once the caller has ended, even what is already queued.
            biased;
            () = &mut ended => {
                metrics::counter!("sse_streams_revoked_total").increment(1);
                drop(slot);
                Some((Ok(Event::default().event("revoked").data(data)), None))
            }
            next = events.next() => next.map(|event| (Ok(event), Some((events, ended, slot)))),
        }
    })
}

fn to_sse(item: Feed, visibility: Visibility) -> Event {
    match item {
        Feed::Event(live) => {
            let event = Event::default().id(live.event.seq.to_string());
            match visibility.event(&live.event) {
                None => event.data(&live.json),
                Some(withheld) => event.data(withheld_json(&withheld)),
            }
        }
        Feed::Missed { skipped } => Event::default()
            .event("missed")
            .data(format!(r#"{{"skipped":{skipped}}}"#)),
    }
}

/// The API JSON of an event whose properties were withheld, marked `"withheld": true`.
fn withheld_json(event: &shared::timeline::TimelineEvent) -> String {
    let json = event.to_api_json();
    match json.strip_suffix('}') {
        Some(open) => format!(r#"{open},"withheld":true}}"#),
        None => json,
    }
}

/// One SSE client's feed: backfill, then live events, until it leaves or shutdown.
struct Subscriber {
    live: LiveEvents,
    account: Uuid,
    filter: EventFilter,
    ring: broadcast::Receiver<Arc<LiveEvent>>,
    out: mpsc::Sender<Feed>,
}

struct SubscriberGauge;

impl SubscriberGauge {
    fn new() -> Self {
        metrics::gauge!("sse_subscribers").increment(1.0);
        SubscriberGauge
    }
}

impl Drop for SubscriberGauge {
    fn drop(&mut self) {
        metrics::gauge!("sse_subscribers").decrement(1.0);
    }
}

impl Subscriber {
    async fn run(mut self, last_event_id: Option<i64>, shutdown: CancellationToken) {
        let _gauge = SubscriberGauge::new();
        // The highest timeline position this subscriber has passed; nothing at or below it
        // is sent again.
        let mut reached = -1;
        if let Some(after) = last_event_id {
            match self.backfill(after).await {
                Some(position) => reached = position,
                None => return,
            }
        }
        loop {
            let next = tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = self.out.closed() => return,
                next = self.ring.recv() => next,
            };
            match next {
                Ok(live) => {
                    if live.event.seq <= reached {
                        continue;
                    }
                    reached = live.event.seq;
                    if self.keeps(&live) && self.out.send(Feed::Event(live)).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(skipped)) => {
                    metrics::counter!("sse_missed_events_total").increment(skipped);
                    if self.out.send(Feed::Missed { skipped }).await.is_err() {
                        return;
                    }
                    if reached >= 0 {
                        match self.backfill(reached).await {
                            Some(position) => reached = reached.max(position),
                            None => return,
                        }
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    fn keeps(&self, live: &LiveEvent) -> bool {
        live.event.account_id == self.account && self.filter.matches(&live.event)
    }

    /// Backfills after `after`; `None` when the subscriber is gone or the log failed.
    async fn backfill(&self, after: i64) -> Option<i64> {
        let keep = |event: &shared::timeline::TimelineEvent| {
            event.account_id == self.account && self.filter.matches(event)
        };
        match self
            .live
            .backfill(self.account, after, keep, &self.out)
            .await
        {
            Ok(reached) => reached,
            Err(error) => {
                tracing::warn!(%error, account_id = %self.account, "stream backfill failed; closing the stream");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::team::Role;

    #[test]
    fn a_withheld_event_keeps_its_place_without_its_values() -> serde_json::Result<()> {
        let at = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default();
        let event = shared::timeline::TimelineEvent {
            account_id: Uuid::nil(),
            id: Uuid::from_u128(1),
            seq: 42_000,
            name: "chat_message".into(),
            is_internal: true,
            player_uuid: Some(Uuid::from_u128(2)),
            server_id: None,
            properties: r#"{"message":"a secret"}"#.into(),
            occurred_at: at,
            received_at: at,
        };
        let Some(withheld) = Visibility::member(Role::Moderator).event(&event) else {
            panic!("a moderator does not see chat lines");
        };
        let json: serde_json::Value = serde_json::from_str(&withheld_json(&withheld))?;
        assert_eq!(json["properties"], serde_json::json!({}));
        assert_eq!(json["withheld"], true);
        assert_eq!(
            (json["seq"].as_i64(), &json["name"]),
            (Some(42_000), &"chat_message".into())
        );
        assert!(Visibility::member(Role::Admin).event(&event).is_none());
        Ok(())
    }
}
