//! `greeting`, a blast endpoint: the key `greeting` renders one personalised
//! `text` send per recipient.
//!
//! The job body is `{"template": "Hello {name}!"}`. Placeholders:
//! `{name}` (the contact's first name, else full name, else push name, else
//! business name, else the configured `fallback_name`), `{phone}` (the
//! recipient's phone digits, or empty) and `{jid}`.
//!
//! Configuration (optional): `{"fallback_name": "friend"}` (default `there`).

use serde::Deserialize;
use switchboard_plugin_sdk::{self as sdk, Hooks, Plugin, Recipient, Send, Value};

/// The endpoint key this plugin serves.
pub const ENDPOINT: &str = "greeting";

/// The binding's configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The name used when the directory knows none.
    pub fallback_name: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            fallback_name: "there".into(),
        }
    }
}

/// The job body.
#[derive(Debug, Clone, Deserialize)]
pub struct Job {
    /// The text with placeholders.
    pub template: String,
}

/// The plugin.
pub struct Greeting;

impl Plugin for Greeting {
    const NAME: &'static str = "greeting";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const HOOKS: Hooks = Hooks::BLAST_ENDPOINT;

    fn endpoints() -> Vec<String> {
        vec![ENDPOINT.into()]
    }

    fn expand(endpoint: &str, recipient: Recipient, body: Value) -> Result<Vec<Send>, String> {
        if endpoint != ENDPOINT {
            return Err(format!(
                "unknown endpoint `{endpoint}`; this plugin serves `{ENDPOINT}`"
            ));
        }
        let job: Job = serde_json::from_value(body)
            .map_err(|e| format!("the job body needs a string `template`: {e}"))?;
        let config = sdk::config::<Config>().map_err(|e| format!("invalid configuration: {e}"))?;
        Ok(vec![Send::text(render(&job.template, &recipient, &config))])
    }
}

sdk::register_plugin!(Greeting);

/// The template with its placeholders filled in for `recipient`.
pub fn render(template: &str, recipient: &Recipient, config: &Config) -> String {
    let name = recipient
        .contact
        .as_ref()
        .and_then(|c| c.display_name())
        .unwrap_or(&config.fallback_name);
    template
        .replace("{name}", name)
        .replace("{phone}", recipient.phone.as_deref().unwrap_or(""))
        .replace("{jid}", &recipient.jid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdk::{Contact, json};

    fn recipient(contact: Option<Contact>) -> Recipient {
        Recipient {
            jid: "4915112345678@s.whatsapp.net".into(),
            phone: Some("4915112345678".into()),
            contact,
        }
    }

    #[test]
    fn the_name_comes_from_the_contact_first_name_first() {
        let c = Contact {
            jid: "x".into(),
            first_name: Some("Greta".into()),
            full_name: Some("Greta Garbo".into()),
            push_name: Some("GG".into()),
            ..Contact::default()
        };
        assert_eq!(
            render("Hello {name}!", &recipient(Some(c)), &Config::default()),
            "Hello Greta!"
        );
        let c = Contact {
            jid: "x".into(),
            push_name: Some("GG".into()),
            ..Contact::default()
        };
        assert_eq!(
            render("Hello {name}!", &recipient(Some(c)), &Config::default()),
            "Hello GG!"
        );
    }

    #[test]
    fn unknown_recipients_get_the_fallback_name_and_phone_placeholders_work() {
        assert_eq!(
            render("Hello {name}!", &recipient(None), &Config::default()),
            "Hello there!"
        );
        let c = Config {
            fallback_name: "friend".into(),
        };
        assert_eq!(
            render("Hi {name} ({phone})", &recipient(None), &c),
            "Hi friend (4915112345678)"
        );
    }

    #[test]
    fn expand_makes_one_text_send_and_refuses_bad_input() {
        sdk::testing::reset();
        sdk::testing::set_config(json!({"fallback_name": "friend"}));
        let sends = Greeting::expand(
            "greeting",
            recipient(None),
            json!({"template": "Hello {name}!"}),
        )
        .unwrap();
        assert_eq!(
            sends,
            vec![Send {
                kind: "text".into(),
                body: json!({"text": "Hello friend!"})
            }]
        );
        assert!(
            Greeting::expand("greeting", recipient(None), json!({}))
                .unwrap_err()
                .contains("template")
        );
        assert!(Greeting::expand("other", recipient(None), json!({"template": "x"})).is_err());
        assert_eq!(Greeting::endpoints(), vec!["greeting".to_owned()]);
    }
}
