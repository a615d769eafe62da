//! `bot-bridge`, the reference integration plugin: the shape of a Typebot,
//! OpenAI or n8n bridge. It posts each incoming message to an HTTP endpoint
//! and sends the endpoint's reply back to the chat.
//!
//! Configuration (the binding's JSON):
//!
//! ```json
//! {
//!   "endpoint": "https://bot.example.com/hooks/whatsapp",
//!   "reply_kind": "text",
//!   "headers": { "authorization": "Bearer …" },
//!   "quote": false
//! }
//! ```
//!
//! - `endpoint` (required): an `http://` or `https://` URL. The binding must
//!   grant outbound HTTP to its host; without the grant the gateway refuses
//!   the request and the refusal is the event's error.
//! - `reply_kind` (default `text`): the send kind of the reply.
//! - `headers` (optional): extra request headers, for example an API key.
//! - `quote` (default `false`): whether the reply quotes the incoming message.
//!
//! For each `message` event that is not from the session itself and has a
//! text or caption, the plugin posts
//! `{"session_id", "message_id", "chat", "from", "push_name", "text"}` (the
//! text, or else the caption). A 2xx answer `{"reply": "…"}` is sent to the
//! chat; a 2xx answer without a reply (204, an empty body, no `reply`)
//! sends nothing. Any other status, a failed request or a failed send is
//! the event's error: the host retries it with backoff, then dead-letters
//! it. Delivery is at least once, so an endpoint may see a message again
//! after a retry; `message_id` lets it recognise one.
//!
//! The decisions live in pure functions ([`config`], [`exchange`]) tested
//! natively; the calls to the host and to `wasi:http` are in a thin module.

pub mod config;
pub mod exchange;
mod wasi_effects;

use crate::bindings::exports::switchboard::plugin::{integration, meta};
use crate::bindings::switchboard::plugin::host::{self, LogLevel};
use crate::bindings::switchboard::plugin::types::Event;
use crate::config::{Endpoint, parse_config};
use crate::exchange::{Incoming, reply_of, request_body, request_headers, send_body, text_of};

/// The bindings of the `integration-plugin` world, with the `wasi:http`
/// and `wasi:io` interfaces it uses.
mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/0.2.0",
        world: "integration-plugin",
        // The `wasi:http` and `wasi:io` bindings the world refers to.
        generate_all,
        // The wasi dependencies gate `wasi:clocks/timezone` behind this
        // feature, and this wit-bindgen fails to resolve `wasi:cli`'s gated
        // import of it unless it is on. The world never imports it, so it
        // adds nothing to the bindings or to the component's imports.
        features: ["clocks-timezone"],
    });
}

/// What the bridge needs from outside: the configuration, the HTTP request
/// and the send. Behind a trait so that the whole handling of an event runs
/// in native tests.
trait Effects {
    /// The binding's JSON configuration.
    fn config(&mut self) -> String;

    /// Posts `body` to `endpoint` with `headers`; answers the status and,
    /// when [`exchange::wants_body`] says it matters, the body.
    fn post(
        &mut self,
        endpoint: &Endpoint,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<(u16, Vec<u8>), String>;

    /// Sends a message of `kind` with the JSON `body` from `session_id`;
    /// answers the message id.
    fn send(&mut self, session_id: &str, kind: &str, body: &str) -> Result<String, String>;
}

/// What handling one event came to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// Not an event the bridge forwards, and why.
    Ignored(&'static str),
    /// Forwarded; the endpoint chose not to reply.
    NoReply,
    /// Forwarded and replied to; the id of the sent reply.
    Replied(String),
}

/// The message of `event` when it is one to forward, or why not.
fn incoming(event: &Event) -> Result<Incoming<'_>, &'static str> {
    if event.event != "message" {
        return Err("not a message event");
    }
    let message = event
        .message
        .as_ref()
        .ok_or("a message event without its message")?;
    // The bridge's own replies come back as messages from the session
    // itself; answering them would loop.
    if message.is_from_me {
        return Err("sent by the session itself");
    }
    let text =
        text_of(message.text.as_deref(), message.caption.as_deref()).ok_or("no text or caption")?;
    Ok(Incoming {
        session_id: &event.session_id,
        message_id: &message.message_id,
        chat: &message.chat,
        from: &message.from,
        push_name: &message.push_name,
        text,
    })
}

/// Handles one event: forwards it when it is an incoming message with a
/// text, and sends the endpoint's reply back to the chat.
fn bridge(event: &Event, effects: &mut impl Effects) -> Result<Outcome, String> {
    let incoming = match incoming(event) {
        Ok(incoming) => incoming,
        Err(why) => return Ok(Outcome::Ignored(why)),
    };
    // Read only now: a binding that also subscribes to other events should
    // not fail them over a configuration they never use.
    let config = parse_config(&effects.config())?;
    let body = request_body(&incoming);
    let headers = request_headers(&config.headers, body.len());
    let (status, answer) = effects.post(&config.endpoint, &headers, body.as_bytes())?;
    let Some(reply) = reply_of(status, &answer)? else {
        return Ok(Outcome::NoReply);
    };
    let quoted = config.quote.then_some(incoming.message_id);
    let send = send_body(incoming.chat, &reply, quoted);
    effects
        .send(incoming.session_id, &config.reply_kind, &send)
        .map(Outcome::Replied)
        .map_err(|e| format!("sending the reply failed: {e}"))
}

/// The plugin.
struct BotBridge;

impl meta::Guest for BotBridge {
    fn describe() -> meta::Info {
        meta::Info {
            name: "bot-bridge".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

impl integration::Guest for BotBridge {
    fn handle(event: Event) -> Result<(), String> {
        // Errors are not logged here: the host records each failed attempt
        // with the retry and the dead letter.
        let outcome = bridge(&event, &mut wasi_effects::WasiEffects)?;
        let line = match outcome {
            Outcome::Ignored(why) => format!("ignored {} event: {why}", event.event),
            Outcome::NoReply => "the endpoint did not reply".to_owned(),
            Outcome::Replied(id) => format!("replied with message {id}"),
        };
        host::log(LogLevel::Debug, &line);
        Ok(())
    }
}

bindings::export!(BotBridge with_types_in bindings);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::switchboard::plugin::types::Message;
    use crate::config::Scheme;
    use serde_json::{Value, json};

    /// One request the bridge made.
    struct Post {
        endpoint: Endpoint,
        headers: Vec<(String, String)>,
        body: Value,
    }

    /// Effects that record what the bridge asked for and answer as scripted.
    struct Fake {
        config: String,
        answer: Result<(u16, Vec<u8>), String>,
        send_result: Result<String, String>,
        posts: Vec<Post>,
        sends: Vec<(String, String, Value)>,
    }

    impl Fake {
        fn new(config: Value, answer: Result<(u16, &[u8]), &str>) -> Fake {
            Fake {
                config: config.to_string(),
                answer: answer
                    .map(|(status, body)| (status, body.to_vec()))
                    .map_err(str::to_owned),
                send_result: Ok("SENT1".to_owned()),
                posts: Vec::new(),
                sends: Vec::new(),
            }
        }
    }

    impl Effects for Fake {
        fn config(&mut self) -> String {
            self.config.clone()
        }

        fn post(
            &mut self,
            endpoint: &Endpoint,
            headers: &[(String, String)],
            body: &[u8],
        ) -> Result<(u16, Vec<u8>), String> {
            let body = serde_json::from_slice(body).unwrap();
            self.posts.push(Post {
                endpoint: endpoint.clone(),
                headers: headers.to_vec(),
                body,
            });
            self.answer.clone()
        }

        fn send(&mut self, session_id: &str, kind: &str, body: &str) -> Result<String, String> {
            let body = serde_json::from_str(body).unwrap();
            self.sends
                .push((session_id.to_owned(), kind.to_owned(), body));
            self.send_result.clone()
        }
    }

    fn config() -> Value {
        json!({"endpoint": "http://bot.local:8080/hook?k=1"})
    }

    fn message_event(text: Option<&str>, caption: Option<&str>) -> Event {
        Event {
            session_id: "s1".into(),
            event: "message".into(),
            timestamp: 1_700_000_000,
            offline: Some(false),
            message: Some(Message {
                message_id: "M1".into(),
                from: "111@lid".into(),
                from_phone: Some("111".into()),
                chat: "111@s.whatsapp.net".into(),
                chat_phone: Some("111".into()),
                participant: "111@s.whatsapp.net".into(),
                message_type: "text".into(),
                text: text.map(Into::into),
                caption: caption.map(Into::into),
                is_group: false,
                is_from_me: false,
                push_name: "Ann".into(),
                quoted_id: None,
                media_mimetype: None,
                forwarded: false,
            }),
        }
    }

    #[test]
    fn an_incoming_text_is_posted_and_the_reply_sent_to_the_chat() {
        let mut fake = Fake::new(config(), Ok((200, br#"{"reply": "Hi Ann"}"#)));
        let outcome = bridge(&message_event(Some("hello"), None), &mut fake);
        assert_eq!(outcome, Ok(Outcome::Replied("SENT1".into())));
        let Post {
            endpoint,
            headers,
            body,
        } = &fake.posts[0];
        assert_eq!(endpoint.scheme, Scheme::Http);
        assert_eq!(endpoint.authority, "bot.local:8080");
        assert_eq!(endpoint.path_with_query, "/hook?k=1");
        assert_eq!(
            headers[0],
            ("content-type".into(), "application/json".into())
        );
        assert_eq!(
            *body,
            json!({
                "session_id": "s1", "message_id": "M1", "chat": "111@s.whatsapp.net",
                "from": "111@lid", "push_name": "Ann", "text": "hello",
            })
        );
        assert_eq!(
            fake.sends,
            vec![(
                "s1".to_owned(),
                "text".to_owned(),
                json!({"to": "111@s.whatsapp.net", "text": "Hi Ann"})
            )]
        );
    }

    #[test]
    fn a_caption_is_forwarded_when_there_is_no_text() {
        let mut fake = Fake::new(config(), Ok((204, b"")));
        let outcome = bridge(&message_event(None, Some("look")), &mut fake);
        assert_eq!(outcome, Ok(Outcome::NoReply));
        assert_eq!(fake.posts[0].body["text"], "look");
        assert!(fake.sends.is_empty());
    }

    #[test]
    fn the_reply_quotes_the_message_and_uses_the_configured_kind_and_headers() {
        let config = json!({
            "endpoint": "https://bot.local/x", "reply_kind": "text-fancy",
            "headers": {"x-api-key": "secret"}, "quote": true,
        });
        let mut fake = Fake::new(config, Ok((200, br#"{"reply": "ok"}"#)));
        bridge(&message_event(Some("hi"), None), &mut fake).unwrap();
        assert!(
            fake.posts[0]
                .headers
                .contains(&("x-api-key".into(), "secret".into()))
        );
        let (_, kind, body) = &fake.sends[0];
        assert_eq!(kind, "text-fancy");
        assert_eq!(body["quoted_message_id"], "M1");
    }

    #[test]
    fn other_events_own_messages_and_messages_without_text_are_ignored() {
        let mut receipt = message_event(Some("hi"), None);
        receipt.event = "receipt".into();
        let mut own = message_event(Some("hi"), None);
        own.message.as_mut().unwrap().is_from_me = true;
        let mut bare = message_event(None, None);
        bare.message.as_mut().unwrap().message_type = "sticker".into();
        let mut without_record = message_event(Some("hi"), None);
        without_record.message = None;
        for event in [receipt, own, bare, message_event(Some(""), Some(" "))] {
            // Not even the configuration is read: it is invalid here.
            let mut fake = Fake::new(json!({}), Err("unused"));
            assert!(matches!(bridge(&event, &mut fake), Ok(Outcome::Ignored(_))));
            assert!(fake.posts.is_empty() && fake.sends.is_empty());
        }
        let mut fake = Fake::new(config(), Err("unused"));
        assert!(matches!(
            bridge(&without_record, &mut fake),
            Ok(Outcome::Ignored(_))
        ));
    }

    #[test]
    fn a_missing_endpoint_fails_the_message_without_a_request() {
        let mut fake = Fake::new(json!({"quote": true}), Err("unused"));
        let err = bridge(&message_event(Some("hi"), None), &mut fake).unwrap_err();
        assert!(err.contains("`endpoint` is missing"), "{err}");
        assert!(fake.posts.is_empty());
    }

    #[test]
    fn a_request_failure_reaches_the_error_unchanged() {
        let refusal = r#"ErrorCode::HttpRequestDenied"#;
        let mut fake = Fake::new(config(), Err(refusal));
        let err = bridge(&message_event(Some("hi"), None), &mut fake).unwrap_err();
        assert_eq!(err, refusal);
    }

    #[test]
    fn a_non_2xx_answer_fails_the_message_so_that_it_is_retried() {
        let mut fake = Fake::new(config(), Ok((503, b"")));
        let err = bridge(&message_event(Some("hi"), None), &mut fake).unwrap_err();
        assert_eq!(err, "the endpoint answered 503");
        assert!(fake.sends.is_empty());
    }

    #[test]
    fn an_answer_without_a_reply_sends_nothing() {
        let mut fake = Fake::new(config(), Ok((200, br#"{"reply": null}"#)));
        let outcome = bridge(&message_event(Some("hi"), None), &mut fake);
        assert_eq!(outcome, Ok(Outcome::NoReply));
        assert!(fake.sends.is_empty());
    }

    #[test]
    fn a_refused_send_fails_the_message_with_the_reason() {
        let mut fake = Fake::new(config(), Ok((200, br#"{"reply": "x"}"#)));
        fake.send_result = Err("no send grant for session s1".to_owned());
        let err = bridge(&message_event(Some("hi"), None), &mut fake).unwrap_err();
        assert_eq!(
            err,
            "sending the reply failed: no send grant for session s1"
        );
    }
}
