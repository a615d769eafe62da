//! The bridge between the generated bindings and the [`Plugin`] trait:
//! conversions between WIT records and the SDK's types, and the
//! [`Adapter`] that implements every exported interface for a `Plugin`.
//! [`register_plugin!`](crate::register_plugin) exports an `Adapter`.

use std::marker::PhantomData;

use serde_json::Value;

use crate::bindings::exports::switchboard::plugin::{
    blast_endpoint, event_filter, message_transform, meta,
};
use crate::bindings::switchboard::plugin::types as wit;
use crate::types::{Contact, FilterDecision, Hooks, Level, Outbound, Recipient, TransformDecision};
use crate::{Plugin, RawEnvelope, log};

/// Implements the world's exports for the plugin `P`; not used directly.
#[doc(hidden)]
pub struct Adapter<P>(PhantomData<P>);

impl<P: Plugin> meta::Guest for Adapter<P> {
    fn describe() -> meta::Info {
        let mut hooks = meta::Hooks::empty();
        let Hooks {
            event_filter,
            message_transform,
            blast_endpoint,
        } = P::HOOKS;
        hooks.set(meta::Hooks::EVENT_FILTER, event_filter);
        hooks.set(meta::Hooks::MESSAGE_TRANSFORM, message_transform);
        hooks.set(meta::Hooks::BLAST_ENDPOINT, blast_endpoint);
        meta::Info {
            name: P::NAME.into(),
            version: P::VERSION.into(),
            hooks,
        }
    }
}

impl<P: Plugin> event_filter::Guest for Adapter<P> {
    fn filter(event: wit::Envelope) -> wit::FilterDecision {
        let envelope = RawEnvelope {
            session_id: event.session_id,
            event: event.event,
            timestamp: event.timestamp,
            data_json: event.data,
            offline: event.offline,
        };
        match P::filter_raw(envelope) {
            FilterDecision::Keep => wit::FilterDecision::Keep,
            FilterDecision::Drop => wit::FilterDecision::Drop,
            FilterDecision::Replace(data) => wit::FilterDecision::Replace(data.to_string()),
        }
    }
}

impl<P: Plugin> message_transform::Guest for Adapter<P> {
    fn transform(send: wit::Outbound) -> wit::TransformDecision {
        let Ok(body) = serde_json::from_str::<Value>(&send.body) else {
            log(Level::Warn, "send body is not JSON; left unchanged");
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

impl<P: Plugin> blast_endpoint::Guest for Adapter<P> {
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

impl From<wit::LogLevel> for Level {
    fn from(level: wit::LogLevel) -> Self {
        match level {
            wit::LogLevel::Trace => Level::Trace,
            wit::LogLevel::Debug => Level::Debug,
            wit::LogLevel::Info => Level::Info,
            wit::LogLevel::Warn => Level::Warn,
            wit::LogLevel::Error => Level::Error,
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

impl From<Contact> for wit::Contact {
    fn from(c: Contact) -> Self {
        wit::Contact {
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
    use crate::Envelope;
    use crate::testing;

    struct Upper;
    impl Plugin for Upper {
        const NAME: &'static str = "upper";
        const VERSION: &'static str = "1.2.3";
        const HOOKS: Hooks = Hooks::EVENT_FILTER;

        fn filter(event: Envelope) -> FilterDecision {
            match event.data["text"].as_str() {
                Some(t) => FilterDecision::Replace(serde_json::json!({ "text": t.to_uppercase() })),
                None => FilterDecision::Drop,
            }
        }
    }

    fn envelope(data: &str) -> wit::Envelope {
        wit::Envelope {
            session_id: "s".into(),
            event: "message".into(),
            timestamp: 1,
            data: data.into(),
            offline: None,
        }
    }

    #[test]
    fn describe_reports_name_version_and_hooks() {
        let info = <Adapter<Upper> as meta::Guest>::describe();
        assert_eq!(
            (info.name.as_str(), info.version.as_str()),
            ("upper", "1.2.3")
        );
        assert_eq!(info.hooks, meta::Hooks::EVENT_FILTER);
    }

    #[test]
    fn filter_decisions_travel_as_json_text() {
        let out = <Adapter<Upper> as event_filter::Guest>::filter(envelope(r#"{"text":"hi"}"#));
        assert!(matches!(out, wit::FilterDecision::Replace(ref d) if d == r#"{"text":"HI"}"#));
        let out = <Adapter<Upper> as event_filter::Guest>::filter(envelope("{}"));
        assert!(matches!(out, wit::FilterDecision::Drop));
    }

    #[test]
    fn data_that_is_not_json_is_kept_and_logged() {
        testing::reset();
        let out = <Adapter<Upper> as event_filter::Guest>::filter(envelope("not json"));
        assert!(matches!(out, wit::FilterDecision::Keep));
        assert_eq!(testing::logs()[0].0, Level::Warn);
    }

    #[test]
    fn defaults_pass_everything_through() {
        let send = wit::Outbound {
            session_id: "s".into(),
            kind: "text".into(),
            body: "{}".into(),
        };
        assert!(matches!(
            <Adapter<Upper> as message_transform::Guest>::transform(send),
            wit::TransformDecision::Unchanged
        ));
        assert!(<Adapter<Upper> as blast_endpoint::Guest>::endpoints().is_empty());
        let r = wit::Recipient {
            jid: "1@s.whatsapp.net".into(),
            phone: None,
            contact: None,
        };
        let err = <Adapter<Upper> as blast_endpoint::Guest>::expand("x".into(), r, "{}".into());
        assert!(err.unwrap_err().contains("x"));
    }
}
