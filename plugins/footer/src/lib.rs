//! `footer`, a message transform: appends a configured signature to
//! outbound `text` sends and rejects sends that contain banned words.
//!
//! Configuration:
//!
//! ```json
//! { "footer": "— Acme Support", "banned_words": ["password", "iban"], "separator": "\n\n" }
//! ```
//!
//! - `banned_words`: a send of any kind is rejected (the API answers 422 with
//!   the reason) when any string in its body other than `to` contains one
//!   of them, case-insensitively. Checked before the footer is added.
//! - `footer`: appended to the `text` of `text` sends, after `separator`
//!   (default a blank line). A text that already ends with the footer is
//!   left unchanged, so a retried send is not signed twice. Empty or absent:
//!   nothing is appended.

use serde::Deserialize;
use switchboard_plugin_sdk::{self as sdk, Hooks, Outbound, Plugin, TransformDecision, Value};

/// The binding's configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Appended to text sends.
    pub footer: String,
    /// Between the text and the footer.
    pub separator: String,
    /// Words that make a send rejected (case-insensitive substrings).
    pub banned_words: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            footer: String::new(),
            separator: "\n\n".into(),
            banned_words: Vec::new(),
        }
    }
}

/// The plugin.
pub struct Footer;

impl Plugin for Footer {
    const NAME: &'static str = "footer";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const HOOKS: Hooks = Hooks::MESSAGE_TRANSFORM;

    fn transform(send: Outbound) -> TransformDecision {
        match sdk::config::<Config>() {
            Ok(config) => decide(&config, &send.kind, send.body),
            Err(e) => {
                sdk::error!("invalid configuration, sends pass unchanged: {e}");
                TransformDecision::Unchanged
            }
        }
    }
}

sdk::register_plugin!(Footer);

/// The decision about a send of `kind` with `body` under `config`.
pub fn decide(config: &Config, kind: &str, mut body: Value) -> TransformDecision {
    if let Some(word) = banned_word(config, &body) {
        return TransformDecision::Reject(format!(
            "the message contains the banned word \"{word}\""
        ));
    }
    if kind != "text" || config.footer.is_empty() {
        return TransformDecision::Unchanged;
    }
    let Some(text) = body["text"].as_str() else {
        return TransformDecision::Unchanged;
    };
    if text.ends_with(&config.footer) {
        return TransformDecision::Unchanged;
    }
    body["text"] = format!("{text}{}{}", config.separator, config.footer).into();
    TransformDecision::Replace(body)
}

/// The first banned word found in any string of `body` except `to`.
fn banned_word<'c>(config: &'c Config, body: &Value) -> Option<&'c str> {
    let mut texts = Vec::new();
    collect_strings(body, true, &mut texts);
    config
        .banned_words
        .iter()
        .filter(|w| !w.trim().is_empty())
        .find(|w| {
            let w = w.to_lowercase();
            texts.iter().any(|t| t.contains(&w))
        })
        .map(String::as_str)
}

fn collect_strings(value: &Value, top: bool, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.to_lowercase()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, false, out)),
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| !(top && k.as_str() == "to"))
            .for_each(|(_, v)| collect_strings(v, false, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdk::json;

    fn config() -> Config {
        Config {
            footer: "— Acme".into(),
            banned_words: vec!["Password".into()],
            ..Config::default()
        }
    }

    #[test]
    fn text_sends_get_the_footer_after_a_blank_line() {
        let out = decide(&config(), "text", json!({"to": "49151", "text": "Hi"}));
        assert_eq!(
            out,
            TransformDecision::Replace(json!({"to": "49151", "text": "Hi\n\n— Acme"}))
        );
    }

    #[test]
    fn a_text_already_signed_and_other_kinds_are_unchanged() {
        let c = config();
        assert_eq!(
            decide(&c, "text", json!({"text": "Hi\n\n— Acme"})),
            TransformDecision::Unchanged
        );
        assert_eq!(
            decide(&c, "image", json!({"caption": "x", "url": "u"})),
            TransformDecision::Unchanged
        );
        assert_eq!(
            decide(&Config::default(), "text", json!({"text": "Hi"})),
            TransformDecision::Unchanged
        );
    }

    #[test]
    fn banned_words_reject_any_kind_case_insensitively_but_not_in_to() {
        let c = config();
        let out = decide(&c, "text", json!({"text": "your PASSWORD is 1234"}));
        assert_eq!(
            out,
            TransformDecision::Reject("the message contains the banned word \"Password\"".into())
        );
        let out = decide(
            &c,
            "poll",
            json!({"name": "q", "options": ["password?", "no"]}),
        );
        assert!(matches!(out, TransformDecision::Reject(_)));
        let out = decide(&c, "image", json!({"to": "password", "url": "u"}));
        assert_eq!(out, TransformDecision::Unchanged);
    }

    #[test]
    fn configuration_comes_from_the_binding() {
        sdk::testing::reset();
        sdk::testing::set_config(json!({"footer": "sig", "separator": " | "}));
        let send = Outbound {
            session_id: "s".into(),
            kind: "text".into(),
            body: json!({"text": "a"}),
        };
        assert_eq!(
            Footer::transform(send),
            TransformDecision::Replace(json!({"text": "a | sig"}))
        );
    }
}
