//! `GET /api/v1/events/stream`: the event stream as Server-Sent Events.
//! Each envelope is one SSE event named after the envelope's event, whose
//! data is the envelope JSON (the same document a webhook receives) and
//! whose `id` is the envelope's gateway-wide sequence number.
//!
//! A client that reconnects with `Last-Event-ID` (the header browsers send,
//! or the `last_event_id` query parameter) first gets every recorded
//! envelope after that id that matches its filters, in order, then live
//! ones: the live receiver is subscribed before the log is read, and live
//! envelopes at or below the last replayed id are skipped, so the seam has
//! no gap and no repeat. An id older than the log's retention (or unknown)
//! gets a `reset` event, then live envelopes. A receiver that falls too far
//! behind the live bus is caught up from the log the same way; only when
//! the log cannot (it is off or pruned) does it get `lagged`. Streams end
//! when the gateway stops. A token limited to some sessions gets their
//! envelopes only, and its stream ends when the token is revoked or
//! expires, or when its sessions change (one of them is deleted, or it
//! creates one): the stream holds the set it opened with, so a session
//! recreated under a deleted id, perhaps by another tenant, never reaches
//! it.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use std::collections::VecDeque;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use axum::{Extension, Router};
use futures_util::stream::{self, Stream};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::AppState;
use super::auth::Principal;
use super::error::{ApiError, ApiResult};
use super::extract::ApiQuery;
use crate::domain::event::{Envelope, EventName};
use crate::domain::time::unix_now;
use crate::domain::token::SessionSet;
use switchboard_runtime::events::{EventBus, Resume};
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
    /// Resume after this event id (the `id` of the last event received), as
    /// the `Last-Event-ID` header does; for clients that cannot set headers.
    /// The header wins when both are given.
    #[param(value_type = Option<u64>)]
    last_event_id: Option<String>,
}

/// The id to resume after: the `Last-Event-ID` header, else the query
/// parameter; `None` for a fresh stream.
fn resume_from(headers: &HeaderMap, query: Option<&str>) -> Result<Option<u64>, String> {
    let header = headers
        .get("last-event-id")
        .map(|v| {
            v.to_str()
                .map_err(|_| "`Last-Event-ID` is not text".to_owned())
        })
        .transpose()?;
    let Some(raw) = header.or(query).map(str::trim) else {
        return Ok(None);
    };
    if raw.is_empty() {
        return Ok(None);
    }
    raw.parse::<u64>().map(Some).map_err(|_| {
        format!("`Last-Event-ID` must be the id of an event this gateway sent (a whole number), not `{raw}`")
    })
}

/// Which envelopes a stream receiver wants. `None` means any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamFilter {
    sessions: Option<HashSet<String>>,
    events: Option<HashSet<EventName>>,
    /// The sessions of the token that opened the stream (`None`: the admin
    /// token, every session).
    allowed: Option<SessionSet>,
    /// For a token limited to some sessions: when each of them that existed
    /// at the stream's opening was created (an envelope older than that is
    /// a former session's of the same id, someone else's), and the sequence
    /// number live envelopes start after (a session created later has only
    /// those).
    since: Option<(std::collections::HashMap<String, i64>, u64)>,
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
        Ok(Self {
            sessions,
            events,
            allowed: None,
            since: None,
        })
    }

    /// Whether the receiver wants this envelope.
    pub fn matches(&self, envelope: &Envelope) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|a| a.covers(&envelope.session_id))
            && self.since.as_ref().is_none_or(|(created, live_from)| {
                match created.get(&envelope.session_id) {
                    Some(at) => envelope.timestamp >= *at,
                    None => envelope.seq > *live_from,
                }
            })
            && self
                .sessions
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
    description = "Each envelope is one SSE event named after the envelope's `event`, whose `id` is its gateway-wide sequence number and whose data is the envelope JSON (see `AnyEvent`). Reconnecting with the `Last-Event-ID` header (or `last_event_id`) first replays every recorded envelope after that id that matches the filters, in order, then live ones, with no gap and no repeat. An id older than the retention (EVENT_RETENTION_COUNT, EVENT_RETENTION_SECS) or unknown gets `event: reset` with `data: {\"reason\": …, \"resumed_from\": id}`, then live envelopes. A receiver that falls behind is caught up from the log; only when it cannot be does it get `event: lagged` with `data: {\"missed\": n}`. Keep-alive comments every 15 s.",
    params(StreamQuery),
    responses(
        (status = 200, description = "A `text/event-stream`; each event's `data` is an envelope.", content_type = "text/event-stream", body = StreamEvent),
        crate::openapi::common::ApiErrors,
    )
)]
async fn stream_events(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<StreamQuery>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let mut filter = StreamFilter::parse(query.session.as_deref(), query.events.as_deref())
        .map_err(|m| ApiError::bad_request("invalid_query", m))?;
    // The stream ends with the gateway, or with the token that opened it.
    let stop = state.shutdown.child_token();
    if let Principal::Token(t) = &principal {
        // Watched before the token's sessions are read: a change of them
        // after this read ends the stream, and one before it is what is read.
        let revoked = state.tokens.ended(&t.id);
        let sessions = state
            .tokens
            .get(&t.id)
            .map_or_else(|| t.sessions.clone(), |now| now.sessions);
        filter.allowed = Some(sessions.clone());
        if let SessionSet::Only(ids) = &sessions {
            let created = ids
                .iter()
                .filter_map(|id| {
                    let info = state.sessions.get(id).ok()?;
                    Some((id.clone(), info.record.created_at))
                })
                .collect();
            filter.since = Some((created, state.events.last_seq()));
        }
        let expires = t
            .expires_at
            .map(|at| Duration::from_secs(u64::try_from(at - unix_now()).unwrap_or(0)));
        let stop = stop.clone();
        tokio::spawn(async move {
            let expired = async {
                match expires {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = revoked.cancelled() => {}
                _ = expired => {}
                _ = stop.cancelled() => {}
            }
            stop.cancel();
        });
    }
    let after = resume_from(&headers, query.last_event_id.as_deref())
        .map_err(|m| ApiError::bad_request("invalid_last_event_id", m))?;
    let bus = state.events.clone();
    // Subscribed before the answer leaves, so nothing released after the
    // client sees the headers is missed.
    let (resume, replaying) = match after {
        Some(after) => {
            bus.counters().stream_resumes.inc();
            (bus.resume(after), true)
        }
        None => (bus.resume(bus.last_seq()), false),
    };
    let feed = Feed {
        // A fresh stream skips nothing live.
        cursor: if replaying { resume.cursor() } else { 0 },
        reset: resume.reset().map(str::to_owned),
        resume,
        replaying,
        replay: VecDeque::new(),
        bus,
        filter,
        // Dropping the feed (the client left) ends the token watcher too.
        _ended_with_feed: stop.clone().drop_guard(),
        stop,
        opened: false,
    };
    let events = stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok(event), feed))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// One receiver's position: replaying recorded envelopes, then live.
struct Feed {
    bus: EventBus,
    resume: Resume,
    /// Still reading the log.
    replaying: bool,
    /// A page read from the log, not yet sent.
    replay: VecDeque<Arc<Envelope>>,
    /// The highest sequence number handled (sent or filtered out): a live
    /// envelope at or below it was replayed already.
    cursor: u64,
    /// A `reset` to send first.
    reset: Option<String>,
    filter: StreamFilter,
    stop: CancellationToken,
    _ended_with_feed: tokio_util::sync::DropGuard,
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
        if let Some(reason) = self.reset.take() {
            self.bus.counters().stream_resets.inc();
            let data = serde_json::to_string(&Reset {
                reason,
                resumed_from: self.cursor,
            })
            .unwrap_or_default();
            return Some(
                Event::default()
                    .event("reset")
                    .id(self.cursor.to_string())
                    .data(data),
            );
        }
        loop {
            if let Some(env) = self.replay.pop_front() {
                self.cursor = self.cursor.max(env.seq);
                if self.filter.matches(&env) {
                    self.bus.counters().stream_replayed.inc();
                    return Some(envelope_event(&env));
                }
                continue;
            }
            if self.replaying {
                let page = tokio::select! {
                    _ = self.stop.cancelled() => return None,
                    page = self.resume.next_page() => page,
                };
                if page.is_empty() {
                    self.replaying = false;
                    self.cursor = self.cursor.max(self.resume.cursor());
                } else {
                    self.replay.extend(page);
                }
                continue;
            }
            let got = tokio::select! {
                _ = self.stop.cancelled() => return None,
                got = self.resume.live.recv() => got,
            };
            match got {
                Ok(env) if env.seq <= self.cursor => {}
                Ok(env) => {
                    self.cursor = env.seq;
                    if self.filter.matches(&env) {
                        return Some(envelope_event(&env));
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    // Caught up from the log when it can; else told.
                    self.resume = self.bus.resume(self.cursor);
                    if self.resume.reset().is_none() {
                        self.replaying = true;
                        continue;
                    }
                    self.cursor = self.resume.cursor();
                    self.bus.counters().stream_dropped.inc_by(missed);
                    let data = serde_json::to_string(&Lagged { missed }).unwrap_or_default();
                    return Some(Event::default().event("lagged").data(data));
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

/// The data of a `reset` event: the missed envelopes cannot be replayed.
#[derive(Debug, Serialize)]
struct Reset {
    /// Why (the id is older than the retention, or unknown).
    reason: String,
    /// The id live envelopes continue after (also this event's `id`).
    resumed_from: u64,
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
    Event::default()
        .event(env.event.as_str())
        .id(env.seq.to_string())
        .data(data)
}

/// One event of `GET /api/v1/events/stream`, as Server-Sent Events frame it
/// (the shape OpenAPI 3.2 gives an event-stream item): `event` names it, `id`
/// is the envelope's sequence number and `data` is a JSON text, an envelope
/// (`AnyEvent`, added with the event components) or, for `reset` and
/// `lagged`, their small documents.
pub struct StreamEvent;

impl PartialSchema for StreamEvent {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "One Server-Sent Event: `event` is the envelope's event name (or `reset`, `lagged`), \
                 `id` its sequence number (resume with `Last-Event-ID`), `data` the envelope as JSON \
                 (`AnyEvent`; for `reset`, `{\"reason\": …, \"resumed_from\": id}`; for `lagged`, `{\"missed\": n}`).",
            ))
            .property(
                "event",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .description(Some("The event's name, or `lagged`.")),
            )
            .required("event")
            .property(
                "id",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .description(Some("The envelope's sequence number (absent on `lagged`).")),
            )
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
