//! What goes to the endpoint and what comes back, as pure functions: the
//! request's JSON body and headers, reading the answer under a size cap,
//! the reply found in it, and the body of the send that carries it back.

use serde_json::{Value, json};

/// The largest answer read from the endpoint. A bot's reply is a chat
/// message; anything this large is a misbehaving endpoint, and reading it
/// would only spend the plugin's memory.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// The largest piece handed to one `blocking-write-and-flush`, the most
/// that call accepts.
pub const WRITE_CHUNK_BYTES: usize = 4096;

/// An incoming message worth forwarding: the fields the endpoint receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming<'a> {
    /// The session that received it (and sends the reply).
    pub session_id: &'a str,
    /// Its id, for quoting and for the endpoint to recognise a redelivery.
    pub message_id: &'a str,
    /// The chat to answer in.
    pub chat: &'a str,
    /// The sender.
    pub from: &'a str,
    /// The name the sender set for itself.
    pub push_name: &'a str,
    /// Its text, or its caption when it has no text.
    pub text: &'a str,
}

/// The text to forward: the text, or else the caption; none when both are
/// missing or empty (a sticker, a location, a bare image).
pub fn text_of<'a>(text: Option<&'a str>, caption: Option<&'a str>) -> Option<&'a str> {
    [text, caption]
        .into_iter()
        .flatten()
        .find(|t| !t.trim().is_empty())
}

/// The JSON body posted to the endpoint.
pub fn request_body(incoming: &Incoming<'_>) -> String {
    json!({
        "session_id": incoming.session_id,
        "message_id": incoming.message_id,
        "chat": incoming.chat,
        "from": incoming.from,
        "push_name": incoming.push_name,
        "text": incoming.text,
    })
    .to_string()
}

/// The request headers: `content-type: application/json` (unless the
/// configuration sets its own), the body's `content-length` (so that
/// endpoints that do not take chunked bodies work too), then the
/// configured ones.
pub fn request_headers(configured: &[(String, String)], body_len: usize) -> Vec<(String, String)> {
    let mut headers = Vec::with_capacity(configured.len() + 2);
    if !configured
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("content-type"))
    {
        headers.push(("content-type".to_owned(), "application/json".to_owned()));
    }
    headers.push(("content-length".to_owned(), body_len.to_string()));
    headers.extend(configured.iter().cloned());
    headers
}

/// Whether an answer with `status` has a body worth reading: only a 2xx
/// one other than 204 can carry a reply, and reading an error page would
/// only risk hiding its status behind the size cap.
pub fn wants_body(status: u16) -> bool {
    (200..300).contains(&status) && status != 204
}

/// Reads a body piece by piece until `next` answers `None` (the stream
/// closed), failing as soon as it grows past `cap` bytes.
pub fn read_capped(
    cap: usize,
    mut next: impl FnMut() -> Result<Option<Vec<u8>>, String>,
) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(piece) = next()? {
        if body.len() + piece.len() > cap {
            return Err(format!(
                "the endpoint's answer is larger than {}",
                size_text(cap)
            ));
        }
        body.extend_from_slice(&piece);
    }
    Ok(body)
}

/// A size for a message: in MiB or KiB when it is a whole number of them.
fn size_text(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The reply to send, from the endpoint's status and body. A 2xx answer
/// with a non-empty string `reply` is a reply; a 2xx answer without one
/// (204, an empty body, no `reply`, `null` or an empty string) means the
/// endpoint chose not to answer. Any other status is an error, so that the
/// host retries the event.
pub fn reply_of(status: u16, body: &[u8]) -> Result<Option<String>, String> {
    if !(200..300).contains(&status) {
        return Err(format!("the endpoint answered {status}"));
    }
    if status == 204 || body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the endpoint's answer is not JSON: {e}"))?;
    let Value::Object(mut answer) = value else {
        return Ok(None);
    };
    match answer.remove("reply").unwrap_or(Value::Null) {
        Value::Null => Ok(None),
        Value::String(text) if text.trim().is_empty() => Ok(None),
        Value::String(text) => Ok(Some(text)),
        other => Err(format!(
            "the endpoint's `reply` is not a string: {}",
            kind_of(&other)
        )),
    }
}

/// A JSON value's type, for an error message (the value itself may be long).
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The body of the send that carries `reply` to `chat`, quoting
/// `quoted_message_id` when given.
pub fn send_body(chat: &str, reply: &str, quoted_message_id: Option<&str>) -> String {
    let mut body = json!({ "to": chat, "text": reply });
    if let Some(id) = quoted_message_id {
        body["quoted_message_id"] = json!(id);
    }
    body.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incoming() -> Incoming<'static> {
        Incoming {
            session_id: "s1",
            message_id: "M1",
            chat: "123@s.whatsapp.net",
            from: "123@s.whatsapp.net",
            push_name: "Ann \"A\"",
            text: "hi\nthere",
        }
    }

    #[test]
    fn the_text_is_preferred_over_the_caption_and_blank_ones_do_not_count() {
        assert_eq!(text_of(Some("t"), Some("c")), Some("t"));
        assert_eq!(text_of(None, Some("c")), Some("c"));
        assert_eq!(text_of(Some(""), Some("c")), Some("c"));
        assert_eq!(text_of(Some("  "), None), None);
        assert_eq!(text_of(None, None), None);
    }

    #[test]
    fn the_request_body_carries_the_message_fields_as_json() {
        let body: Value = serde_json::from_str(&request_body(&incoming())).unwrap();
        assert_eq!(
            body,
            json!({
                "session_id": "s1",
                "message_id": "M1",
                "chat": "123@s.whatsapp.net",
                "from": "123@s.whatsapp.net",
                "push_name": "Ann \"A\"",
                "text": "hi\nthere",
            })
        );
    }

    #[test]
    fn the_request_headers_are_json_with_a_length_then_the_configured_ones() {
        let configured = vec![("x-api-key".to_owned(), "k".to_owned())];
        assert_eq!(
            request_headers(&configured, 42),
            vec![
                ("content-type".to_owned(), "application/json".to_owned()),
                ("content-length".to_owned(), "42".to_owned()),
                ("x-api-key".to_owned(), "k".to_owned()),
            ]
        );
    }

    #[test]
    fn a_configured_content_type_replaces_the_default_one() {
        let configured = vec![(
            "Content-Type".to_owned(),
            "application/json; charset=utf-8".to_owned(),
        )];
        let headers = request_headers(&configured, 2);
        let types: Vec<_> = headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .collect();
        assert_eq!(types.len(), 1);
        assert_eq!(types[0].1, "application/json; charset=utf-8");
    }

    #[test]
    fn only_a_2xx_answer_other_than_204_has_a_body_worth_reading() {
        assert!(wants_body(200));
        assert!(wants_body(299));
        assert!(!wants_body(204));
        assert!(!wants_body(199));
        assert!(!wants_body(404));
        assert!(!wants_body(500));
    }

    #[test]
    fn reading_gathers_every_piece_until_the_stream_closes() {
        let mut pieces = vec![
            Some(b"{\"re".to_vec()),
            Some(Vec::new()),
            Some(b"ply\"}".to_vec()),
        ]
        .into_iter()
        .chain(std::iter::once(None));
        let body = read_capped(100, || Ok(pieces.next().unwrap())).unwrap();
        assert_eq!(body, b"{\"reply\"}");
    }

    #[test]
    fn reading_stops_with_an_error_past_the_cap() {
        let mut calls = 0;
        let err = read_capped(2048, || {
            calls += 1;
            Ok(Some(vec![b'x'; 1024]))
        })
        .unwrap_err();
        assert_eq!(err, "the endpoint's answer is larger than 2 KiB");
        let err = read_capped(MAX_ANSWER_BYTES, || {
            Ok(Some(vec![b'x'; MAX_ANSWER_BYTES + 1]))
        });
        assert_eq!(
            err.unwrap_err(),
            "the endpoint's answer is larger than 1 MiB"
        );
        assert_eq!(calls, 3);
        let exactly = [Some(vec![b'x'; 2048]), None];
        let mut pieces = exactly.into_iter();
        assert_eq!(
            read_capped(2048, || Ok(pieces.next().unwrap()))
                .unwrap()
                .len(),
            2048
        );
    }

    #[test]
    fn a_read_failure_ends_reading_with_that_error() {
        let err = read_capped(10, || Err("ErrorCode::ConnectionTerminated".to_owned()));
        assert_eq!(err.unwrap_err(), "ErrorCode::ConnectionTerminated");
    }

    #[test]
    fn a_2xx_answer_with_a_reply_is_a_reply() {
        assert_eq!(
            reply_of(200, br#"{"reply": "Hello!", "other": [1]}"#),
            Ok(Some("Hello!".to_owned()))
        );
        assert_eq!(
            reply_of(201, br#"{"reply": "ok"}"#),
            Ok(Some("ok".to_owned()))
        );
    }

    #[test]
    fn a_2xx_answer_without_a_reply_sends_nothing() {
        for (status, body) in [
            (204, &b""[..]),
            (204, br#"{"reply": "ignored on 204"}"#),
            (200, b""),
            (200, b" \n"),
            (200, br#"{}"#),
            (200, br#"{"reply": null}"#),
            (200, br#"{"reply": ""}"#),
            (200, br#"{"reply": "  "}"#),
            (200, br#"[{"reply": "not an object"}]"#),
        ] {
            assert_eq!(reply_of(status, body), Ok(None), "{status} {body:?}");
        }
    }

    #[test]
    fn a_non_2xx_answer_is_an_error_naming_the_status() {
        assert_eq!(
            reply_of(500, br#"{"reply": "x"}"#),
            Err("the endpoint answered 500".to_owned())
        );
        assert_eq!(
            reply_of(404, b""),
            Err("the endpoint answered 404".to_owned())
        );
        assert_eq!(
            reply_of(302, b""),
            Err("the endpoint answered 302".to_owned())
        );
    }

    #[test]
    fn an_answer_that_is_not_json_or_has_a_non_string_reply_is_an_error() {
        let html = reply_of(200, b"<html>").unwrap_err();
        assert!(
            html.starts_with("the endpoint's answer is not JSON"),
            "{html}"
        );
        assert_eq!(
            reply_of(200, br#"{"reply": {"text": "x"}}"#),
            Err("the endpoint's `reply` is not a string: an object".to_owned())
        );
    }

    #[test]
    fn the_send_body_addresses_the_chat_and_quotes_only_when_asked() {
        let plain: Value = serde_json::from_str(&send_body("c@g.us", "yo", None)).unwrap();
        assert_eq!(plain, json!({"to": "c@g.us", "text": "yo"}));
        let quoted: Value = serde_json::from_str(&send_body("c@g.us", "yo", Some("M1"))).unwrap();
        assert_eq!(
            quoted,
            json!({"to": "c@g.us", "text": "yo", "quoted_message_id": "M1"})
        );
    }
}
