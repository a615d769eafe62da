//! `my-plugin`: a Switchboard event filter that drops message events from
//! chats listed in its configuration, `{"muted_chats": ["4915112345678@s.whatsapp.net"]}`.
//! Replace it with your own logic; see `docs/plugins.md`.

use serde::Deserialize;
use switchboard_plugin_sdk::{self as sdk, Envelope, FilterDecision, Hooks, Plugin};

/// The binding's configuration.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Chats whose messages are dropped.
    pub muted_chats: Vec<String>,
}

/// The plugin.
pub struct MyPlugin;

impl Plugin for MyPlugin {
    const NAME: &'static str = "my-plugin";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const HOOKS: Hooks = Hooks::EVENT_FILTER;

    fn filter(event: Envelope) -> FilterDecision {
        if event.event != "message" {
            return FilterDecision::Keep;
        }
        let config: Config = match sdk::config() {
            Ok(c) => c,
            Err(e) => {
                sdk::error!("invalid configuration: {e}");
                return FilterDecision::Keep;
            }
        };
        match event.data["chat"].as_str() {
            Some(chat) if config.muted_chats.iter().any(|m| m == chat) => FilterDecision::Drop,
            _ => FilterDecision::Keep,
        }
    }
}

sdk::register_plugin!(MyPlugin);

#[cfg(test)]
mod tests {
    use super::*;
    use sdk::{json, testing};

    fn message(chat: &str) -> Envelope {
        Envelope {
            session_id: "alice".into(),
            event: "message".into(),
            timestamp: 0,
            data: json!({ "chat": chat, "text": "hi" }),
            offline: Some(false),
        }
    }

    #[test]
    fn messages_from_muted_chats_are_dropped() {
        testing::reset();
        testing::set_config(json!({ "muted_chats": ["1@s.whatsapp.net"] }));
        assert_eq!(
            MyPlugin::filter(message("1@s.whatsapp.net")),
            FilterDecision::Drop
        );
        assert_eq!(
            MyPlugin::filter(message("2@s.whatsapp.net")),
            FilterDecision::Keep
        );
    }
}
