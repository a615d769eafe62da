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
use switchboard_plugin_sdk::{self as sdk, Envelope, FilterDecision, Hooks, Plugin, Value};

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

/// The plugin.
pub struct KeywordRouter;

impl Plugin for KeywordRouter {
    const NAME: &'static str = "keyword-router";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const HOOKS: Hooks = Hooks::EVENT_FILTER;

    fn filter(event: Envelope) -> FilterDecision {
        if event.event != "message" {
            return FilterDecision::Keep;
        }
        match sdk::config::<Config>() {
            Ok(config) => decide(&config, &event.data),
            Err(e) => {
                sdk::error!("invalid configuration, keeping every event: {e}");
                FilterDecision::Keep
            }
        }
    }
}

sdk::register_plugin!(KeywordRouter);

/// The decision about a message event's data under `config`.
pub fn decide(config: &Config, data: &Value) -> FilterDecision {
    if config.keywords.is_empty() && config.patterns.is_empty() {
        return FilterDecision::Keep;
    }
    let texts: Vec<String> = ["text", "caption"]
        .iter()
        .filter_map(|k| data[*k].as_str())
        .map(str::to_lowercase)
        .collect();
    let matched = texts.iter().any(|t| matches(config, t));
    match (config.mode, matched) {
        (Mode::Keep, true) | (Mode::Drop, false) => FilterDecision::Keep,
        (Mode::Keep, false) | (Mode::Drop, true) => FilterDecision::Drop,
    }
}

/// Whether a lower-cased text matches any keyword or pattern.
fn matches(config: &Config, text: &str) -> bool {
    config
        .keywords
        .iter()
        .filter(|k| !k.is_empty())
        .any(|k| text.contains(&k.to_lowercase()))
        || config.patterns.iter().any(|p| {
            let p = p.to_lowercase();
            if p.contains(['*', '?']) {
                glob(&p, text)
            } else {
                !p.is_empty() && text.contains(&p)
            }
        })
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
}
