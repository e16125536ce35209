//! `GET /api/v1/events/stream`: new events as Server-Sent Events, with the list's filters.
//!
//! Each SSE `id` is the event's timeline `seq`; reconnecting with `Last-Event-ID` backfills
//! from the event log with no gap and no repeat. Keep-alive comments go out every 15 s. A
//! subscriber that falls behind gets `event: missed` and is then backfilled from the log.

use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::fanout::{Feed, LiveEvent, LiveEvents};
use crate::routes::events::EventFilter;
use crate::state::AppState;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use futures::{Stream, StreamExt};
use shared::problem::Problem;
use std::convert::Infallible;
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

/// The routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/events/stream", get(stream_events))
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
        (status = 200, description = "text/event-stream; each event's data is an events-list item, its id the seq", content_type = "text/event-stream", body = String),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "A filter or Last-Event-ID is invalid", body = Problem),
    ))]
pub async fn stream_events(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let filter = EventFilter::parse(query.as_deref().unwrap_or(""))?;
    let last_event_id = match headers.get("last-event-id") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<i64>().ok())
                .ok_or_else(|| {
                    ApiError::invalid_field(
                        "Last-Event-ID",
                        "invalid_last_event_id",
                        "must be the id of an event from this stream",
                    )
                })?,
        ),
    };
    let (out, feed) = mpsc::channel(SUBSCRIBER_BUFFER);
    // Subscribe before any backfill, so no event can fall between the two.
    let ring = state.live.subscribe();
    let subscriber = Subscriber {
        live: state.live.clone(),
        account: caller.account_id,
        filter,
        ring,
        out,
    };
    tokio::spawn(subscriber.run(last_event_id, state.shutdown.clone()));
    let stream = ReceiverStream::new(feed).map(|item| Ok(to_sse(item)));
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

fn to_sse(item: Feed) -> Event {
    match item {
        Feed::Event(live) => Event::default()
            .id(live.event.seq.to_string())
            .data(&live.json),
        Feed::Missed { skipped } => Event::default()
            .event("missed")
            .data(format!(r#"{{"skipped":{skipped}}}"#)),
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
