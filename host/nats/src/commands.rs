//! Sends in: a work queue of send commands on `<prefix>.send.<session>`,
//! read by a durable pull consumer and sent through the HTTP API's own send
//! path ([`switchboard_api::messages::send_json`]): the same validation,
//! transforms, records, events and scheduled sends, and the same error
//! codes.
//!
//! A command is the JSON body of `POST /sessions/{id}/messages/{kind}` plus
//! `kind`, an optional `request_id` and an optional `send_at`. Each gets
//! exactly one result on `<prefix>.results.<session>` (published into the
//! events stream with a message id made from the command, so a repeat after
//! a crash is stored once), and on the subject named by its
//! `Switchboard-Reply-To` header when it has one (JetStream answers the
//! publisher's own reply subject with its publish acknowledgement):
//! `{request_id, ok, message_id…}` or `{request_id, ok: false, error: {code,
//! message}}`. The header may only name the session's own replies subject,
//! `<prefix>.replies.<session>`, or one beneath it: the gateway publishes
//! with its own credentials, so a publisher must not choose where (another
//! session's results, or any subject at all). A command naming any other
//! subject is answered `invalid_reply_subject` and not sent.
//!
//! - a command that can never succeed (malformed, unknown session or kind,
//!   refused by a plugin, refused by the network) is answered and taken off
//!   the queue at once;
//! - a passing failure (the session disconnected or reconnecting, the
//!   network failing) is delivered again after a pause that doubles, up to
//!   `command_attempts` deliveries, then answered as failed;
//! - a command is sent under a message id made from its `request_id` (or
//!   its place in the stream), so a command delivered again after its send
//!   went out (the gateway died before acknowledging it) is recognised
//!   (`has_sent`) and answered without a second send, and where the
//!   network cannot tell, the same id is one message on the network.
//!
//! Commands of one session are sent one at a time, in the order they were
//! delivered; sessions go in parallel. Each session that exists gets a
//! reader (a task and a queue) on its first command, retired once it has
//! had nothing to do for `command_worker_idle` or its session is gone;
//! commands whose subject names no session that exists share one reader,
//! which answers them, so a publisher inventing subjects adds no state.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_nats::jetstream::consumer::{AckPolicy, PullConsumer, pull};
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::{AckKind, Message};
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use switchboard_api::AppState;
use switchboard_api::error::ApiError;
use tokio::sync::mpsc;

use crate::Nats;
use crate::config::NatsConfig;

/// The header a command may carry to have its result published there too.
pub const REPLY_HEADER: &str = "Switchboard-Reply-To";

/// Longest `request_id` taken.
const MAX_REQUEST_ID: usize = 256;

/// Commands delivered to the gateway and not yet answered, at most.
const MAX_IN_FLIGHT: i64 = 64;

/// A command read from the queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The send kind (`text`, `image`, …).
    pub kind: String,
    /// The caller's id of the command, echoed in its result.
    pub request_id: Option<String>,
    /// The send body, without `kind` and `request_id`.
    pub body: Value,
}

/// Reads a command's JSON; the error is the one the HTTP API gives.
pub fn parse_command(payload: &[u8]) -> Result<Command, ApiError> {
    let value: Value = serde_json::from_slice(payload).map_err(|e| {
        ApiError::bad_request(
            "malformed_json",
            format!("the command is not valid JSON: {e}"),
        )
    })?;
    let Value::Object(mut fields) = value else {
        return Err(ApiError::bad_request(
            "invalid_body",
            "a command is a JSON object: the send body plus `kind`",
        ));
    };
    let kind = match fields.remove("kind") {
        Some(Value::String(k)) if !k.is_empty() => k,
        Some(_) => {
            return Err(ApiError::invalid_field(
                "kind",
                "must be a send kind such as `text`",
            ));
        }
        None => {
            return Err(ApiError::invalid_field(
                "kind",
                "is required: the send kind, such as `text`",
            ));
        }
    };
    let request_id = match fields.remove("request_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) if !id.is_empty() && id.len() <= MAX_REQUEST_ID => Some(id),
        Some(_) => {
            return Err(ApiError::invalid_field(
                "request_id",
                format!("must be a non-empty string of at most {MAX_REQUEST_ID} bytes"),
            ));
        }
    };
    Ok(Command {
        kind,
        request_id,
        body: Value::Object(fields),
    })
}

/// The message id a command is sent under: the same for every delivery of
/// the same command (its `request_id`, or else its place in the stream).
pub fn command_message_id(session_id: &str, key: &str) -> String {
    let digest = Sha256::digest(format!("{session_id}\n{key}").as_bytes());
    format!("3EB0{}", hex::encode_upper(&digest[..8]))
}

/// Whether a failed send may succeed when tried again later: the session is
/// not connected (yet), its send pacing refused it for now, or the network
/// or the store failed.
pub fn is_passing(e: &ApiError) -> bool {
    matches!(
        e.code.as_ref(),
        "session_not_connected"
            | "send_paced"
            | "invalid_session_state"
            | "session_paused"
            | "network_error"
            | "internal_error"
    )
}

/// How far back a repeated command looks for the scheduled send it made.
const SCHEDULED_LOOKBACK: usize = 1_000;

/// The scheduled send a command made earlier under `message_id`, if one of
/// the session's newest is still `scheduled`, as its answer reported it.
fn already_scheduled(state: &AppState, session: &str, message_id: &str) -> Option<Value> {
    use switchboard_domain::scheduled::ScheduledStatus;
    let pending = state
        .scheduler
        .list(
            Some(session),
            &[ScheduledStatus::Scheduled],
            0,
            SCHEDULED_LOOKBACK,
        )
        .ok()?;
    let send = pending.into_iter().find(|s| s.message_id == message_id)?;
    Some(json!({
        "scheduled_id": send.id,
        "send_at": switchboard_domain::time::iso8601(send.send_at),
        "status": send.status,
    }))
}

/// A result document.
fn result_ok(
    request_id: Option<&str>,
    message_id: &str,
    outcome: Value,
    already_sent: bool,
) -> Value {
    let mut out = Map::new();
    out.insert("request_id".into(), json!(request_id));
    out.insert("ok".into(), Value::Bool(true));
    out.insert("message_id".into(), Value::String(message_id.to_owned()));
    if let Value::Object(fields) = outcome {
        out.extend(fields);
    }
    if already_sent {
        out.insert("already_sent".into(), Value::Bool(true));
    }
    Value::Object(out)
}

fn result_err(request_id: Option<&str>, e: &ApiError) -> Value {
    let mut error = json!({"code": e.code, "message": e.message});
    if let Some(wait) = e.retry_after {
        error["retry_after"] = json!(switchboard_runtime::messages::retry_after_secs(wait));
    }
    json!({
        "request_id": request_id,
        "ok": false,
        "error": error,
    })
}

/// A reader of send commands: its queue, and how many commands are in it
/// or being handled (only the router adds, so none means idle).
struct Worker {
    tx: mpsc::UnboundedSender<Message>,
    queued: Arc<AtomicUsize>,
    last_used: tokio::time::Instant,
}

/// What to do with a delivered command once handled.
enum Verdict {
    /// Answer with this result and take the command off the queue.
    Answer(Value),
    /// Deliver it again after this pause (a passing failure).
    Retry(std::time::Duration, String),
}

impl Nats {
    /// Starts reading the send queue into `state`'s send path; runs until
    /// the gateway stops.
    pub fn start_commands(&self, state: AppState) {
        let nats = self.clone();
        self.inner
            .tasks
            .spawn(async move { nats.command_loop(state).await });
    }

    async fn consumer(&self) -> Result<PullConsumer, String> {
        let config = &self.inner.config;
        let stream = self
            .inner
            .js
            .get_stream(&config.send_stream)
            .await
            .map_err(|e| format!("could not read the send stream: {e}"))?;
        stream
            .create_consumer(pull::Config {
                durable_name: Some(config.send_consumer.clone()),
                description: Some("Switchboard's reader of send commands".into()),
                ack_policy: AckPolicy::Explicit,
                ack_wait: config.command_ack_wait,
                filter_subject: self.inner.subjects.all_sends(),
                // Commands wait in their session's queue while their ack
                // timer runs: a small number in flight keeps the wait short.
                max_ack_pending: MAX_IN_FLIGHT,
                ..Default::default()
            })
            .await
            .map_err(|e| format!("could not create the send consumer: {e}"))
    }

    async fn command_loop(self, state: AppState) {
        let cancel = self.inner.cancel.clone();
        let mut workers: HashMap<String, Worker> = HashMap::new();
        // The one reader of commands that name no session that exists.
        let mut stray: Option<Worker> = None;
        let idle = self.inner.config.command_worker_idle;
        // Often enough that a deleted session's reader goes within a second.
        let every = (idle / 2).clamp(
            std::time::Duration::from_millis(1),
            std::time::Duration::from_secs(1),
        );
        let mut prune = tokio::time::interval(every);
        prune.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while !cancel.is_cancelled() {
            if !self.inner.send_ready.load(Ordering::SeqCst) {
                if self.connected() {
                    self.setup().await;
                }
                if !self.inner.send_ready.load(Ordering::SeqCst) {
                    self.pause(std::time::Duration::from_millis(250)).await;
                    continue;
                }
            }
            let consumer = match self.consumer().await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "the send queue is not readable; trying again");
                    self.inner.send_ready.store(false, Ordering::SeqCst);
                    self.pause(std::time::Duration::from_secs(1)).await;
                    continue;
                }
            };
            let mut messages = match consumer.messages().await {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(error = %e, "could not read the send queue; trying again");
                    self.pause(std::time::Duration::from_secs(1)).await;
                    continue;
                }
            };
            tracing::info!(consumer = %self.inner.config.send_consumer, "reading send commands from NATS");
            loop {
                let next = tokio::select! {
                    m = messages.next() => m,
                    _ = prune.tick() => {
                        self.retire(&state, &mut workers, &mut stray);
                        continue;
                    }
                    _ = cancel.cancelled() => return,
                };
                match next {
                    Some(Ok(msg)) => self.route(&state, &mut workers, &mut stray, msg),
                    Some(Err(e)) => {
                        use async_nats::jetstream::consumer::pull::MessagesErrorKind as K;
                        let fatal = matches!(
                            e.kind(),
                            K::ConsumerDeleted | K::PushBasedConsumer | K::RequestLimitExceeded
                        );
                        tracing::warn!(error = %e, fatal, "reading the send queue");
                        if fatal {
                            break;
                        }
                    }
                    None => break,
                }
            }
        }
    }

    /// Hands a command to its session's reader (started on first use), so
    /// a session's commands go one at a time, in order; a command whose
    /// subject names no session that exists goes to the one shared reader,
    /// which answers it, and leaves nothing behind.
    fn route(
        &self,
        state: &AppState,
        workers: &mut HashMap<String, Worker>,
        stray: &mut Option<Worker>,
        msg: Message,
    ) {
        let session = self
            .inner
            .subjects
            .session_of_send(msg.subject.as_str())
            .filter(|s| state.sessions.exists(s));
        let worker = match session {
            Some(session) => workers
                .entry(session)
                .or_insert_with(|| self.start_worker(state)),
            None => stray.get_or_insert_with(|| self.start_worker(state)),
        };
        worker.last_used = tokio::time::Instant::now();
        worker.queued.fetch_add(1, Ordering::SeqCst);
        if let Err(mpsc::error::SendError(msg)) = worker.tx.send(msg) {
            // Its reader ended (only when the gateway stops): NATS delivers it again.
            worker.queued.fetch_sub(1, Ordering::SeqCst);
            drop(msg);
        }
        self.inner
            .counters
            .command_workers
            .set(i64::try_from(workers.len()).unwrap_or(i64::MAX));
    }

    /// A reader: handles what its queue is given, one at a time, until the
    /// queue is dropped (retired) or the gateway stops.
    fn start_worker(&self, state: &AppState) -> Worker {
        let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
        let queued = Arc::new(AtomicUsize::new(0));
        let (nats, state, left) = (self.clone(), state.clone(), queued.clone());
        let cancel = self.inner.cancel.clone();
        self.inner.tasks.spawn(async move {
            // What is still queued at a stop is delivered again by NATS.
            while let Some(msg) = tokio::select! {
                m = rx.recv() => m,
                _ = cancel.cancelled() => None,
            } {
                nats.handle(&state, msg).await;
                left.fetch_sub(1, Ordering::SeqCst);
            }
        });
        Worker {
            tx,
            queued,
            last_used: tokio::time::Instant::now(),
        }
    }

    /// Retires the readers with nothing queued whose session is gone or that
    /// have been idle for `command_worker_idle` (the shared reader too):
    /// dropping a queue ends its reader, which has nothing left to do.
    fn retire(
        &self,
        state: &AppState,
        workers: &mut HashMap<String, Worker>,
        stray: &mut Option<Worker>,
    ) {
        let idle = self.inner.config.command_worker_idle;
        let keep = |w: &Worker| w.queued.load(Ordering::SeqCst) > 0 || w.last_used.elapsed() < idle;
        workers.retain(|session, w| {
            w.queued.load(Ordering::SeqCst) > 0 || (keep(w) && state.sessions.exists(session))
        });
        if stray.as_ref().is_some_and(|w| !keep(w)) {
            *stray = None;
        }
        self.inner
            .counters
            .command_workers
            .set(i64::try_from(workers.len()).unwrap_or(i64::MAX));
    }

    /// Handles one delivery of a command: sends it (or recognises it as
    /// sent), answers it, and acknowledges it; or puts it back for later.
    async fn handle(&self, state: &AppState, msg: Message) {
        let counters = &self.inner.counters;
        let config = &self.inner.config;
        counters.command_deliveries.inc();
        // The ack timer ran while the command waited in its session's
        // queue: it starts again now.
        let _ = msg.ack_with(AckKind::Progress).await;
        let (stream_seq, delivered) = match msg.info() {
            Ok(info) => (Some(info.stream_sequence), info.delivered.max(1) as u32),
            Err(_) => (None, 1),
        };
        if delivered > 1 {
            counters.command_redeliveries.inc();
        }
        let subject = msg.subject.to_string();
        let session = self.inner.subjects.session_of_send(&subject);
        let asked_reply = msg
            .headers
            .as_ref()
            .and_then(|h| h.get(REPLY_HEADER))
            .map(|v| v.as_str().to_owned());
        // Only the session's own replies subject: the gateway publishes there
        // with its own credentials, so a header must not choose where.
        let (reply_to, refused_reply) = match (asked_reply, session.as_deref()) {
            (Some(r), Some(s)) if self.inner.subjects.is_reply_of(&r, s) => (Some(r), None),
            (Some(r), Some(s)) => (None, Some((r, self.inner.subjects.replies(s)))),
            _ => (None, None),
        };
        let parsed = parse_command(&msg.payload);
        let request_id = parsed.as_ref().ok().and_then(|c| c.request_id.clone());
        let key = request_id.clone().unwrap_or_else(|| match stream_seq {
            Some(seq) => format!("{}:{seq}", config.send_stream),
            // Not from the stream as expected: an id of its own, never shared.
            None => uuid::Uuid::new_v4().to_string(),
        });
        let verdict = match (session.as_deref(), parsed) {
            (None, _) => Verdict::Answer(result_err(
                request_id.as_deref(),
                &ApiError::bad_request(
                    "invalid_subject",
                    format!(
                        "a command's subject is `{}` followed by one session id",
                        self.inner.subjects.send("")
                    ),
                ),
            )),
            (Some(_), _) if refused_reply.is_some() => {
                let (asked, allowed) = refused_reply.clone().unwrap_or_default();
                Verdict::Answer(result_err(
                    request_id.as_deref(),
                    &ApiError::bad_request(
                        "invalid_reply_subject",
                        format!(
                            "`{REPLY_HEADER}` may name only this session's replies subject `{allowed}` or a subject beneath it (`{allowed}.<anything>`), not `{asked}`; the command was not sent"
                        ),
                    ),
                ))
            }
            (Some(_), Err(e)) => Verdict::Answer(result_err(None, &e)),
            (Some(session), Ok(command)) => {
                self.send(state, session, command, &key, delivered).await
            }
        };
        let result_subject = match &session {
            Some(s) => self.inner.subjects.result(s),
            None => {
                let rest = subject.splitn(3, '.').nth(2).unwrap_or("_");
                format!("{}.results.{rest}", config.prefix.trim_matches('.'))
            }
        };
        match verdict {
            Verdict::Retry(delay, why) => {
                counters.command("retried");
                tracing::info!(subject = %subject, delivered, error = %why, delay_ms = delay.as_millis() as u64, "send command failed for now; it will be delivered again");
                if let Err(e) = msg.ack_with(AckKind::Nak(Some(delay))).await {
                    tracing::warn!(error = %e, "could not put a send command back");
                }
            }
            Verdict::Answer(result) => {
                let ok = result["ok"] == Value::Bool(true);
                let body = Bytes::from(serde_json::to_vec(&result).unwrap_or_default());
                let result_id = format!("result:{}:{key}", session.as_deref().unwrap_or(""));
                match self.answer(&result_subject, &result_id, body.clone()).await {
                    Ok(()) => {
                        if let Some(reply) = reply_to {
                            // Best effort: the stream holds the result either way.
                            if let Err(e) = self.inner.client.publish(reply, body).await {
                                tracing::warn!(error = %e, "could not answer a send command's reply subject");
                            }
                        }
                        counters.command(if ok {
                            if result.get("already_sent").is_some() {
                                "already_sent"
                            } else {
                                "ok"
                            }
                        } else {
                            "failed"
                        });
                        if let Err(e) = msg.double_ack().await {
                            tracing::warn!(error = %e, "could not acknowledge a send command; NATS will deliver it again");
                        }
                    }
                    Err(e) => {
                        // No result stored: the command comes back, and a
                        // send that went out is recognised then.
                        tracing::warn!(error = %e, "could not publish a send command's result; it will be delivered again");
                        let delay = NatsConfig::backoff(
                            config.command_retry_base,
                            config.command_retry_max,
                            delivered,
                        );
                        let _ = msg.ack_with(AckKind::Nak(Some(delay))).await;
                    }
                }
            }
        }
    }

    /// Sends a parsed command on `session`; what to answer, or when to try again.
    async fn send(
        &self,
        state: &AppState,
        session: &str,
        command: Command,
        key: &str,
        delivered: u32,
    ) -> Verdict {
        let config = &self.inner.config;
        let message_id = command_message_id(session, key);
        let request_id = command.request_id.as_deref();
        // Delivered before, or a command published again under its
        // request_id: if its send went out (or was scheduled, by its
        // `send_at` or held for a reach-out timelock), it is answered, not
        // sent (or scheduled) twice.
        let repeat = delivered > 1 || request_id.is_some();
        if repeat && let Ok(Some(true)) = state.send.has_sent(session, &message_id).await {
            return Verdict::Answer(result_ok(request_id, &message_id, Value::Null, true));
        }
        if repeat && let Some(earlier) = already_scheduled(state, session, &message_id) {
            return Verdict::Answer(result_ok(request_id, &message_id, earlier, true));
        }
        let sent = switchboard_api::messages::send_json(
            state,
            session,
            &command.kind,
            command.body,
            Some(message_id.clone()),
        )
        .await;
        match sent {
            Ok((_, outcome)) => Verdict::Answer(result_ok(
                request_id,
                &message_id,
                serde_json::to_value(&outcome).unwrap_or(Value::Null),
                false,
            )),
            // A paced send is delivered again no sooner than its pacing
            // said it could go.
            Err(e) if is_passing(&e) && delivered < config.command_attempts => Verdict::Retry(
                NatsConfig::backoff(
                    config.command_retry_base,
                    config.command_retry_max,
                    delivered,
                )
                .max(e.retry_after.unwrap_or_default()),
                format!("{}: {}", e.code, e.message),
            ),
            Err(e) => Verdict::Answer(result_err(request_id, &e)),
        }
    }

    /// Publishes a result into the events stream under `id`, so it is
    /// stored once per command however often it is published.
    async fn answer(&self, subject: &str, id: &str, body: Bytes) -> Result<(), String> {
        let message = PublishMessage::build().payload(body).message_id(id);
        let ack = self
            .inner
            .js
            .send_publish(subject.to_owned(), message)
            .await
            .map_err(|e| e.to_string())?;
        ack.await.map(drop).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_the_send_body_plus_its_kind_and_request_id() {
        let c = parse_command(
            br#"{"kind":"text","request_id":"r1","to":"1@s.whatsapp.net","text":"hi"}"#,
        )
        .unwrap();
        assert_eq!(c.kind, "text");
        assert_eq!(c.request_id.as_deref(), Some("r1"));
        assert_eq!(c.body, json!({"to": "1@s.whatsapp.net", "text": "hi"}));
    }

    #[test]
    fn a_malformed_command_gets_the_http_apis_error_codes() {
        assert_eq!(parse_command(b"{").unwrap_err().code, "malformed_json");
        assert_eq!(parse_command(b"[1]").unwrap_err().code, "invalid_body");
        let no_kind = parse_command(br#"{"to":"x"}"#).unwrap_err();
        assert_eq!(no_kind.code, "invalid_field");
        assert!(no_kind.message.contains("`kind`"), "{}", no_kind.message);
        let bad_id = parse_command(br#"{"kind":"text","request_id":7}"#).unwrap_err();
        assert!(bad_id.message.contains("`request_id`"));
    }

    #[test]
    fn the_same_command_always_gets_the_same_message_id_and_another_a_different_one() {
        let a = command_message_id("s", "r1");
        assert_eq!(a, command_message_id("s", "r1"));
        assert_ne!(a, command_message_id("s", "r2"));
        assert_ne!(a, command_message_id("t", "r1"));
        assert_eq!(a.len(), 20);
        assert!(a.starts_with("3EB0"));
    }

    #[test]
    fn only_a_send_that_could_succeed_later_is_tried_again() {
        // Only the code decides, as the HTTP API names it.
        let e = |code: &'static str| ApiError::bad_request(code, "test");
        assert!(is_passing(&e("session_not_connected")));
        assert!(is_passing(&e("network_error")));
        assert!(is_passing(&e("send_paced")));
        assert!(!is_passing(&e("session_not_found")));
        assert!(!is_passing(&e("rejected_by_plugin")));
        assert!(!is_passing(&e("invalid_field")));
    }
}
