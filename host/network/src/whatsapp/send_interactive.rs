//! Buttons, lists and URL buttons as the native-flow interactive messages
//! WhatsApp's own clients send: an `interactiveMessage` with a header, a
//! body, a footer and native-flow buttons (`quick_reply` per reply button,
//! one `single_select` holding a list's sections, one `cta_url`), each
//! button's parameters a JSON document. The crate announces such a message
//! with the `<biz>` stanza child the server needs to deliver it (and, to a
//! user, the `<bot biz_bot="1"/>` beside it), as WhatsApp Web does; without
//! them it is accepted and never shown.
//!
//! A recipient's choice comes back as an `interactive_response` whose
//! native-flow parameters carry the button's or row's `id`.

use serde_json::{Value, json};
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::domain::send::{ButtonsBody, CtaUrlBody, ListBody};
use wa::message::interactive_message::native_flow_message::NativeFlowButton;
use wa::message::interactive_message::{
    Body, Footer, Header, InteractiveMessage as Payload, NativeFlowMessage,
};

/// The native-flow version WhatsApp's clients stamp on these messages.
const NATIVE_FLOW_VERSION: i32 = 1;

/// Text with up to three reply buttons: a `quick_reply` each, its `id`
/// what a press reports.
pub fn buttons(b: &ButtonsBody) -> wa::Message {
    let buttons = b
        .buttons
        .iter()
        .map(|x| button("quick_reply", json!({ "display_text": x.text, "id": x.id })))
        .collect();
    interactive(b.header.as_deref(), &b.text, b.footer.as_deref(), buttons)
}

/// Text with a button that opens a list: one `single_select` holding the
/// sections, a row's `id` what a choice reports.
pub fn list(b: &ListBody) -> wa::Message {
    let sections: Vec<Value> = b
        .sections
        .iter()
        .map(|s| {
            let rows: Vec<Value> = s
                .rows
                .iter()
                .map(|r| {
                    json!({
                        "header": "",
                        "title": r.title,
                        "description": r.description.clone().unwrap_or_default(),
                        "id": r.id,
                    })
                })
                .collect();
            json!({ "title": s.title, "rows": rows })
        })
        .collect();
    let select = button(
        "single_select",
        json!({ "title": b.button_text, "sections": sections }),
    );
    interactive(
        b.title.as_deref(),
        &b.text,
        b.footer.as_deref(),
        vec![select],
    )
}

/// Text with one button that opens a URL.
pub fn cta_url(b: &CtaUrlBody) -> wa::Message {
    let open = button(
        "cta_url",
        json!({ "display_text": b.button_text, "url": b.url, "merchant_url": b.url }),
    );
    interactive(
        b.header.as_deref(),
        &b.text,
        b.footer.as_deref(),
        vec![open],
    )
}

fn button(name: &str, params: Value) -> NativeFlowButton {
    NativeFlowButton {
        name: Some(name.to_owned()),
        button_params_json: Some(params.to_string()),
    }
}

fn interactive(
    header: Option<&str>,
    text: &str,
    footer: Option<&str>,
    buttons: Vec<NativeFlowButton>,
) -> wa::Message {
    let header = header.map(|title| Header {
        title: Some(title.to_owned()),
        has_media_attachment: Some(false),
        ..Default::default()
    });
    let footer = footer.map(|text| Footer {
        text: Some(text.to_owned()),
        ..Default::default()
    });
    wa::Message {
        interactive_message: MessageField::some(wa::message::InteractiveMessage {
            header: header.map_or_else(MessageField::none, MessageField::some),
            body: MessageField::some(Body {
                text: Some(text.to_owned()),
            }),
            footer: footer.map_or_else(MessageField::none, MessageField::some),
            interactive_message: Some(Payload::NativeFlowMessage(Box::new(NativeFlowMessage {
                buttons,
                message_version: Some(NATIVE_FLOW_VERSION),
                message_params_json: None,
            }))),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::send::{Button, ListRow, ListSection};

    fn flow(m: &wa::Message) -> (&wa::message::InteractiveMessage, Vec<(String, Value)>) {
        let im = m
            .interactive_message
            .as_option()
            .expect("an interactive message");
        let Some(Payload::NativeFlowMessage(nf)) = &im.interactive_message else {
            panic!("a native flow")
        };
        let buttons = nf
            .buttons
            .iter()
            .map(|b| {
                let params = b.button_params_json.as_deref().unwrap();
                (
                    b.name.clone().unwrap(),
                    serde_json::from_str(params).unwrap(),
                )
            })
            .collect();
        (im, buttons)
    }

    #[test]
    fn reply_buttons_are_quick_replies_carrying_their_ids_under_the_header_body_and_footer() {
        let m = buttons(&ButtonsBody {
            text: "Pick one".into(),
            header: Some("Order 7".into()),
            footer: Some("Thanks".into()),
            buttons: vec![
                Button {
                    id: "yes".into(),
                    text: "Yes".into(),
                },
                Button {
                    id: "no".into(),
                    text: "No".into(),
                },
            ],
        });
        let (im, buttons) = flow(&m);
        assert_eq!(
            im.body.as_option().unwrap().text.as_deref(),
            Some("Pick one")
        );
        assert_eq!(
            im.header.as_option().unwrap().title.as_deref(),
            Some("Order 7")
        );
        assert_eq!(
            im.footer.as_option().unwrap().text.as_deref(),
            Some("Thanks")
        );
        assert_eq!(
            buttons,
            vec![
                (
                    "quick_reply".into(),
                    json!({"display_text": "Yes", "id": "yes"})
                ),
                (
                    "quick_reply".into(),
                    json!({"display_text": "No", "id": "no"})
                ),
            ]
        );
    }

    #[test]
    fn a_list_is_one_single_select_holding_its_sections_and_a_url_button_one_cta_url() {
        let m = list(&ListBody {
            text: "Menu".into(),
            button_text: "View".into(),
            title: None,
            footer: None,
            sections: vec![ListSection {
                title: "Food".into(),
                rows: vec![ListRow {
                    id: "f1".into(),
                    title: "Pizza".into(),
                    description: Some("Hot".into()),
                }],
            }],
        });
        let (im, buttons) = flow(&m);
        assert!(im.header.as_option().is_none() && im.footer.as_option().is_none());
        assert_eq!(
            buttons,
            vec![(
                "single_select".into(),
                json!({"title": "View", "sections": [{"title": "Food", "rows": [
                    {"header": "", "title": "Pizza", "description": "Hot", "id": "f1"}]}]})
            )]
        );
        let m = cta_url(&CtaUrlBody {
            text: "Track it".into(),
            button_text: "Open".into(),
            url: "https://x.y/t/1".into(),
            header: None,
            footer: None,
        });
        assert_eq!(
            flow(&m).1,
            vec![(
                "cta_url".into(),
                json!({"display_text": "Open", "url": "https://x.y/t/1", "merchant_url": "https://x.y/t/1"})
            )]
        );
    }
}
