//! `redactor`, an event filter: masks phone numbers in event data before it
//! leaves the gateway.
//!
//! A phone number is any run of 7 or more ASCII digits inside a string value
//! of the event data, at any depth: `from_phone`, `chat_phone`, the user part
//! of JIDs (`4915112345678@s.whatsapp.net`), numbers written in a text. Each
//! digit of such a run becomes the mask character. Shorter runs, JSON
//! numbers, object keys and fields whose name ends in `_id` (message ids
//! are not phone numbers, and consumers deduplicate on them) are left alone.
//! An event with nothing to mask is kept as it is; otherwise its data is
//! replaced. Every event is filtered, not only messages.
//!
//! Configuration (optional):
//!
//! ```json
//! { "mask": "*", "keep_last": 0 }
//! ```
//!
//! - `mask`: the character that replaces a digit (default `*`).
//! - `keep_last`: how many trailing digits of each number stay readable (default 0).

use serde::Deserialize;
use switchboard_plugin_sdk::{self as sdk, Envelope, FilterDecision, Hooks, Plugin, Value};

/// The shortest digit run taken for a phone number.
pub const MIN_DIGITS: usize = 7;

/// The binding's configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Replaces each masked digit.
    pub mask: char,
    /// Trailing digits left readable.
    pub keep_last: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mask: '*',
            keep_last: 0,
        }
    }
}

/// The plugin.
pub struct Redactor;

impl Plugin for Redactor {
    const NAME: &'static str = "redactor";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const HOOKS: Hooks = Hooks::EVENT_FILTER;

    fn filter(mut event: Envelope) -> FilterDecision {
        let config = sdk::config::<Config>().unwrap_or_else(|e| {
            sdk::warn!("invalid configuration, using the defaults: {e}");
            Config::default()
        });
        if redact_value(&config, &mut event.data) {
            FilterDecision::Replace(event.data)
        } else {
            FilterDecision::Keep
        }
    }
}

sdk::register_plugin!(Redactor);

/// Masks phone numbers in every string of `value` in place; true when anything changed.
pub fn redact_value(config: &Config, value: &mut Value) -> bool {
    match value {
        Value::String(s) => match redact(config, s) {
            Some(masked) => {
                *s = masked;
                true
            }
            None => false,
        },
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| redact_value(config, v) | changed),
        Value::Object(map) => map
            .iter_mut()
            .filter(|(k, _)| !k.ends_with("_id"))
            .fold(false, |changed, (_, v)| redact_value(config, v) | changed),
        _ => false,
    }
}

/// `text` with every run of [`MIN_DIGITS`] or more digits masked; `None` when there is none.
pub fn redact(config: &Config, text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let mut changed = false;
    let mut flush = |run: &mut String, out: &mut String| {
        if run.len() >= MIN_DIGITS {
            changed = true;
            let keep = config.keep_last.min(run.len());
            out.extend(std::iter::repeat_n(config.mask, run.len() - keep));
            out.push_str(&run[run.len() - keep..]);
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_digit() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdk::{json, testing};

    #[test]
    fn runs_of_seven_or_more_digits_are_masked_and_shorter_ones_kept() {
        let c = Config::default();
        assert_eq!(
            redact(&c, "call 4915112345678 now").as_deref(),
            Some("call ************* now")
        );
        assert_eq!(redact(&c, "1234567").as_deref(), Some("*******"));
        assert_eq!(redact(&c, "order 123456 of 2024"), None);
        assert_eq!(redact(&c, "+1 555 000 1111"), None);
    }

    #[test]
    fn keep_last_and_mask_are_configurable() {
        let c = Config {
            mask: '#',
            keep_last: 2,
        };
        assert_eq!(
            redact(&c, "4915112345678@s.whatsapp.net").as_deref(),
            Some("###########78@s.whatsapp.net")
        );
    }

    #[test]
    fn phones_and_jids_in_message_data_are_masked_but_ids_are_not() {
        let mut data = json!({
            "from": "4915112345678@s.whatsapp.net",
            "from_phone": "4915112345678",
            "chat_phone": "4915112345678",
            "message_id": "3EB01234567890",
            "text": "ring me at 01761234567",
            "media": {"file_length": 12345678},
            "list": ["5550001111"],
        });
        assert!(redact_value(&Config::default(), &mut data));
        assert_eq!(data["from"], "*************@s.whatsapp.net");
        assert_eq!(data["from_phone"], "*************");
        assert_eq!(data["chat_phone"], "*************");
        assert_eq!(data["message_id"], "3EB01234567890");
        assert_eq!(data["text"], "ring me at ***********");
        assert_eq!(data["media"]["file_length"], 12345678);
        assert_eq!(data["list"][0], "**********");
    }

    #[test]
    fn an_event_without_numbers_is_kept() {
        testing::reset();
        let event = Envelope {
            session_id: "s".into(),
            event: "receipt".into(),
            timestamp: 0,
            data: json!({"type": "read", "chat_phone": null}),
            offline: None,
        };
        assert_eq!(Redactor::filter(event.clone()), FilterDecision::Keep);
        let event = Envelope {
            data: json!({"chat_phone": "4915112345678"}),
            ..event
        };
        assert_eq!(
            Redactor::filter(event),
            FilterDecision::Replace(json!({"chat_phone": "*************"}))
        );
    }
}
