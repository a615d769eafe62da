//! `GET /api/v1/events/stream`: the live event stream as Server-Sent Events.
//! Each envelope is one SSE event named after the envelope's event, whose data
//! is the envelope JSON (the same document a webhook receives). A receiver
//! that falls too far behind gets a `lagged` event saying how many envelopes
//! it missed, and goes on. Streams end when the gateway stops.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use futures_util::stream::{self, Stream};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio_util::sync::CancellationToken;

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::ApiQuery;
use crate::domain::event::{Envelope, EventName};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// How often an idle stream sends a keep-alive comment.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The stream route.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/events/stream", get(stream_events))
}

/// Query of the stream: comma-separated lists, both optional.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct StreamQuery {
    /// Session ids, comma-separated (every session when absent or empty; an
    /// unknown id matches nothing).
    session: Option<String>,
    /// Event names or `all`, comma-separated (every event when absent, empty
    /// or with `all`); an unknown name is refused.
    #[param(value_type = Option<Vec<crate::webhooks::SubscribedEvent>>, style = Form, explode = false)]
    events: Option<String>,
}

/// Which envelopes a stream receiver wants. `None` means any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamFilter {
    sessions: Option<HashSet<String>>,
    events: Option<HashSet<EventName>>,
}

fn list(s: Option<&str>) -> Vec<&str> {
    s.unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .collect()
}

impl StreamFilter {
    /// Parses `session` (ids; unknown ids match nothing) and `events` (event
    /// names or `all`; an unknown name is refused, named in the error).
    /// An absent or empty list means any.
    pub fn parse(session: Option<&str>, events: Option<&str>) -> Result<Self, String> {
        let ids = list(session);
        let names = list(events);
        let events = if names.is_empty() || names.contains(&"all") {
            None
        } else {
            let parsed = names
                .iter()
                .map(|n| {
                    EventName::parse(n).ok_or_else(|| {
                        format!("`events` names an unknown event `{n}`; use event names or `all`")
                    })
                })
                .collect::<Result<HashSet<_>, _>>()?;
            Some(parsed)
        };
        let sessions = (!ids.is_empty()).then(|| ids.into_iter().map(str::to_owned).collect());
        Ok(Self { sessions, events })
    }

    /// Whether the receiver wants this envelope.
    pub fn matches(&self, envelope: &Envelope) -> bool {
        self.sessions
            .as_ref()
            .is_none_or(|s| s.contains(&envelope.session_id))
            && self
                .events
                .as_ref()
                .is_none_or(|e| e.contains(&envelope.event))
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/events/stream",
    operation_id = "events_stream",
    tag = "events",
    summary = "The live event stream (Server-Sent Events)",
    description = "Each envelope is one SSE event named after the envelope's `event`, whose data is the envelope JSON (see `AnyEvent`). A receiver that falls behind gets `event: lagged` with `data: {\"missed\": n}` and goes on. Keep-alive comments every 15 s.",
    params(StreamQuery),
    responses(
        (status = 200, description = "A `text/event-stream`; each event's `data` is an envelope.", content_type = "text/event-stream", body = StreamEvent),
        crate::openapi::common::ApiErrors,
    )
)]
async fn stream_events(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<StreamQuery>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let filter = StreamFilter::parse(query.session.as_deref(), query.events.as_deref())
        .map_err(|m| ApiError::bad_request("invalid_query", m))?;
    // Subscribed before the answer leaves, so nothing published after the
    // client sees the headers is missed.
    let feed = Feed {
        rx: state.events.subscribe(),
        dropped: state.events.counters().stream_dropped.clone(),
        filter,
        stop: state.shutdown.clone(),
        opened: false,
    };
    let events = stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok(event), feed))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// One receiver's position in the bus.
struct Feed {
    rx: broadcast::Receiver<Arc<Envelope>>,
    /// Counts envelopes this receiver lost by falling behind.
    dropped: prometheus_client::metrics::counter::Counter,
    filter: StreamFilter,
    stop: CancellationToken,
    opened: bool,
}

impl Feed {
    /// The next SSE event; `None` ends the stream.
    async fn next(&mut self) -> Option<Event> {
        if !self.opened {
            // A first comment flushes the headers at once.
            self.opened = true;
            return Some(Event::default().comment("subscribed"));
        }
        loop {
            let got = tokio::select! {
                _ = self.stop.cancelled() => return None,
                got = self.rx.recv() => got,
            };
            match got {
                Ok(env) if self.filter.matches(&env) => return Some(envelope_event(&env)),
                Ok(_) => {}
                Err(RecvError::Lagged(missed)) => {
                    self.dropped.inc_by(missed);
                    let data = serde_json::to_string(&Lagged { missed }).unwrap_or_default();
                    return Some(Event::default().event("lagged").data(data));
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

/// The data of a `lagged` event: how many envelopes the receiver missed.
#[derive(Debug, Serialize)]
struct Lagged {
    /// Envelopes dropped since the receiver's last event.
    missed: u64,
}

fn envelope_event(env: &Envelope) -> Event {
    let data = serde_json::to_string(env).unwrap_or_else(|e| {
        tracing::error!(error = %e, "could not serialize an envelope for the stream");
        "{}".to_owned()
    });
    Event::default().event(env.event.as_str()).data(data)
}

/// One event of `GET /api/v1/events/stream`, as Server-Sent Events frame it
/// (the shape OpenAPI 3.2 gives an event-stream item): `event` names it and
/// `data` is a JSON text, an envelope (`AnyEvent`, added with the event
/// components) or, for `lagged`, `{"missed": n}`.
pub struct StreamEvent;

impl PartialSchema for StreamEvent {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "One Server-Sent Event: `event` is the envelope's event name (or `lagged`), \
                 `data` the envelope as JSON (`AnyEvent`; for `lagged`, `{\"missed\": n}`).",
            ))
            .property(
                "event",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .description(Some("The event's name, or `lagged`.")),
            )
            .required("event")
            .property(
                "data",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .content_media_type("application/json")
                    .description(Some("The envelope as JSON (`AnyEvent`).")),
            )
            .required("data")
            .into()
    }
}

impl ToSchema for StreamEvent {
    fn name() -> std::borrow::Cow<'static, str> {
        "StreamEvent".into()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn env(session: &str, event: EventName) -> Envelope {
        Envelope::now(session, event, json!({}))
    }

    #[test]
    fn no_filter_matches_everything() {
        let f = StreamFilter::parse(None, None).unwrap();
        assert!(f.matches(&env("a", EventName::Message)));
        assert_eq!(f, StreamFilter::parse(Some(" , "), Some("")).unwrap());
        assert_eq!(f, StreamFilter::parse(None, Some("message,all")).unwrap());
    }

    #[test]
    fn sessions_and_events_both_have_to_match() {
        let f = StreamFilter::parse(Some("a, b,ghost"), Some("message,receipt")).unwrap();
        assert!(f.matches(&env("a", EventName::Message)));
        assert!(f.matches(&env("b", EventName::Receipt)));
        assert!(!f.matches(&env("c", EventName::Message)));
        assert!(!f.matches(&env("a", EventName::Presence)));
    }

    #[test]
    fn an_unknown_event_name_is_refused_by_name() {
        let err = StreamFilter::parse(None, Some("message,telepathy")).unwrap_err();
        assert!(err.contains("`telepathy`"), "{err}");
    }
}
