//! The bridge between the generated 0.2 bindings and the traits of
//! [`crate::v2`]: conversions between WIT records and the SDK's types, and
//! one adapter per world that implements `meta` and that world's hook for a
//! plugin type. [`register_plugin!`](crate::register_plugin) exports one of
//! them.

use std::marker::PhantomData;

use serde_json::Value;

use super::bindings::blast_endpoint::exports::switchboard::plugin::blast_endpoint;
use super::bindings::event_filter::exports::switchboard::plugin::event_filter;
use super::bindings::host::switchboard::plugin::types as wit;
use super::bindings::message_transform::exports::switchboard::plugin::message_transform;
use super::bindings::meta::exports::switchboard::plugin::meta;
use super::{BlastEndpoint, Event, EventFilter, Message, MessageTransform};
use crate::types::{Contact, FilterDecision, Level, Outbound, Recipient, TransformDecision};

/// Implements world `event-filter-plugin` for the plugin `P`; not used directly.
#[doc(hidden)]
pub struct EventFilterAdapter<P>(PhantomData<P>);

/// Implements world `message-transform-plugin` for the plugin `P`; not used directly.
#[doc(hidden)]
pub struct MessageTransformAdapter<P>(PhantomData<P>);

/// Implements world `blast-endpoint-plugin` for the plugin `P`; not used directly.
#[doc(hidden)]
pub struct BlastEndpointAdapter<P>(PhantomData<P>);

/// The self-description every world exports.
fn info(name: &str, version: &str) -> meta::Info {
    meta::Info {
        name: name.into(),
        version: version.into(),
    }
}

impl<P: EventFilter> meta::Guest for EventFilterAdapter<P> {
    fn describe() -> meta::Info {
        info(P::NAME, P::VERSION)
    }
}

impl<P: EventFilter> event_filter::Guest for EventFilterAdapter<P> {
    fn filter(event: wit::Event) -> wit::FilterDecision {
        match P::filter(event.into()) {
            FilterDecision::Keep => wit::FilterDecision::Keep,
            FilterDecision::Drop => wit::FilterDecision::Drop,
            FilterDecision::Replace(data) => wit::FilterDecision::Replace(data.to_string()),
        }
    }
}

impl<P: MessageTransform> meta::Guest for MessageTransformAdapter<P> {
    fn describe() -> meta::Info {
        info(P::NAME, P::VERSION)
    }
}

impl<P: MessageTransform> message_transform::Guest for MessageTransformAdapter<P> {
    fn transform(send: wit::Outbound) -> wit::TransformDecision {
        let Ok(body) = serde_json::from_str::<Value>(&send.body) else {
            super::log(Level::Warn, "send body is not JSON; left unchanged");
            return wit::TransformDecision::Unchanged;
        };
        let outbound = Outbound {
            session_id: send.session_id,
            kind: send.kind,
            body,
        };
        match P::transform(outbound) {
            TransformDecision::Unchanged => wit::TransformDecision::Unchanged,
            TransformDecision::Replace(body) => wit::TransformDecision::Replace(body.to_string()),
            TransformDecision::Reject(reason) => wit::TransformDecision::Reject(reason),
        }
    }
}

impl<P: BlastEndpoint> meta::Guest for BlastEndpointAdapter<P> {
    fn describe() -> meta::Info {
        info(P::NAME, P::VERSION)
    }
}

impl<P: BlastEndpoint> blast_endpoint::Guest for BlastEndpointAdapter<P> {
    fn endpoints() -> Vec<String> {
        P::endpoints()
    }

    fn expand(
        endpoint: String,
        recipient: wit::Recipient,
        body: String,
    ) -> Result<Vec<wit::ConcreteSend>, String> {
        let body: Value =
            serde_json::from_str(&body).map_err(|e| format!("the job body is not JSON: {e}"))?;
        let sends = P::expand(&endpoint, recipient.into(), body)?;
        Ok(sends
            .into_iter()
            .map(|s| wit::ConcreteSend {
                kind: s.kind,
                body: s.body.to_string(),
            })
            .collect())
    }
}

impl From<wit::Event> for Event {
    fn from(e: wit::Event) -> Self {
        Event {
            session_id: e.session_id,
            event: e.event,
            timestamp: e.timestamp,
            offline: e.offline,
            message: e.message.map(Into::into),
        }
    }
}

impl From<wit::Message> for Message {
    fn from(m: wit::Message) -> Self {
        Message {
            message_id: m.message_id,
            from: m.from,
            from_phone: m.from_phone,
            chat: m.chat,
            chat_phone: m.chat_phone,
            participant: m.participant,
            message_type: m.message_type,
            text: m.text,
            caption: m.caption,
            is_group: m.is_group,
            is_from_me: m.is_from_me,
            push_name: m.push_name,
            quoted_id: m.quoted_id,
            media_mimetype: m.media_mimetype,
            forwarded: m.forwarded,
        }
    }
}

impl From<Level> for wit::LogLevel {
    fn from(level: Level) -> Self {
        match level {
            Level::Trace => wit::LogLevel::Trace,
            Level::Debug => wit::LogLevel::Debug,
            Level::Info => wit::LogLevel::Info,
            Level::Warn => wit::LogLevel::Warn,
            Level::Error => wit::LogLevel::Error,
        }
    }
}

impl From<wit::Contact> for Contact {
    fn from(c: wit::Contact) -> Self {
        Contact {
            jid: c.jid,
            phone: c.phone,
            full_name: c.full_name,
            first_name: c.first_name,
            push_name: c.push_name,
            business_name: c.business_name,
        }
    }
}

impl From<wit::Recipient> for Recipient {
    fn from(r: wit::Recipient) -> Self {
        Recipient {
            jid: r.jid,
            phone: r.phone,
            contact: r.contact.map(Into::into),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;
    use crate::types::Send;

    /// Upper-cases message texts, drops messages without one and keeps
    /// other events; reads the full data when the text says so.
    struct Upper;
    impl EventFilter for Upper {
        const NAME: &'static str = "upper";
        const VERSION: &'static str = "1.2.3";

        fn filter(event: Event) -> FilterDecision {
            let Some(message) = event.message else {
                return FilterDecision::Keep;
            };
            match message.text.as_deref() {
                Some("full") => FilterDecision::Replace(super::super::event_data().unwrap()),
                Some(t) => FilterDecision::Replace(serde_json::json!({ "text": t.to_uppercase() })),
                None => FilterDecision::Drop,
            }
        }
    }

    /// Rejects every send.
    struct Refuse;
    impl MessageTransform for Refuse {
        const NAME: &'static str = "refuse";
        const VERSION: &'static str = "0.0.1";

        fn transform(send: Outbound) -> TransformDecision {
            TransformDecision::Reject(format!("no {}", send.kind))
        }
    }

    /// Greets the recipient by its contact name.
    struct Hello;
    impl BlastEndpoint for Hello {
        const NAME: &'static str = "hello";
        const VERSION: &'static str = "0.0.2";

        fn endpoints() -> Vec<String> {
            vec!["hello".into()]
        }

        fn expand(_: &str, recipient: Recipient, body: Value) -> Result<Vec<Send>, String> {
            let name = recipient.contact.as_ref().and_then(Contact::display_name);
            Ok(vec![Send::text(format!(
                "{} {}",
                body["greeting"].as_str().unwrap_or("hi"),
                name.unwrap_or("there")
            ))])
        }
    }

    fn message_event(text: Option<&str>) -> wit::Event {
        wit::Event {
            session_id: "s".into(),
            event: "message".into(),
            timestamp: 1,
            offline: Some(false),
            message: Some(wit::Message {
                message_id: "ID".into(),
                from: "1@s.whatsapp.net".into(),
                from_phone: Some("1".into()),
                chat: "1@s.whatsapp.net".into(),
                chat_phone: Some("1".into()),
                participant: "1@s.whatsapp.net".into(),
                message_type: "text".into(),
                text: text.map(Into::into),
                caption: None,
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
    fn every_world_describes_itself_by_name_and_version_only() {
        let info = <EventFilterAdapter<Upper> as meta::Guest>::describe();
        assert_eq!((info.name, info.version), ("upper".into(), "1.2.3".into()));
        let info = <MessageTransformAdapter<Refuse> as meta::Guest>::describe();
        assert_eq!((info.name, info.version), ("refuse".into(), "0.0.1".into()));
        let info = <BlastEndpointAdapter<Hello> as meta::Guest>::describe();
        assert_eq!((info.name, info.version), ("hello".into(), "0.0.2".into()));
    }

    #[test]
    fn the_filter_gets_the_typed_event_and_its_decision_travels_as_json_text() {
        testing::reset();
        let filter = <EventFilterAdapter<Upper> as event_filter::Guest>::filter;
        let out = filter(message_event(Some("hi")));
        assert!(matches!(out, wit::FilterDecision::Replace(ref d) if d == r#"{"text":"HI"}"#));
        assert!(matches!(
            filter(message_event(None)),
            wit::FilterDecision::Drop
        ));
        let receipt = wit::Event {
            event: "receipt".into(),
            message: None,
            ..message_event(None)
        };
        assert!(matches!(filter(receipt), wit::FilterDecision::Keep));
        assert_eq!(testing::event_data_calls(), 0, "no data asked for");
    }

    #[test]
    fn the_full_data_comes_from_the_host_when_the_filter_asks() {
        testing::reset();
        testing::set_event_data(serde_json::json!({ "text": "full", "extra": 1 }));
        let out =
            <EventFilterAdapter<Upper> as event_filter::Guest>::filter(message_event(Some("full")));
        assert!(
            matches!(out, wit::FilterDecision::Replace(ref d) if d == r#"{"extra":1,"text":"full"}"#)
        );
        assert_eq!(testing::event_data_calls(), 1);
    }

    #[test]
    fn the_event_converts_field_by_field() {
        let event = Event::from(message_event(Some("hi")));
        let message = event.message.unwrap();
        assert_eq!(
            (
                event.session_id.as_str(),
                event.offline,
                message.push_name.as_str()
            ),
            ("s", Some(false), "Ann")
        );
        assert_eq!(
            (message.message_id.as_str(), message.text.as_deref()),
            ("ID", Some("hi"))
        );
    }

    #[test]
    fn a_transform_decides_on_the_parsed_body_and_a_body_not_json_is_left_alone() {
        testing::reset();
        let transform = <MessageTransformAdapter<Refuse> as message_transform::Guest>::transform;
        let send = |body: &str| wit::Outbound {
            session_id: "s".into(),
            kind: "text".into(),
            body: body.into(),
        };
        assert!(
            matches!(transform(send("{}")), wit::TransformDecision::Reject(ref r) if r == "no text")
        );
        assert!(matches!(
            transform(send("nope")),
            wit::TransformDecision::Unchanged
        ));
        assert_eq!(testing::logs()[0].0, Level::Warn);
    }

    #[test]
    fn a_blast_endpoint_expands_with_the_recipients_contact() {
        assert_eq!(
            <BlastEndpointAdapter<Hello> as blast_endpoint::Guest>::endpoints(),
            ["hello"]
        );
        let recipient = wit::Recipient {
            jid: "1@s.whatsapp.net".into(),
            phone: Some("1".into()),
            contact: Some(wit::Contact {
                jid: "1@s.whatsapp.net".into(),
                phone: None,
                full_name: None,
                first_name: Some("Ann".into()),
                push_name: None,
                business_name: None,
            }),
        };
        let expand = <BlastEndpointAdapter<Hello> as blast_endpoint::Guest>::expand;
        let sends = expand(
            "hello".into(),
            recipient.clone(),
            r#"{"greeting":"hey"}"#.into(),
        );
        let sends = sends.unwrap();
        assert_eq!(
            (sends[0].kind.as_str(), sends[0].body.as_str()),
            ("text", r#"{"text":"hey Ann"}"#)
        );
        let bad = expand("hello".into(), recipient, "{".into());
        assert!(bad.unwrap_err().contains("not JSON"));
    }
}
