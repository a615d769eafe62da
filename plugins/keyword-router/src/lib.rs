//! `keyword-router`, an event filter: keeps or drops `message` events by
//! their text. Other events always pass.
//!
//! Configuration (the binding's JSON):
//!
//! ```json
//! { "keywords": ["order", "refund"], "patterns": ["invoice #*"], "mode": "keep" }
//! ```
//!
//! - `keywords`: matched case-insensitively anywhere in the message's
//!   `text` or `caption`.
//! - `patterns` (optional): case-insensitive globs over the whole text
//!   (`*` any run of characters, `?` one character); a pattern without
//!   wildcards matches as a substring, like a keyword.
//! - `mode`: `keep` (default) keeps matching messages and drops the rest;
//!   `drop` drops matching messages and keeps the rest.
//!
//! With neither keywords nor patterns every message is kept. A configuration
//! that does not parse keeps every event and logs an error.

use serde::Deserialize;
use switchboard_plugin_sdk::{
    self as sdk, Envelope, FilterDecision, Hooks, JsonStr, Plugin, RawEnvelope, Value,
};

/// What to do with a matching message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Keep matching messages, drop the others.
    #[default]
    Keep,
    /// Drop matching messages, keep the others.
    Drop,
}

/// The binding's configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Case-insensitive substrings.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Case-insensitive globs (`*`, `?`) over the whole text.
    #[serde(default)]
    pub patterns: Vec<String>,
    /// Keep or drop what matches.
    #[serde(default)]
    pub mode: Mode,
}

/// A configuration made ready to match: lower-cased once, empty entries
/// left out. Parsed once per configuration (`sdk::config_cached`).
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "Config")]
pub struct Rules {
    keywords: Vec<String>,
    /// Lower-cased patterns, and whether each has wildcards.
    patterns: Vec<(String, bool)>,
    mode: Mode,
}

impl From<Config> for Rules {
    fn from(c: Config) -> Rules {
        Rules {
            keywords: c
                .keywords
                .iter()
                .filter(|k| !k.is_empty())
                .map(|k| k.to_lowercase())
                .collect(),
            patterns: c
                .patterns
                .iter()
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let p = p.to_lowercase();
                    let glob = p.contains(['*', '?']);
                    (p, glob)
                })
                .collect(),
            mode: c.mode,
        }
    }
}

/// The two fields the router reads; the rest of the data is skipped.
#[derive(Deserialize)]
struct Texts<'a> {
    #[serde(borrow, default)]
    text: Option<JsonStr<'a>>,
    #[serde(borrow, default)]
    caption: Option<JsonStr<'a>>,
}

/// The plugin.
pub struct KeywordRouter;

impl Plugin for KeywordRouter {
    const NAME: &'static str = "keyword-router";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const HOOKS: Hooks = Hooks::EVENT_FILTER;

    fn filter_raw(event: RawEnvelope) -> FilterDecision {
        if event.event != "message" {
            return FilterDecision::Keep;
        }
        let rules = match sdk::config_cached::<Rules>() {
            Ok(rules) => rules,
            Err(e) => {
                sdk::error!("invalid configuration, keeping every event: {e}");
                return FilterDecision::Keep;
            }
        };
        match event.data_as::<Texts>() {
            Ok(t) => decide_texts(&rules, [t.text.as_deref(), t.caption.as_deref()]),
            // `text` or `caption` is there but not a string: read it the slow way.
            Err(_) => match event.data() {
                Ok(data) => decide_texts(&rules, texts_of(&data)),
                Err(_) => FilterDecision::Keep,
            },
        }
    }

    fn filter(event: Envelope) -> FilterDecision {
        Self::filter_raw(RawEnvelope::from_envelope(&event))
    }
}

sdk::register_plugin!(KeywordRouter);

/// The decision about a message event's data under `config`.
pub fn decide(config: &Config, data: &Value) -> FilterDecision {
    decide_texts(&Rules::from(config.clone()), texts_of(data))
}

/// The `text` and `caption` of a message's data, when they are strings.
fn texts_of(data: &Value) -> [Option<&str>; 2] {
    [data["text"].as_str(), data["caption"].as_str()]
}

/// The decision about a message with these texts under `rules`.
fn decide_texts(rules: &Rules, texts: [Option<&str>; 2]) -> FilterDecision {
    if rules.keywords.is_empty() && rules.patterns.is_empty() {
        return FilterDecision::Keep;
    }
    let matched = texts.into_iter().flatten().any(|t| matches(rules, t));
    match (rules.mode, matched) {
        (Mode::Keep, true) | (Mode::Drop, false) => FilterDecision::Keep,
        (Mode::Keep, false) | (Mode::Drop, true) => FilterDecision::Drop,
    }
}

/// Whether a text matches any keyword or pattern, case-insensitively. An
/// ASCII text is searched as it is (lower-casing a copy of every message
/// first costs more than the search in WebAssembly); any other text, and
/// glob patterns, work on a lower-cased copy.
fn matches(rules: &Rules, text: &str) -> bool {
    let lowered = std::cell::OnceCell::new();
    let lower = || lowered.get_or_init(|| text.to_lowercase());
    let contains = |needle: &str| {
        if text.is_ascii() && needle.is_ascii() {
            contains_ignore_ascii_case(text.as_bytes(), needle.as_bytes())
        } else {
            lower().contains(needle)
        }
    };
    rules.keywords.iter().any(|k| contains(k))
        || rules.patterns.iter().any(|(p, is_glob)| {
            if *is_glob {
                glob(p, lower())
            } else {
                contains(p)
            }
        })
}

/// Whether `hay` contains `needle` (already lower-case), ignoring ASCII case.
fn contains_ignore_ascii_case(hay: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else {
        return true;
    };
    hay.windows(needle.len())
        .any(|w| w[0].to_ascii_lowercase() == first && w.eq_ignore_ascii_case(needle))
}

/// Whether `text` matches the glob `pattern` in full (`*` any run, `?` one character).
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdk::{json, testing};

    fn config(v: Value) -> Config {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn keep_mode_keeps_messages_with_a_keyword_in_any_case_and_drops_the_rest() {
        let c = config(json!({"keywords": ["Order"]}));
        assert_eq!(
            decide(&c, &json!({"text": "where is my ORDER?"})),
            FilterDecision::Keep
        );
        assert_eq!(decide(&c, &json!({"text": "hello"})), FilterDecision::Drop);
        assert_eq!(
            decide(&c, &json!({"text": null, "caption": "order photo"})),
            FilterDecision::Keep
        );
        assert_eq!(decide(&c, &json!({"text": null})), FilterDecision::Drop);
    }

    #[test]
    fn non_ascii_text_matches_case_insensitively_too() {
        let c = config(json!({"keywords": ["über"]}));
        assert_eq!(
            decide(&c, &json!({"text": "ÜBER alles"})),
            FilterDecision::Keep
        );
        assert_eq!(decide(&c, &json!({"text": "uber"})), FilterDecision::Drop);
    }

    #[test]
    fn drop_mode_drops_matching_messages_and_keeps_the_rest() {
        let c = config(json!({"keywords": ["spam"], "mode": "drop"}));
        assert_eq!(
            decide(&c, &json!({"text": "Buy SPAM now"})),
            FilterDecision::Drop
        );
        assert_eq!(decide(&c, &json!({"text": "hi"})), FilterDecision::Keep);
    }

    #[test]
    fn an_empty_configuration_keeps_every_message() {
        assert_eq!(
            decide(&config(json!({})), &json!({"text": "hi"})),
            FilterDecision::Keep
        );
    }

    #[test]
    fn patterns_are_whole_text_globs_or_substrings() {
        let c = config(json!({"patterns": ["invoice #*", "r?fund"]}));
        assert_eq!(
            decide(&c, &json!({"text": "Invoice #42"})),
            FilterDecision::Keep
        );
        assert_eq!(
            decide(&c, &json!({"text": "my invoice #42"})),
            FilterDecision::Drop
        );
        assert_eq!(decide(&c, &json!({"text": "refund"})), FilterDecision::Keep);
        let c = config(json!({"patterns": ["urgent"]}));
        assert_eq!(
            decide(&c, &json!({"text": "this is URGENT!"})),
            FilterDecision::Keep
        );
    }

    #[test]
    fn glob_handles_stars_and_question_marks() {
        assert!(glob("a*c", "abbbc"));
        assert!(glob("*", ""));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*ab*ab", "xxabyyab"));
        assert!(!glob("ab", "abc"));
    }

    #[test]
    fn other_events_pass_and_bad_configuration_keeps_everything() {
        testing::reset();
        testing::set_config(json!({"keywords": ["x"]}));
        let receipt = Envelope {
            session_id: "s".into(),
            event: "receipt".into(),
            timestamp: 0,
            data: json!({}),
            offline: None,
        };
        assert_eq!(KeywordRouter::filter(receipt.clone()), FilterDecision::Keep);
        let message = Envelope {
            event: "message".into(),
            data: json!({"text": "no"}),
            ..receipt
        };
        assert_eq!(KeywordRouter::filter(message.clone()), FilterDecision::Drop);
        testing::set_config(json!({"mode": "sideways"}));
        assert_eq!(KeywordRouter::filter(message), FilterDecision::Keep);
        assert_eq!(testing::logs().last().unwrap().0, sdk::Level::Error);
    }

    #[test]
    fn the_raw_path_reads_text_and_caption_and_survives_a_non_string_text() {
        testing::reset();
        testing::set_config(json!({"keywords": ["order"]}));
        let raw = |data: Value| RawEnvelope {
            session_id: "s".into(),
            event: "message".into(),
            timestamp: 0,
            data_json: data.to_string(),
            offline: None,
        };
        let keep = FilterDecision::Keep;
        let with_text = raw(json!({"text": "ORDER 1", "x": {"y": [1, "order"]}}));
        assert_eq!(KeywordRouter::filter_raw(with_text), keep);
        let number_text = raw(json!({"text": 5, "caption": "an order"}));
        assert_eq!(KeywordRouter::filter_raw(number_text), keep);
        let nothing = raw(json!({"text": 5, "other": "order"}));
        assert_eq!(KeywordRouter::filter_raw(nothing), FilterDecision::Drop);
    }
}
