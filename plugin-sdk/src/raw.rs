//! [`RawEnvelope`]: an envelope whose data is still the JSON text the host
//! sent. [`Plugin::filter`](crate::Plugin::filter) gets the data parsed into
//! a [`Value`], which for a 1 KB event is most of a filter call's cost; a
//! filter that needs a field or two overrides
//! [`Plugin::filter_raw`](crate::Plugin::filter_raw) instead and reads them
//! with [`RawEnvelope::data_as`], which skips the rest without building it.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_json::Value;

use crate::types::Envelope;

/// An event envelope with its data as JSON text (the fast filter's input).
#[derive(Debug, Clone, PartialEq)]
pub struct RawEnvelope {
    /// The session the event belongs to.
    pub session_id: String,
    /// The event name (`message`, `receipt`, …).
    pub event: String,
    /// Unix seconds when the gateway saw the event.
    pub timestamp: i64,
    /// The event data: a JSON object, as text.
    pub data_json: String,
    /// Message events only: redelivered from the disconnect window.
    pub offline: Option<bool>,
}

impl RawEnvelope {
    /// The fields of the data that `T` names, deserialized from the text;
    /// the others are skipped, not built. Read strings as [`JsonStr`]
    /// (`#[serde(borrow)] text: Option<JsonStr<'a>>`) to avoid copying them.
    pub fn data_as<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.data_json)
    }

    /// The whole data, parsed.
    pub fn data(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.data_json)
    }

    /// The envelope with its data parsed, as [`Plugin::filter`](crate::Plugin::filter) gets it.
    pub fn into_envelope(self) -> Result<Envelope, serde_json::Error> {
        Ok(Envelope {
            data: serde_json::from_str(&self.data_json)?,
            session_id: self.session_id,
            event: self.event,
            timestamp: self.timestamp,
            offline: self.offline,
        })
    }

    /// An envelope as the host would send it (for tests of `filter_raw`).
    pub fn from_envelope(envelope: &Envelope) -> RawEnvelope {
        RawEnvelope {
            session_id: envelope.session_id.clone(),
            event: envelope.event.clone(),
            timestamp: envelope.timestamp,
            data_json: envelope.data.to_string(),
            offline: envelope.offline,
        }
    }
}

/// A string of the data, borrowed from the JSON text when it holds no
/// escape (serde borrows a `Cow<str>` field, but not one inside an
/// `Option`; this borrows in both). Derefs to `str`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonStr<'a>(pub Cow<'a, str>);

impl std::ops::Deref for JsonStr<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JsonStr<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(JsonStr(Cow::Borrowed(v)))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(JsonStr(Cow::Owned(v.to_owned())))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(JsonStr(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Text<'a> {
        #[serde(borrow)]
        text: Option<JsonStr<'a>>,
    }

    fn raw(data: Value) -> RawEnvelope {
        RawEnvelope::from_envelope(&Envelope {
            session_id: "s".into(),
            event: "message".into(),
            timestamp: 1,
            data,
            offline: Some(false),
        })
    }

    #[test]
    fn data_as_reads_only_the_named_fields_and_borrows_plain_strings() {
        let r = raw(serde_json::json!({ "text": "hi", "nested": { "a": [1, 2] }, "n": 3 }));
        let t: Text = r.data_as().unwrap();
        assert!(matches!(t.text, Some(JsonStr(Cow::Borrowed("hi")))));
        let escaped = raw(serde_json::json!({ "text": "a\"b" }));
        let t = escaped.data_as::<Text>().unwrap().text.unwrap();
        assert!(matches!(&t.0, Cow::Owned(s) if s == "a\"b"));
    }

    #[test]
    fn into_envelope_parses_the_data_and_keeps_the_rest() {
        let data = serde_json::json!({ "text": "hi" });
        let e = raw(data.clone()).into_envelope().unwrap();
        assert_eq!(
            (e.data, e.event.as_str(), e.offline),
            (data, "message", Some(false))
        );
        let mut bad = raw(Value::Null);
        bad.data_json = "{not json".into();
        assert!(bad.into_envelope().is_err());
    }
}
