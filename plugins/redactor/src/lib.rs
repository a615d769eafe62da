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

use std::rc::Rc;

use serde::Deserialize;
use switchboard_plugin_sdk::{
    self as sdk, Envelope, FilterDecision, Hooks, Plugin, RawEnvelope, Value,
};

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

    fn filter_raw(event: RawEnvelope) -> FilterDecision {
        // Digits are never escaped in the JSON the host sends, so data with
        // no run of MIN_DIGITS digits anywhere has nothing to mask: keep it
        // without parsing it.
        if !has_digit_run(&event.data_json) {
            return FilterDecision::Keep;
        }
        match event.into_envelope() {
            Ok(envelope) => Self::filter(envelope),
            Err(_) => FilterDecision::Keep,
        }
    }

    fn filter(mut event: Envelope) -> FilterDecision {
        let config = sdk::config_cached::<Config>().unwrap_or_else(|e| {
            sdk::warn!("invalid configuration, using the defaults: {e}");
            Rc::new(Config::default())
        });
        if redact_value(&config, &mut event.data) {
            FilterDecision::Replace(event.data)
        } else {
            FilterDecision::Keep
        }
    }
}

/// Whether `text` holds a run of at least [`MIN_DIGITS`] ASCII digits.
pub fn has_digit_run(text: &str) -> bool {
    let mut run = 0;
    for b in text.bytes() {
        if b.is_ascii_digit() {
            run += 1;
            if run >= MIN_DIGITS {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
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
    if !has_digit_run(text) {
        return None;
    }
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

    #[test]
    fn the_raw_path_keeps_data_without_a_long_digit_run_unparsed_and_masks_the_rest() {
        testing::reset();
        let raw = |data_json: &str| RawEnvelope {
            session_id: "s".into(),
            event: "message".into(),
            timestamp: 0,
            data_json: data_json.into(),
            offline: None,
        };
        // Not even JSON: nothing to mask is decided before any parse.
        assert_eq!(
            Redactor::filter_raw(raw("{no 123456 json")),
            FilterDecision::Keep
        );
        assert_eq!(
            Redactor::filter_raw(raw(r#"{"text":"call 4915112345678"}"#)),
            FilterDecision::Replace(json!({"text": "call *************"}))
        );
        assert!(has_digit_run("a1234567b") && !has_digit_run("123456 7890 12"));
    }
}
