//! Sends: each send kind as the crate's `wa::Message`, sent under the
//! gateway's message id. Media is fetched (for `url`), taken from `data`, or
//! read from the media store (for `media_id`: an upload or a downloaded
//! inbound media of the same session), then encrypted and uploaded by the
//! crate, which takes the whole file in memory; every source is bounded by
//! the same per-kind size limit before it is read. Polls are built here as WhatsApp
//! Web builds them (the crate's builder is private), so they too go out under
//! the gateway's id. Buttons, lists and CTA-URL messages go out as the
//! native-flow interactive messages WhatsApp's clients send
//! (`send_interactive.rs`).
//!
//! Every message sent is kept in the session's history and a reply's quote
//! is looked up there (`history.rs`); a message goes out with its chat's
//! disappearing-messages timer (`chat_timers.rs`).

use std::sync::Arc;
use std::time::Duration;

use whatsapp_rust::download::MediaType;
use whatsapp_rust::send::SendOptions;
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;
use whatsapp_rust::{Client, NodeFilter};

use super::chat_timers;
use super::history;
use super::send_interactive;
use super::send_media::{audio, document, image, upload, video};
use crate::domain::jid::Jid;
use crate::domain::send::{
    ContactBody, LocationBody, OutboundContent, PollBody, ReactionBody, TextBody,
};
use crate::media_store::MediaStore;
use crate::store::Store;
use crate::{NetworkError, SendReceipt};
use switchboard_egress::MediaUrlConfig;

/// Length of a poll's `message_secret`, from which voters derive the key
/// that encrypts their votes.
pub const POLL_SECRET_LEN: usize = 32;

/// The crate's JID for one of ours.
pub fn wa_jid(j: &Jid) -> Result<whatsapp_rust::Jid, NetworkError> {
    j.to_string().parse().map_err(|e| {
        NetworkError::Rejected(format!("`{j}` is not an address WhatsApp accepts: {e}"))
    })
}

/// Where a send reads from: the store (quotes, history), the media
/// store (uploads named by `media_id`), and media URLs (fetched under
/// their rule).
#[derive(Clone, Copy)]
pub struct Stores<'a> {
    /// The database.
    pub store: &'a Store,
    /// The media store.
    pub media: &'a MediaStore,
    /// How media named by `url` is fetched.
    pub media_urls: &'a MediaUrlConfig,
    /// How long a send waits for the server's acknowledgement.
    pub ack_wait: Duration,
}

/// Sends `content` to `to` under `message_id` and keeps what was sent in
/// session `session_id`'s message history.
pub async fn send(
    client: &Arc<Client>,
    stores @ Stores { store, .. }: Stores<'_>,
    session_id: &str,
    message_id: &str,
    to: &Jid,
    content: &OutboundContent,
) -> Result<SendReceipt, NetworkError> {
    let jid = wa_jid(to)?;
    let message = match content {
        OutboundContent::Text(b) => {
            let quote = match &b.quoted_message_id {
                Some(quoted_id) => {
                    Some(history::look_up_quote(client, store, session_id, quoted_id, to).await)
                }
                None => None,
            };
            text(b, quote)
        }
        OutboundContent::Location(b) => location(b),
        OutboundContent::Contact(b) => contact(b),
        OutboundContent::Reaction(b) => reaction(to, b)?,
        OutboundContent::Image(b) => {
            let up = upload(client, stores, session_id, &b.source, MediaType::Image).await?;
            image(up, &b.mimetype, b.caption.clone(), b.view_once)
        }
        OutboundContent::Video(b) => {
            let up = upload(client, stores, session_id, &b.source, MediaType::Video).await?;
            video(up, &b.mimetype, b.caption.clone(), b.view_once)
        }
        OutboundContent::Audio(b) => {
            let up = upload(client, stores, session_id, &b.source, MediaType::Audio).await?;
            audio(up, &b.mimetype, b.ptt)
        }
        OutboundContent::Document(b) => {
            let up = upload(client, stores, session_id, &b.source, MediaType::Document).await?;
            document(up, &b.mimetype, &b.filename, b.caption.clone())
        }
        OutboundContent::Poll(b) => poll(b, poll_secret())?,
        OutboundContent::CtaUrl(b) => send_interactive::cta_url(b),
        OutboundContent::Buttons(b) => send_interactive::buttons(b),
        OutboundContent::List(b) => send_interactive::list(b),
    };
    // A reaction is no message of the chat's: it carries no timer.
    let timer = match content {
        OutboundContent::Reaction(_) => None,
        _ => chat_timers::of_chat(client, store, session_id, &jid).await,
    };
    send_built(
        client,
        store,
        session_id,
        message_id,
        &jid,
        message,
        timer,
        stores.ack_wait,
    )
    .await
}

/// Sends a built message to `jid` under `message_id` and keeps it in the
/// session's history (so it can be quoted, forwarded or acted on later).
///
/// The crate returns once the stanza is written; the server's answer comes
/// after, as an `<ack>` naming the message. The send waits up to
/// `ack_wait` for it: a refusal (`error="463"`, a reach-out timelock when
/// the server says one holds; 479, 421…) is the send's failure, an
/// acceptance gives the server's
/// timestamp. No answer in time keeps the written stanza's answer: the
/// message is out, the server just has not said so yet.
///
/// `timer` is the chat's disappearing-messages timer, in seconds: the crate
/// puts it in the message's `contextInfo.expiration`, so it disappears with
/// the rest of the chat.
#[allow(clippy::too_many_arguments)]
pub(super) async fn send_built(
    client: &Arc<Client>,
    store: &Store,
    session_id: &str,
    message_id: &str,
    jid: &whatsapp_rust::Jid,
    message: wa::Message,
    timer: Option<u32>,
    ack_wait: Duration,
) -> Result<SendReceipt, NetworkError> {
    // The crate consumes the message; the copy is what gets kept.
    let kept = message.clone();
    // Registered before the send: the answer can come before it returns.
    let ack = client.wait_for_node(
        NodeFilter::tag("ack")
            .attr("class", "message")
            .attr("id", message_id),
    );
    let sent = client
        .send_message_with_options(jid.clone(), message, send_options(message_id, timer))
        .await
        .map_err(super::send_error::send_error)?;
    let mut receipt = receipt(sent.message_id);
    if let Ok(Ok(node)) = tokio::time::timeout(ack_wait, ack).await {
        let node = node.get();
        if let Some(code) = node.get_attr("error") {
            let code = code.as_str().to_string();
            if code == "463" {
                let lock = super::timelock::ask(client, ack_wait).await;
                return Err(super::timelock::refusal_463(lock));
            }
            return Err(refusal(&code));
        }
        if let Some(t) = node
            .get_attr("t")
            .and_then(|t| t.as_str().parse::<i64>().ok())
        {
            receipt.timestamp = t;
        }
    }
    history::keep_sent(client, store, session_id, &receipt, jid, &kept).await;
    Ok(receipt)
}

/// The error of a send the server refused with `code` (other than 463,
/// whose meaning depends on the account's timelock: `timelock.rs`).
pub fn refusal(code: &str) -> NetworkError {
    let why = match code {
        "479" => "a field of the message has a form the server does not accept",
        "421" => "the recipient's device list changed; the message was not delivered",
        _ => "refused by the server",
    };
    NetworkError::Rejected(format!(
        "WhatsApp refused the message (error {code}: {why})"
    ))
}

/// Every send goes out under the gateway's message id, so a retry of the
/// same send (blasts, the scheduler) is the same message to WhatsApp.
fn send_options(message_id: &str, timer: Option<u32>) -> SendOptions {
    let options = SendOptions::default().with_message_id(message_id);
    match timer {
        Some(secs) if secs > 0 => options.with_ephemeral_expiration(secs),
        _ => options,
    }
}

fn receipt(message_id: String) -> SendReceipt {
    SendReceipt {
        message_id,
        timestamp: crate::domain::time::unix_now(),
    }
}

/// A text, with its quote and mentions in the context when there are any.
pub fn text(b: &TextBody, quote: Option<wa::ContextInfo>) -> wa::Message {
    if quote.is_none() && b.mentions.is_empty() {
        return wa::Message {
            conversation: Some(b.text.clone()),
            ..Default::default()
        };
    }
    let context = wa::ContextInfo {
        mentioned_jid: b.mentions.iter().map(ToString::to_string).collect(),
        ..quote.unwrap_or_default()
    };
    wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some(b.text.clone()),
            context_info: MessageField::some(context),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A fresh random poll secret.
fn poll_secret() -> [u8; POLL_SECRET_LEN] {
    use rand::RngCore;
    let mut secret = [0u8; POLL_SECRET_LEN];
    rand::rng().fill_bytes(&mut secret);
    secret
}

/// A poll as WhatsApp Web builds it: `pollCreationMessageV3` for a
/// single-choice poll, the original `pollCreationMessage` for a multiple-choice
/// one; options by name (their hashes are the voters' business); content type
/// text; and `secret` as the message secret, from which voters derive their
/// vote key (the kept copy holds it for decrypting their votes).
pub fn poll(b: &PollBody, secret: [u8; POLL_SECRET_LEN]) -> Result<wa::Message, NetworkError> {
    let invalid = |why: String| NetworkError::Rejected(format!("invalid poll: {why}"));
    if !(2..=12).contains(&b.options.len()) {
        return Err(invalid(format!(
            "a poll has 2 to 12 options, not {}",
            b.options.len()
        )));
    }
    if b.selectable_count < 1 || b.selectable_count as usize > b.options.len() {
        return Err(invalid(format!(
            "selectable_count must be between 1 and {} (got {})",
            b.options.len(),
            b.selectable_count
        )));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = b.options.iter().find(|o| !seen.insert(*o)) {
        // Equal names hash alike, so votes for them could not be told apart.
        return Err(invalid(format!("the option `{dup}` is given twice")));
    }
    let creation = wa::message::PollCreationMessage {
        name: Some(b.question.clone()),
        options: b
            .options
            .iter()
            .map(|name| wa::message::poll_creation_message::Option {
                option_name: Some(name.clone()),
                option_hash: None,
            })
            .collect(),
        selectable_options_count: Some(b.selectable_count),
        poll_content_type: Some(wa::message::PollContentType::TEXT),
        ..Default::default()
    };
    let mut message = if b.selectable_count == 1 {
        wa::Message {
            poll_creation_message_v3: MessageField::some(creation),
            ..Default::default()
        }
    } else {
        wa::Message {
            poll_creation_message: MessageField::some(creation),
            ..Default::default()
        }
    };
    message.message_context_info = MessageField::some(wa::MessageContextInfo {
        message_secret: Some(secret.to_vec()),
        ..Default::default()
    });
    Ok(message)
}

/// A pinned location.
pub fn location(b: &LocationBody) -> wa::Message {
    wa::Message {
        location_message: MessageField::some(wa::message::LocationMessage {
            degrees_latitude: Some(b.latitude),
            degrees_longitude: Some(b.longitude),
            name: b.name.clone(),
            address: b.address.clone(),
            url: b.url.clone(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// One contact card, or an array of them.
pub fn contact(b: &ContactBody) -> wa::Message {
    let cards: Vec<wa::message::ContactMessage> = b
        .contacts
        .iter()
        .map(|c| {
            let mut vcard = format!("BEGIN:VCARD\nVERSION:3.0\nFN:{}\n", c.name);
            if let Some(org) = &c.organization {
                vcard.push_str(&format!("ORG:{org}\n"));
            }
            if let Some(email) = &c.email {
                vcard.push_str(&format!("EMAIL:{email}\n"));
            }
            let digits: String = c.phone.chars().filter(char::is_ascii_digit).collect();
            vcard.push_str(&format!("TEL;type=CELL;waid={digits}:+{digits}\nEND:VCARD"));
            wa::message::ContactMessage {
                display_name: Some(c.name.clone()),
                vcard: Some(vcard),
                ..Default::default()
            }
        })
        .collect();
    if let [one] = cards.as_slice() {
        return wa::Message {
            contact_message: MessageField::some(one.clone()),
            ..Default::default()
        };
    }
    wa::Message {
        contacts_array_message: MessageField::some(wa::message::ContactsArrayMessage {
            display_name: Some(format!("{} contacts", cards.len())),
            contacts: cards,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A reaction to a message of the chat (an empty emoji removes it).
pub fn reaction(to: &Jid, b: &ReactionBody) -> Result<wa::Message, NetworkError> {
    let key = wa::MessageKey {
        remote_jid: Some(to.to_string()),
        from_me: Some(b.from_me),
        id: Some(b.message_id.clone()),
        participant: b.participant.as_ref().map(ToString::to_string),
    };
    Ok(wa::Message {
        reaction_message: MessageField::some(wa::message::ReactionMessage {
            key: MessageField::some(key),
            text: Some(b.emoji.clone()),
            sender_timestamp_ms: Some(crate::domain::time::unix_now() * 1000),
            ..Default::default()
        }),
        ..Default::default()
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    fn jid(s: &str) -> Jid {
        Jid::parse(s).unwrap()
    }

    fn said(text: &str) -> wa::Message {
        wa::Message {
            conversation: Some(text.into()),
            ..Default::default()
        }
    }

    fn text_body(quoted: Option<&str>, mentions: &[&str]) -> TextBody {
        TextBody {
            text: "reply".into(),
            quoted_message_id: quoted.map(Into::into),
            mentions: mentions.iter().map(|m| jid(m)).collect(),
        }
    }

    fn poll_body(options: &[&str], selectable_count: u32) -> PollBody {
        PollBody {
            question: "Lunch?".into(),
            options: options.iter().map(|o| (*o).to_owned()).collect(),
            selectable_count,
        }
    }

    #[test]
    fn a_text_without_quote_or_mentions_is_a_plain_conversation() {
        let m = text(&text_body(None, &[]), None);
        assert_eq!(m.conversation.as_deref(), Some("reply"));
        assert!(m.extended_text_message.is_unset());
    }

    #[test]
    fn a_reply_with_mentions_carries_both_its_quote_and_its_mentions() {
        let chat = "15552223333@s.whatsapp.net";
        let mention = "15556667777@s.whatsapp.net";
        let quoted = history::Quoted {
            chat: chat.parse().unwrap(),
            sender: chat.parse().unwrap(),
            message: said("hi"),
        };
        let quote = history::quote_context("Q1", &jid(chat), Some(&quoted));
        let m = text(&text_body(Some("Q1"), &[mention]), Some(quote));
        let ext = m.extended_text_message.as_option().unwrap();
        assert_eq!(ext.text.as_deref(), Some("reply"));
        let ctx = ext.context_info.as_option().unwrap();
        assert_eq!(ctx.stanza_id.as_deref(), Some("Q1"));
        assert_eq!(ctx.participant.as_deref(), Some(chat));
        assert!(ctx.quoted_message.is_set());
        assert_eq!(ctx.mentioned_jid, [mention]);
    }

    #[test]
    fn a_single_choice_poll_is_a_v3_poll_carrying_its_secret() {
        let m = poll(
            &poll_body(&["Pizza", "Sushi", "Tacos"], 1),
            [7; POLL_SECRET_LEN],
        )
        .unwrap();
        assert!(m.poll_creation_message.is_unset());
        let p = m.poll_creation_message_v3.as_option().unwrap();
        assert_eq!(p.name.as_deref(), Some("Lunch?"));
        let names: Vec<_> = p.options.iter().map(|o| o.option_name.as_deref()).collect();
        assert_eq!(names, [Some("Pizza"), Some("Sushi"), Some("Tacos")]);
        assert!(p.options.iter().all(|o| o.option_hash.is_none()));
        assert_eq!(p.selectable_options_count, Some(1));
        assert_eq!(
            p.poll_content_type,
            Some(wa::message::PollContentType::TEXT)
        );
        assert_eq!(p.poll_type, None, "not a quiz");
        let secret = m
            .message_context_info
            .as_option()
            .unwrap()
            .message_secret
            .as_deref();
        assert_eq!(secret, Some(&[7u8; 32][..]));
    }

    #[test]
    fn a_multiple_choice_poll_is_the_original_poll_message() {
        let m = poll(&poll_body(&["A", "B", "C"], 2), poll_secret()).unwrap();
        assert!(m.poll_creation_message_v3.is_unset());
        let p = m.poll_creation_message.as_option().unwrap();
        assert_eq!(p.selectable_options_count, Some(2));
        assert_eq!(p.options.len(), 3);
        let info = m.message_context_info.as_option().unwrap();
        assert_eq!(
            info.message_secret.as_ref().map(Vec::len),
            Some(POLL_SECRET_LEN)
        );
    }

    #[test]
    fn each_poll_gets_a_fresh_secret() {
        assert_ne!(poll_secret(), poll_secret());
    }

    #[test]
    fn a_malformed_poll_is_refused_before_it_is_sent() {
        for (options, count) in [
            (&["A"][..], 1),
            (&["A", "B"][..], 0),
            (&["A", "B"][..], 3),
            (&["A", "A"][..], 1),
        ] {
            assert!(
                matches!(
                    poll(&poll_body(options, count), [0; POLL_SECRET_LEN]),
                    Err(NetworkError::Rejected(_))
                ),
                "{options:?} choosing {count}"
            );
        }
    }

    #[test]
    fn every_send_goes_out_under_the_gateways_message_id_with_its_chats_timer() {
        let options = send_options("3EB0GATEWAY", None);
        assert_eq!(options.message_id.as_deref(), Some("3EB0GATEWAY"));
        assert_eq!(options.ephemeral_expiration, None);
        let options = send_options("3EB0GATEWAY", Some(86_400));
        assert_eq!(options.ephemeral_expiration, Some(86_400));
        assert_eq!(
            send_options("3EB0GATEWAY", Some(0)).ephemeral_expiration,
            None
        );
    }

    #[test]
    fn a_sent_poll_is_kept_under_the_gateways_id_with_its_secret() {
        let group: whatsapp_rust::Jid = "120363000000000001@g.us".parse().unwrap();
        let own: whatsapp_rust::Jid = "15550001111:3@s.whatsapp.net".parse().unwrap();
        let sent = poll(&poll_body(&["A", "B"], 1), [5; POLL_SECRET_LEN]).unwrap();
        let row = history::sent_row("3EB0GATEWAY", &group, &own, 1_700_000_000, &sent);
        assert_eq!(row.message_id, "3EB0GATEWAY");
        assert_eq!(row.chat, "120363000000000001@g.us");
        assert_eq!(
            row.sender, "15550001111@s.whatsapp.net",
            "without the device"
        );
        assert_eq!(row.timestamp, 1_700_000_000);
        let back = whatsapp_rust::waproto::codec::message_decode(&row.proto).unwrap();
        assert_eq!(back, sent);
        assert_eq!(
            back.message_context_info
                .as_option()
                .unwrap()
                .message_secret
                .as_deref(),
            Some(&[5u8; 32][..])
        );
    }
}
