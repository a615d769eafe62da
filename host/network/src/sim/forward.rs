//! What a forward sends on the simulated network: the content of a message
//! the gateway recorded, rebuilt as a send body and validated as one. A
//! message the session sent is its body as delivered; a message it received
//! is read from its `message` event data (media by the gateway's stored copy,
//! which the sim's media servers read as any `media_id` send).

use serde_json::{Map, Value, json};

use crate::NetworkError;
use crate::domain::message::{Direction, MessageRecord};
use crate::domain::send::{OutboundContent, SendKind, SendRequest};

/// The content to forward of `record`, or why it cannot be forwarded.
pub fn content_of(record: &MessageRecord) -> Result<OutboundContent, NetworkError> {
    let (kind, mut body) = match record.direction {
        Direction::Outbound => sent_body(record)?,
        Direction::Inbound => received_body(&record.body)?,
    };
    // The recipient is the forward's, given separately; any valid JID
    // satisfies the body's shape here.
    body.insert("to".into(), json!("10000000000@s.whatsapp.net"));
    SendRequest::from_json(kind, Value::Object(body))
        .map(|r| r.content)
        .map_err(|e| {
            NetworkError::Rejected(format!(
                "message `{}` cannot be forwarded: its {e}",
                record.message_id
            ))
        })
}

fn refused(record: &MessageRecord, why: &str) -> NetworkError {
    NetworkError::Rejected(format!(
        "message `{}` cannot be forwarded: {why}",
        record.message_id
    ))
}

/// A sent message: its kind and its body as delivered. Media sent as
/// `data` keeps no copy the network could send again.
fn sent_body(record: &MessageRecord) -> Result<(SendKind, Map<String, Value>), NetworkError> {
    let kind = SendKind::parse(&record.kind)
        .ok_or_else(|| refused(record, &format!("a `{}` is not content", record.kind)))?;
    let Value::Object(body) = record.body.clone() else {
        return Err(refused(record, "its recorded body is not an object"));
    };
    if body.get("data").is_some_and(Value::is_object) {
        return Err(refused(
            record,
            "its media was sent as `data`, of which the gateway keeps no copy (upload it and send it by `media_id`)",
        ));
    }
    Ok((kind, body))
}

/// A received message: its `message` event data as a send body.
fn received_body(data: &Value) -> Result<(SendKind, Map<String, Value>), NetworkError> {
    let s = |k: &str| {
        data.get(k)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let message_type = s("message_type").unwrap_or("unknown");
    let no =
        |why: String| NetworkError::Rejected(format!("this message cannot be forwarded: {why}"));
    let mut body = Map::new();
    let kind = match message_type {
        "text" => {
            body.insert("text".into(), json!(s("text").unwrap_or_default()));
            SendKind::Text
        }
        "image" | "video" | "audio" | "document" => {
            let media = data
                .get("media")
                .filter(|m| m.is_object())
                .ok_or_else(|| no("its media is not held by the gateway".into()))?;
            let field = |k: &str| media.get(k).cloned().unwrap_or(Value::Null);
            body.insert("media_id".into(), field("id"));
            body.insert("mimetype".into(), field("mimetype"));
            match message_type {
                "audio" => {
                    body.insert("ptt".into(), json!(media.get("ptt") == Some(&json!(true))));
                }
                "document" => {
                    let name = media
                        .get("filename")
                        .and_then(Value::as_str)
                        .unwrap_or("file");
                    body.insert("filename".into(), json!(name));
                    body.insert("caption".into(), json!(s("caption")));
                }
                _ => {
                    body.insert("caption".into(), json!(s("caption")));
                }
            }
            SendKind::parse(message_type).unwrap_or(SendKind::Document)
        }
        "location" => {
            let loc = data.get("location").cloned().unwrap_or(Value::Null);
            for k in ["latitude", "longitude"] {
                body.insert(k.into(), loc.get(k).cloned().unwrap_or(Value::Null));
            }
            for k in ["name", "address"] {
                if let Some(v) = loc.get(k).and_then(Value::as_str).filter(|v| !v.is_empty()) {
                    body.insert(k.into(), json!(v));
                }
            }
            SendKind::Location
        }
        other => {
            return Err(no(format!(
                "a `{other}` message is not forwardable content"
            )));
        }
    };
    Ok((kind, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(direction: Direction, kind: &str, body: Value) -> MessageRecord {
        MessageRecord {
            message_id: "M1".into(),
            session_id: "s".into(),
            direction,
            chat: "15550001111@s.whatsapp.net".into(),
            sender: None,
            kind: kind.into(),
            body,
            timestamp: 1,
        }
    }

    #[test]
    fn a_received_text_is_forwarded_as_its_text() {
        let r = record(
            Direction::Inbound,
            "text",
            json!({"message_type": "text", "text": "hello"}),
        );
        match content_of(&r).unwrap() {
            OutboundContent::Text(t) => assert_eq!(t.text, "hello"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_received_picture_is_forwarded_from_the_gateways_copy() {
        let r = record(
            Direction::Inbound,
            "image",
            json!({"message_type": "image", "caption": "look",
                   "media": {"id": "in-abc", "mimetype": "image/png"}}),
        );
        match content_of(&r).unwrap() {
            OutboundContent::Image(b) => {
                assert_eq!(
                    b.source,
                    crate::domain::send::MediaSource::Stored("in-abc".into())
                );
                assert_eq!(b.caption.as_deref(), Some("look"));
                assert_eq!(b.mimetype, "image/png");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_sent_message_is_forwarded_as_its_body_but_not_media_sent_as_data() {
        let r = record(Direction::Outbound, "text", json!({"text": "mine"}));
        assert!(matches!(content_of(&r), Ok(OutboundContent::Text(_))));
        let r = record(
            Direction::Outbound,
            "image",
            json!({"data": {"bytes": 3}, "mimetype": "image/png", "view_once": false}),
        );
        assert!(matches!(content_of(&r), Err(NetworkError::Rejected(_))));
    }

    #[test]
    fn a_reaction_or_a_revoke_is_not_forwardable() {
        let r = record(
            Direction::Inbound,
            "revoke",
            json!({"message_type": "revoke"}),
        );
        assert!(matches!(content_of(&r), Err(NetworkError::Rejected(_))));
        let r = record(Direction::Outbound, "revoke", json!({"message_id": "X"}));
        assert!(matches!(content_of(&r), Err(NetworkError::Rejected(_))));
    }
}
