//! `keyword-filter`, an event filter for world `event-filter-plugin` of
//! contract 0.2: keeps the message events that mention a keyword and drops
//! the other messages. Its twins in Python (`plugins/python-keyword-filter`)
//! and JavaScript (`plugins/js-keyword-filter`) decide the same way.
//!
//! Configuration (the binding's JSON):
//!
//! ```json
//! { "keywords": ["order", "refund"], "tag": true }
//! ```
//!
//! - Events other than messages are kept.
//! - A message event is kept when its text or caption contains one of the
//!   `keywords`, ignoring case, and dropped otherwise.
//! - With no keyword configured every event is kept.
//! - With `"tag": true` a kept message is replaced by its whole data
//!   (fetched from the host only then) plus `"matched_keyword"`: the first
//!   configured keyword it contains, as configured.
//!
//! A configuration that is not a JSON object, keywords that are not a list
//! and entries that are not non-empty strings are ignored rather than
//! refused: a filter can report a bad configuration only by failing every
//! event, and keeping events is the safer failure.
//!
//! The decision is the pure function [`decide`]; the plugin hands it the
//! typed message and the host's `event-data`.

use serde::Deserialize;
use serde_json::Value;
use switchboard_plugin_sdk::register_plugin;
use switchboard_plugin_sdk::v2::{self, Event, EventFilter, FilterDecision, Message};

/// The field a tagged message's data gains: the keyword that matched.
pub const MATCHED_KEYWORD: &str = "matched_keyword";

/// A configuration made ready to match.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(from = "Value")]
pub struct Config {
    /// The keywords as configured (the first that matches is reported),
    /// each with its lower-cased form (made once per configuration, not
    /// once per message).
    keywords: Vec<(String, String)>,
    /// Whether a kept message is replaced by its data plus [`MATCHED_KEYWORD`].
    tag: bool,
}

impl From<Value> for Config {
    /// Reads what is usable and ignores the rest (see the crate docs). An
    /// empty keyword is left out because it would "match" every text.
    fn from(raw: Value) -> Config {
        let keywords = raw["keywords"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|k| !k.is_empty())
            .map(|k| (k.to_owned(), k.to_lowercase()))
            .collect();
        Config {
            keywords,
            tag: raw["tag"] == Value::Bool(true),
        }
    }
}

impl Config {
    /// The configuration in `json`; a text that is not JSON configures nothing.
    pub fn parse(json: &str) -> Config {
        serde_json::from_str::<Value>(json)
            .map(Config::from)
            .unwrap_or_default()
    }
}

/// The first configured keyword (as configured) that `message`'s text or
/// caption contains, ignoring case; `None` when none does.
///
/// Case is folded with `to_lowercase`, the Unicode lower-casing the twins
/// use too (`toLowerCase`, `str.lower`), so the three agree beyond ASCII.
pub fn matched_keyword<'c>(config: &'c Config, message: &Message) -> Option<&'c str> {
    config
        .keywords
        .iter()
        .find(|(_, needle)| message.texts().any(|h| contains_folded(h, needle)))
        .map(|(keyword, _)| keyword.as_str())
}

/// Whether `haystack` contains `needle` (already lower-cased), ignoring
/// case as `to_lowercase` folds it.
///
/// An ASCII needle is first looked for in place, comparing ASCII letters
/// without case: no lower-cased copy of a 1 KB text (about a quarter of
/// the call) and no pass over the whole text just to learn it is ASCII
/// (which costs as much as the search again). A match found that way is a
/// match under Unicode folding too (the matched bytes are ASCII and fold
/// alike). Only a text that is not ASCII and matched nothing in place is
/// folded and searched again, since folding may make more of it ASCII (the
/// Kelvin sign becomes `k`).
pub fn contains_folded(haystack: &str, needle: &str) -> bool {
    if needle.is_ascii() {
        let (h, n) = (haystack.as_bytes(), needle.as_bytes());
        if n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n)) {
            return true;
        }
        if haystack.is_ascii() {
            return false;
        }
    }
    haystack.to_lowercase().contains(needle)
}

/// The decision about one event: `message` is its typed message (`None`
/// for events other than messages) and `event_data` fetches its whole data
/// as JSON text. That is called only for a kept message under `"tag":
/// true`, because fetching it costs the host a serialisation that the plain
/// keep or drop never needs.
pub fn decide(
    config: &Config,
    message: Option<&Message>,
    event_data: impl FnOnce() -> String,
) -> FilterDecision {
    let Some(message) = message else {
        return FilterDecision::Keep;
    };
    if config.keywords.is_empty() {
        return FilterDecision::Keep;
    }
    let Some(keyword) = matched_keyword(config, message) else {
        return FilterDecision::Drop;
    };
    if !config.tag {
        return FilterDecision::Keep;
    }
    match serde_json::from_str::<Value>(&event_data()) {
        Ok(Value::Object(mut data)) => {
            data.insert(MATCHED_KEYWORD.into(), keyword.into());
            FilterDecision::Replace(Value::Object(data))
        }
        // The host always sends an object; should it not, the message still
        // matched, so it goes through untagged rather than being lost.
        _ => FilterDecision::Keep,
    }
}

/// The plugin.
pub struct KeywordFilter;

impl EventFilter for KeywordFilter {
    const NAME: &'static str = "keyword-filter";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn filter(event: Event) -> FilterDecision {
        if event.message.is_none() {
            // Not a message: kept before the configuration is even read.
            return FilterDecision::Keep;
        }
        // Parsed once per configuration text, not once per event; a text
        // that is not JSON is the empty configuration, as in `Config::parse`.
        let config = v2::config_cached::<Config>().unwrap_or_default();
        decide(&config, event.message.as_ref(), v2::event_data_json)
    }
}

register_plugin!(v2 event_filter: KeywordFilter);

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_plugin_sdk::testing;
    use v2::json;

    #[test]
    fn ascii_and_unicode_text_are_matched_ignoring_case_alike() {
        assert!(contains_folded("About my ORDER 42", "order"));
        assert!(!contains_folded("About my ORDE", "order"));
        assert!(contains_folded("ÜBER die BESTELLUNG", "bestellung"));
        assert!(contains_folded("Straße ÖL", "öl"));
        assert!(!contains_folded("short", "longer than the text"));
        assert!(
            contains_folded("Größe: \u{212A}ilo", "kilo"),
            "the Kelvin sign folds to k"
        );
        assert!(!contains_folded("Größe: 5", "kilo"));
    }

    fn config(v: Value) -> Config {
        Config::from(v)
    }

    fn text(text: &str) -> Message {
        Message {
            message_type: "text".into(),
            text: Some(text.into()),
            ..Message::default()
        }
    }

    fn captioned(caption: &str) -> Message {
        Message {
            message_type: "image".into(),
            caption: Some(caption.into()),
            ..Message::default()
        }
    }

    fn event(message: Option<Message>) -> Event {
        Event {
            session_id: "s".into(),
            event: if message.is_some() {
                "message"
            } else {
                "receipt"
            }
            .into(),
            timestamp: 1_700_000_000,
            offline: message.as_ref().map(|_| false),
            message,
        }
    }

    /// Event data that must not be fetched.
    fn no_data() -> String {
        panic!("the event data was fetched")
    }

    #[test]
    fn a_message_mentioning_a_keyword_in_its_text_is_kept() {
        let c = config(json!({"keywords": ["order", "refund"]}));
        let m = text("Where is my order?");
        assert_eq!(decide(&c, Some(&m), no_data), FilterDecision::Keep);
    }

    #[test]
    fn a_message_mentioning_a_keyword_in_its_caption_is_kept() {
        let c = config(json!({"keywords": ["refund"]}));
        let m = captioned("receipt for the refund");
        assert_eq!(decide(&c, Some(&m), no_data), FilterDecision::Keep);
    }

    #[test]
    fn a_message_mentioning_no_keyword_is_dropped() {
        let c = config(json!({"keywords": ["order", "refund"]}));
        assert_eq!(
            decide(&c, Some(&text("hello there")), no_data),
            FilterDecision::Drop
        );
        assert_eq!(
            decide(&c, Some(&Message::default()), no_data),
            FilterDecision::Drop
        );
    }

    #[test]
    fn keywords_match_whatever_the_case_of_either_side() {
        let c = config(json!({"keywords": ["Order"]}));
        let m = text("ORDER #12 please");
        assert_eq!(decide(&c, Some(&m), no_data), FilterDecision::Keep);
        let c = config(json!({"keywords": ["über"]}));
        let m = text("ÜBER alles");
        assert_eq!(decide(&c, Some(&m), no_data), FilterDecision::Keep);
    }

    #[test]
    fn events_other_than_messages_are_kept() {
        let c = config(json!({"keywords": ["order"], "tag": true}));
        assert_eq!(decide(&c, None, no_data), FilterDecision::Keep);
    }

    #[test]
    fn with_no_keyword_configured_every_message_is_kept() {
        for raw in [
            json!({}),
            json!({"keywords": []}),
            json!({"keywords": [""]}),
        ] {
            let c = config(raw);
            assert_eq!(decide(&c, Some(&text("hi")), no_data), FilterDecision::Keep);
        }
    }

    #[test]
    fn unusable_configuration_is_ignored_rather_than_refused() {
        assert_eq!(Config::parse("not json"), Config::default());
        assert_eq!(Config::parse("[1, 2]"), Config::default());
        assert_eq!(Config::parse(r#"{"keywords": "order"}"#), Config::default());
        let c = Config::parse(r#"{"keywords": ["order", 5, null, ""], "tag": "yes"}"#);
        assert_eq!(
            c,
            Config {
                keywords: vec![("order".into(), "order".into())],
                tag: false,
            }
        );
    }

    #[test]
    fn a_tagged_message_is_replaced_by_its_full_data_with_the_first_configured_keyword_that_matched()
     {
        let c = config(json!({"keywords": ["Refund", "order"], "tag": true}));
        let m = text("an order and a refund");
        let data = || json!({"text": "an order and a refund", "id": "ABC"}).to_string();
        assert_eq!(
            decide(&c, Some(&m), data),
            FilterDecision::Replace(json!({
                "text": "an order and a refund",
                "id": "ABC",
                "matched_keyword": "Refund",
            }))
        );
    }

    #[test]
    fn tagging_fetches_no_data_for_a_dropped_message() {
        let c = config(json!({"keywords": ["order"], "tag": true}));
        assert_eq!(decide(&c, Some(&text("hi")), no_data), FilterDecision::Drop);
    }

    #[test]
    fn a_tagged_message_whose_data_is_not_an_object_is_kept_untagged() {
        let c = config(json!({"keywords": ["order"], "tag": true}));
        let m = text("order");
        assert_eq!(decide(&c, Some(&m), || "[1]".into()), FilterDecision::Keep);
        assert_eq!(
            decide(&c, Some(&m), || "{oops".into()),
            FilterDecision::Keep
        );
    }

    #[test]
    fn the_plugin_reads_its_configuration_and_the_event_data_from_the_host() {
        testing::reset();
        testing::set_config(json!({"keywords": ["order"], "tag": true}));
        testing::set_event_data(json!({"text": "my order", "chat": "1@s.whatsapp.net"}));
        assert_eq!(
            KeywordFilter::filter(event(Some(text("my order")))),
            FilterDecision::Replace(json!({
                "text": "my order",
                "chat": "1@s.whatsapp.net",
                "matched_keyword": "order",
            }))
        );
        assert_eq!(testing::event_data_calls(), 1);
        assert_eq!(
            KeywordFilter::filter(event(Some(text("hello")))),
            FilterDecision::Drop
        );
        assert_eq!(KeywordFilter::filter(event(None)), FilterDecision::Keep);
        assert_eq!(testing::event_data_calls(), 1, "fetched only for the tag");
    }

    #[test]
    fn without_tag_the_plugin_never_asks_for_the_event_data() {
        testing::reset();
        testing::set_config(json!({"keywords": ["order"]}));
        assert_eq!(
            KeywordFilter::filter(event(Some(text("order 7")))),
            FilterDecision::Keep
        );
        assert_eq!(testing::event_data_calls(), 0);
    }

    #[test]
    fn a_configuration_that_is_not_an_object_keeps_every_message() {
        testing::reset();
        testing::set_config(json!("not an object"));
        assert_eq!(
            KeywordFilter::filter(event(Some(text("hello")))),
            FilterDecision::Keep
        );
    }

    #[test]
    fn describe_names_the_plugin_keyword_filter_version_0_2_0() {
        assert_eq!(
            (KeywordFilter::NAME, KeywordFilter::VERSION),
            ("keyword-filter", "0.2.0")
        );
    }
}
