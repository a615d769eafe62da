//! The session's message history as sends use it: every message sent is
//! kept (`Store::put_wa_messages`) under the gateway's id, as from our own
//! JID, so a later reply can quote it and a poll's secret is there for its
//! votes; a reply looks the quoted message up there and is quoted with its
//! author and content when it is kept, by its id alone when not. (Inbound
//! messages are kept by `inbound.rs`.)

use whatsapp_rust::Client;
use whatsapp_rust::types::message::AddressingMode;
use whatsapp_rust::wacore::proto_helpers::build_quote_context_with_info;
use whatsapp_rust::wacore_binary::jid::JidExt as _;
use whatsapp_rust::waproto::buffa::{Message as _, MessageField};
use whatsapp_rust::waproto::whatsapp as wa;

use super::off_thread::with_store;
use super::send::wa_jid;
use crate::SendReceipt;
use crate::domain::jid::{Jid, JidKind};
use crate::domain::message::Direction;
use crate::store::Store;
use crate::store::whatsapp::WaMessageRow;

/// Keeps a sent message in the session's history. A failure is logged, not
/// returned: the message is out, and failing the send would have it sent again.
pub(super) async fn keep_sent(
    client: &Client,
    store: &Store,
    session_id: &str,
    receipt: &SendReceipt,
    to: &whatsapp_rust::Jid,
    message: &wa::Message,
) {
    let Some(own) = own_jid(to, client.pn(), client.lid()) else {
        tracing::warn!(session = %session_id, message_id = %receipt.message_id, "the account's own JID is unknown; the sent message is not kept for quotes");
        return;
    };
    let row = sent_row(&receipt.message_id, to, &own, receipt.timestamp, message);
    let kept = with_store(store, session_id, move |s, sid| {
        s.put_wa_messages(sid, &[row])
    })
    .await;
    if let Err(e) = kept {
        tracing::warn!(session = %session_id, message_id = %receipt.message_id, error = %e, "could not keep the sent message for quotes and poll votes");
    }
}

/// This account's address in `chat` (an edit names it; a quote of its own
/// message too): in a group its LID when
/// the group is LID-addressed, its phone JID otherwise (WhatsApp Web's
/// `getMeUserLidOrJidForChat`); `None` outside groups.
pub(super) async fn own_participant(
    client: &Client,
    chat: &whatsapp_rust::Jid,
) -> Result<Option<String>, crate::NetworkError> {
    if !chat.is_group() {
        return Ok(None);
    }
    let pn = client.pn().ok_or(crate::NetworkError::NotConnected)?;
    let lid_addressed = client
        .groups()
        .query_info(chat)
        .await
        .is_ok_and(|info| info.addressing_mode == AddressingMode::Lid);
    let own = match (lid_addressed, client.lid()) {
        (true, Some(lid)) => lid,
        _ => pn,
    };
    Ok(Some(own.to_non_ad_string()))
}

/// The account's own JID as the chat `to` knows it: the LID in a
/// LID-addressed chat, the phone JID elsewhere (either when only the other is
/// known). Poll-vote decryption tries the other namespace too, so a group in
/// LID addressing mode still opens its votes.
fn own_jid(
    to: &whatsapp_rust::Jid,
    pn: Option<whatsapp_rust::Jid>,
    lid: Option<whatsapp_rust::Jid>,
) -> Option<whatsapp_rust::Jid> {
    let (first, second) = if to.is_lid() { (lid, pn) } else { (pn, lid) };
    first.or(second)
}

/// The history row of a message we sent.
pub(super) fn sent_row(
    message_id: &str,
    to: &whatsapp_rust::Jid,
    own: &whatsapp_rust::Jid,
    timestamp: i64,
    message: &wa::Message,
) -> WaMessageRow {
    WaMessageRow {
        message_id: message_id.to_owned(),
        chat: to.to_non_ad_string(),
        sender: own.to_non_ad_string(),
        timestamp,
        proto: message.encode_to_vec(),
    }
}

/// The reply context for quoting `quoted_id` in a message to `to`, from the
/// session's kept messages (read off the async workers). A store failure is
/// logged and quotes by id alone, as for an unknown message.
///
/// A message the history does not keep (pruned, or from before the gateway
/// kept any) is quoted by id, with its author from the gateway's own record
/// of it when there is one: this account for one it sent, its sender for
/// one it received.
pub(super) async fn look_up_quote(
    client: &Client,
    store: &Store,
    session_id: &str,
    quoted_id: &str,
    to: &Jid,
) -> wa::ContextInfo {
    let quoted = kept(store, session_id, quoted_id).await;
    if quoted.is_some() {
        return quote_context(quoted_id, to, quoted.as_ref());
    }
    tracing::debug!(session = %session_id, quoted = %quoted_id, "the quoted message is not kept (or not readable); quoting it by id");
    let id = quoted_id.to_owned();
    let record = with_store(store, session_id, move |s, sid| s.message_by_id(sid, &id))
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(session = %session_id, quoted = %quoted_id, error = %e, "could not read the quoted message's record");
            None
        });
    let author = match record {
        None => None,
        Some(r) if r.direction == Direction::Inbound => r.sender.and_then(|s| s.parse().ok()),
        Some(_) => match wa_jid(to) {
            // In a group, our address is the one the group uses.
            Ok(group) if group.is_group() => own_participant(client, &group)
                .await
                .ok()
                .flatten()
                .and_then(|own| own.parse().ok()),
            Ok(chat) => own_jid(&chat, client.pn(), client.lid()),
            Err(_) => None,
        },
    };
    unknown_quote(quoted_id, to, author.as_ref())
}

/// The kept row with this id, read off the async workers; `None` when it
/// is not kept, or cannot be read (logged).
pub(super) async fn kept_row(
    store: &Store,
    session_id: &str,
    message_id: &str,
) -> Option<WaMessageRow> {
    let id = message_id.to_owned();
    with_store(store, session_id, move |s, sid| s.wa_message(sid, &id))
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(session = %session_id, message_id = %message_id, error = %e, "could not read the kept message");
            None
        })
}

/// The kept message with this id, ready to quote; `None` when it is not
/// kept, or cannot be read (logged).
pub(super) async fn kept(store: &Store, session_id: &str, message_id: &str) -> Option<Quoted> {
    let row = kept_row(store, session_id, message_id).await?;
    Quoted::from_row(&row)
        .inspect_err(|e| {
            tracing::debug!(session = %session_id, message_id = %message_id, error = %e, "the kept message is unreadable");
        })
        .ok()
}

/// A kept message, ready to be quoted.
#[derive(Debug, Clone)]
pub struct Quoted {
    /// The chat it was sent in.
    pub chat: whatsapp_rust::Jid,
    /// Who sent it.
    pub sender: whatsapp_rust::Jid,
    /// Its content.
    pub message: wa::Message,
}

impl Quoted {
    /// Reads a kept row: its chat and sender JIDs and its proto.
    pub fn from_row(row: &WaMessageRow) -> Result<Self, String> {
        let jid = |s: &str| {
            s.parse::<whatsapp_rust::Jid>()
                .map_err(|e| format!("`{s}` is not a JID: {e}"))
        };
        Ok(Quoted {
            chat: jid(&row.chat)?,
            sender: jid(&row.sender)?,
            message: wa::Message::decode_from_slice(&row.proto)
                .map_err(|e| format!("the proto does not decode: {e}"))?,
        })
    }
}

/// The `ContextInfo` of a reply to `quoted_id` in a message to `to`. A known
/// message is quoted as WhatsApp Web quotes it: its id, its sender as
/// `participant` (so a group quote shows its author), a copy of its content
/// without its own quote, mentions and message secret, and `remote_jid` when
/// it is from another chat. An unknown one is quoted by id, with the chat as
/// `participant` in a one-to-one chat (in a group the author is unknown);
/// the recipient's phone shows the quote when it has the message itself.
pub fn quote_context(quoted_id: &str, to: &Jid, quoted: Option<&Quoted>) -> wa::ContextInfo {
    if let (Some(q), Ok(target)) = (quoted, wa_jid(to)) {
        let mut context = build_quote_context_with_info(
            quoted_id,
            &q.sender,
            &q.chat,
            &target,
            &quotable(&q.message),
        );
        // A one-to-one chat has a phone and a LID address; a message kept
        // under one and answered under the other is most likely the same
        // chat, and naming it would show the reply as a private reply.
        let person = |j: &whatsapp_rust::Jid| j.is_pn() || j.is_lid();
        if person(&q.chat) && person(&target) && q.chat.is_lid() != target.is_lid() {
            context.remote_jid = None;
        }
        return context;
    }
    unknown_quote(quoted_id, to, None)
}

/// The `ContextInfo` of a reply to a message whose content is not kept: its
/// id, and its author as `participant` when known; else, in a one-to-one
/// chat, the chat (the likelier author of a message worth answering; in a
/// group the author is unknown).
pub fn unknown_quote(
    quoted_id: &str,
    to: &Jid,
    author: Option<&whatsapp_rust::Jid>,
) -> wa::ContextInfo {
    let one_to_one = matches!(to.kind(), JidKind::User | JidKind::Lid);
    let participant = match author {
        Some(a) => Some(a.to_non_ad_string()),
        None => one_to_one.then(|| to.to_string()),
    };
    wa::ContextInfo {
        stanza_id: Some(quoted_id.to_owned()),
        participant,
        ..Default::default()
    }
}

/// The content of a kept message as a quote carries it: out of its
/// device-sent and disappearing wrappers, without its message secret and
/// without the sender-key distribution a group message may carry. (The
/// crate's `prepare_for_quote`, applied on top, drops the nested quote and
/// mentions.)
fn quotable(message: &wa::Message) -> wa::Message {
    let mut m = message.clone();
    loop {
        let inner = if let Some(dsm) = m.device_sent_message.as_option()
            && let Some(inner) = dsm.message.as_option()
        {
            inner.clone()
        } else if let Some(eph) = m.ephemeral_message.as_option()
            && let Some(inner) = eph.message.as_option()
        {
            inner.clone()
        } else {
            break;
        };
        m = inner;
    }
    m.message_context_info = MessageField::none();
    m.sender_key_distribution_message = MessageField::none();
    m.fast_ratchet_key_sender_key_distribution_message = MessageField::none();
    m
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

    fn kept(chat: &str, sender: &str, message: &wa::Message) -> Quoted {
        Quoted::from_row(&WaMessageRow {
            message_id: "Q1".into(),
            chat: chat.into(),
            sender: sender.into(),
            timestamp: 1,
            proto: message.encode_to_vec(),
        })
        .unwrap()
    }

    #[test]
    fn a_reply_to_a_kept_message_quotes_its_id_author_and_content() {
        let chat = "15552223333@s.whatsapp.net";
        let q = kept(chat, chat, &said("hello"));
        let ctx = quote_context("Q1", &jid(chat), Some(&q));
        assert_eq!(ctx.stanza_id.as_deref(), Some("Q1"));
        assert_eq!(ctx.participant.as_deref(), Some(chat));
        assert_eq!(ctx.remote_jid, None, "a same-chat reply names no chat");
        assert_eq!(
            ctx.quoted_message
                .as_option()
                .unwrap()
                .conversation
                .as_deref(),
            Some("hello")
        );
    }

    #[test]
    fn a_group_reply_names_the_quoted_messages_author() {
        let group = "120363000000000001@g.us";
        let author = "15554445555@s.whatsapp.net";
        let ctx = quote_context("Q1", &jid(group), Some(&kept(group, author, &said("hi"))));
        assert_eq!(ctx.participant.as_deref(), Some(author));
        assert_eq!(ctx.remote_jid, None);
        assert!(ctx.quoted_message.is_set());
    }

    #[test]
    fn a_reply_to_a_message_of_another_chat_names_that_chat() {
        let group = "120363000000000001@g.us";
        let author = "15554445555@s.whatsapp.net";
        let ctx = quote_context("Q1", &jid(author), Some(&kept(group, author, &said("hi"))));
        assert_eq!(ctx.remote_jid.as_deref(), Some(group));
        assert_eq!(ctx.participant.as_deref(), Some(author));
    }

    #[test]
    fn a_reply_under_the_other_address_of_a_one_to_one_chat_is_not_a_private_reply() {
        let lid = "123456789012345@lid";
        let ctx = quote_context(
            "Q1",
            &jid("15552223333@s.whatsapp.net"),
            Some(&kept(lid, lid, &said("hi"))),
        );
        assert_eq!(ctx.remote_jid, None);
        assert_eq!(ctx.participant.as_deref(), Some(lid));
    }

    #[test]
    fn a_quoted_message_goes_without_its_secret_key_share_quote_or_mentions() {
        let group = "120363000000000001@g.us";
        let original = wa::Message {
            extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
                text: Some("see above".into()),
                context_info: MessageField::some(wa::ContextInfo {
                    stanza_id: Some("OLDER".into()),
                    participant: Some("15550000000@s.whatsapp.net".into()),
                    quoted_message: MessageField::some(said("older")),
                    mentioned_jid: vec!["15556667777@s.whatsapp.net".into()],
                    ..Default::default()
                }),
                ..Default::default()
            }),
            message_context_info: MessageField::some(wa::MessageContextInfo {
                message_secret: Some(vec![9; 32]),
                ..Default::default()
            }),
            sender_key_distribution_message: MessageField::some(
                wa::message::SenderKeyDistributionMessage {
                    group_id: Some(group.into()),
                    ..Default::default()
                },
            ),
            ..Default::default()
        };
        // As our phone's own sends arrive: wrapped for the other devices.
        let wrapped = wa::Message {
            device_sent_message: MessageField::some(wa::message::DeviceSentMessage {
                destination_jid: Some(group.into()),
                message: MessageField::some(original),
                ..Default::default()
            }),
            ..Default::default()
        };
        let ctx = quote_context(
            "Q1",
            &jid(group),
            Some(&kept(group, "15550001111@s.whatsapp.net", &wrapped)),
        );
        let quoted = ctx.quoted_message.as_option().unwrap();
        assert!(quoted.device_sent_message.is_unset());
        assert!(quoted.message_context_info.is_unset());
        assert!(quoted.sender_key_distribution_message.is_unset());
        let ext = quoted.extended_text_message.as_option().unwrap();
        assert_eq!(ext.text.as_deref(), Some("see above"));
        let inner = ext.context_info.as_option().unwrap();
        assert!(inner.quoted_message.is_unset());
        assert_eq!(inner.stanza_id, None);
        assert!(inner.mentioned_jid.is_empty());
    }

    #[test]
    fn an_unknown_quote_in_a_one_to_one_chat_names_the_chat_as_author() {
        for chat in ["15552223333@s.whatsapp.net", "123456789012345@lid"] {
            let ctx = quote_context("Q1", &jid(chat), None);
            assert_eq!(ctx.stanza_id.as_deref(), Some("Q1"));
            assert_eq!(ctx.participant.as_deref(), Some(chat));
            assert!(ctx.quoted_message.is_unset());
        }
    }

    #[test]
    fn a_quote_not_kept_names_the_author_the_gateways_record_gives_ours_included() {
        let own: whatsapp_rust::Jid = "15550001111:3@s.whatsapp.net".parse().unwrap();
        let ctx = unknown_quote("Q1", &jid("15552223333@s.whatsapp.net"), Some(&own));
        assert_eq!(
            ctx.participant.as_deref(),
            Some("15550001111@s.whatsapp.net")
        );
        let member: whatsapp_rust::Jid = "15554445555@s.whatsapp.net".parse().unwrap();
        let ctx = unknown_quote("Q1", &jid("120363000000000001@g.us"), Some(&member));
        assert_eq!(
            ctx.participant.as_deref(),
            Some("15554445555@s.whatsapp.net")
        );
    }

    #[tokio::test]
    async fn a_reply_to_a_message_the_history_lost_quotes_the_author_the_gateway_recorded() {
        use crate::domain::message::MessageRecord;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let backend =
            std::sync::Arc::new(crate::store::whatsapp::WaStore::new(store.clone(), "wa"));
        let client = crate::whatsapp::tests_pump::offline_client(backend).await;
        let group = "120363000000000001@g.us";
        store
            .append_message(&MessageRecord {
                message_id: "GONE1".into(),
                session_id: "wa".into(),
                direction: Direction::Inbound,
                chat: group.into(),
                sender: Some("15554445555@s.whatsapp.net".into()),
                kind: "text".into(),
                body: serde_json::json!({"text": "hi"}),
                timestamp: 1_700_000_000,
            })
            .unwrap();
        let ctx = look_up_quote(&client, &store, "wa", "GONE1", &jid(group)).await;
        assert_eq!(ctx.stanza_id.as_deref(), Some("GONE1"));
        assert_eq!(
            ctx.participant.as_deref(),
            Some("15554445555@s.whatsapp.net"),
            "the member who wrote it, not nobody"
        );
        let ctx = look_up_quote(&client, &store, "wa", "NEVER", &jid(group)).await;
        assert_eq!(ctx.participant, None);
    }

    #[test]
    fn an_unknown_quote_in_a_group_carries_its_id_only() {
        let ctx = quote_context("Q1", &jid("120363000000000001@g.us"), None);
        assert_eq!(ctx.stanza_id.as_deref(), Some("Q1"));
        assert_eq!(ctx.participant, None);
        assert!(ctx.quoted_message.is_unset());
    }

    #[test]
    fn a_kept_row_that_does_not_decode_is_not_quotable() {
        let row = WaMessageRow {
            message_id: "Q1".into(),
            chat: "15552223333@s.whatsapp.net".into(),
            sender: "15552223333@s.whatsapp.net".into(),
            timestamp: 1,
            proto: vec![0xff, 0xff, 0xff],
        };
        assert!(Quoted::from_row(&row).is_err());
    }

    #[test]
    fn our_own_messages_are_kept_as_from_the_lid_in_a_lid_chat_and_the_phone_elsewhere() {
        let parse = |s: &str| s.parse::<whatsapp_rust::Jid>().unwrap();
        let (pn, lid) = (parse("15550001111@s.whatsapp.net"), parse("999888777@lid"));
        let in_chat =
            |to: &str, pn: Option<&whatsapp_rust::Jid>, lid: Option<&whatsapp_rust::Jid>| {
                own_jid(&parse(to), pn.cloned(), lid.cloned()).map(|j| j.to_string())
            };
        let lid_chat = "123456789012345@lid";
        let pn_chat = "15552223333@s.whatsapp.net";
        assert_eq!(
            in_chat(lid_chat, Some(&pn), Some(&lid)),
            Some(lid.to_string())
        );
        assert_eq!(
            in_chat(pn_chat, Some(&pn), Some(&lid)),
            Some(pn.to_string())
        );
        assert_eq!(in_chat(lid_chat, Some(&pn), None), Some(pn.to_string()));
        assert_eq!(in_chat(pn_chat, None, None), None);
    }
}
