//! Reading the live event stream (`GET /api/v1/events/stream`) the way a
//! client would: a streaming HTTP body parsed into Server-Sent Events.

use std::collections::VecDeque;

use serde_json::Value;

use crate::{PATIENCE, TOKEN, TestServer};

/// One Server-Sent Event (comments are skipped).
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// The `event:` field (`message` when absent, as in the SSE standard).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, if any.
    pub id: Option<String>,
}

impl SseEvent {
    /// The data as JSON (panics when it is not).
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).expect("SSE data is JSON")
    }
}

/// An open event stream.
pub struct EventStream {
    resp: reqwest::Response,
    buf: String,
    ready: VecDeque<SseEvent>,
    ended: bool,
}

impl TestServer {
    /// Opens `GET /api/v1/events/stream?<query>` (`query` may be empty) and
    /// checks that it is an event stream. Once this returns, the gateway is
    /// subscribed: every envelope published from now on can be read.
    pub async fn open_stream(&self, query: &str) -> EventStream {
        self.open_stream_after(query, None).await
    }

    /// [`Self::open_stream`] resuming after `last_event_id`, sent as the
    /// `Last-Event-ID` header as a browser's `EventSource` does.
    pub async fn open_stream_after(&self, query: &str, last_event_id: Option<&str>) -> EventStream {
        let mut req = self
            .http()
            .get(format!("{}/api/v1/events/stream?{query}", self.base()))
            .bearer_auth(TOKEN);
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id);
        }
        let resp = req.send().await.expect("stream request sent");
        EventStream::from_response(resp).await
    }
}

impl EventStream {
    /// The stream of an answer to a stream request made by hand (another
    /// token, other headers); checks it opened.
    pub async fn from_response(resp: reqwest::Response) -> EventStream {
        assert_eq!(resp.status().as_u16(), 200, "the stream opens");
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        assert!(
            content_type.starts_with("text/event-stream"),
            "content type {content_type}"
        );
        let mut stream = EventStream {
            resp,
            buf: String::new(),
            ready: VecDeque::new(),
            ended: false,
        };
        // The gateway opens every stream with a comment; reading it proves the
        // subscription is in place.
        stream.fill().await;
        stream
    }
}

impl TestServer {
    /// The raw answer to `GET /api/v1/events/stream?<query>`, for error cases.
    pub async fn stream_response(&self, query: &str) -> reqwest::Response {
        self.http()
            .get(format!("{}/api/v1/events/stream?{query}", self.base()))
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("stream request sent")
    }
}

impl EventStream {
    /// Reads one more chunk into the buffer and parses whole events out of it;
    /// marks the stream ended when the body ends. Panics after [`PATIENCE`].
    async fn fill(&mut self) {
        let chunk = tokio::time::timeout(PATIENCE, self.resp.chunk())
            .await
            .expect("the event stream stalled")
            .expect("the event stream failed");
        match chunk {
            None => self.ended = true,
            Some(bytes) => {
                self.buf.push_str(&String::from_utf8_lossy(&bytes));
                self.parse();
            }
        }
    }

    fn parse(&mut self) {
        let normalized = self.buf.replace("\r\n", "\n");
        self.buf = normalized;
        while let Some(end) = self.buf.find("\n\n") {
            let block: String = self.buf.drain(..end + 2).collect();
            let mut event = None;
            let mut id = None;
            let mut data: Vec<&str> = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = Some(v.trim_start().to_owned());
                } else if let Some(v) = line.strip_prefix("event:") {
                    event = Some(v.trim_start().to_owned());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            if event.is_some() || !data.is_empty() {
                self.ready.push_back(SseEvent {
                    event: event.unwrap_or_else(|| "message".into()),
                    data: data.join("\n"),
                    id,
                });
            }
        }
    }

    /// The next event; `None` once the gateway ended the stream.
    /// Panics when none comes within [`PATIENCE`].
    pub async fn next(&mut self) -> Option<SseEvent> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            if let Some(e) = self.ready.pop_front() {
                return Some(e);
            }
            if self.ended {
                return None;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no event within {PATIENCE:?}"
            );
            self.fill().await;
        }
    }

    /// The next envelope (the data of the next event), panicking when the
    /// stream ends first.
    pub async fn next_envelope(&mut self) -> Value {
        self.next().await.expect("the stream ended early").json()
    }

    /// Reads envelopes until one satisfies `pred`; returns every envelope read,
    /// the matching one last.
    /// Panics when none matches within [`PATIENCE`].
    pub async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        let mut seen = Vec::new();
        loop {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no matching envelope within {PATIENCE:?}; read: {seen:?}"
            );
            let env = self.next_envelope().await;
            let done = pred(&env);
            seen.push(env);
            if done {
                return seen;
            }
        }
    }

    /// Reads envelopes until one satisfies `pred` and returns it.
    pub async fn find(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        self.until(pred).await.pop().expect("one envelope")
    }

    /// Reads until the next envelope of `event` for `session` and returns it.
    pub async fn find_event(&mut self, session: &str, event: &str) -> Value {
        self.find(|e| e["session_id"] == session && e["event"] == event)
            .await
    }
}
