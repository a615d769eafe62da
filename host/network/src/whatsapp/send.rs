//! Sends: each send kind as the crate's `wa::Message`, sent under the
//! gateway's message id. Media is fetched (for `url`) or taken from `data`,
//! encrypted and uploaded by the crate first. Polls are built here as WhatsApp
//! Web builds them (the crate's builder is private), so they too go out under
//! the gateway's id. Buttons, lists and CTA-URL messages are not supported:
//! WhatsApp only renders them from the Business API.
//!
//! Every message sent is kept (`Store::put_wa_messages`) under its id, so a
//! later reply can quote it and a poll's secret is there for its votes. A
//! reply looks the quoted message up there: a kept one is quoted with its
//! author and content; an unknown one by its id alone.

use std::sync::Arc;
use std::time::Duration;

use whatsapp_rust::Client;
use whatsapp_rust::download::MediaType;
use whatsapp_rust::send::SendOptions;
use whatsapp_rust::upload::UploadOptions;
use whatsapp_rust::wacore::proto_helpers::build_quote_context_with_info;
use whatsapp_rust::waproto::buffa::{Message as _, MessageField};
use whatsapp_rust::waproto::whatsapp as wa;

use crate::domain::jid::{Jid, JidKind};
use crate::domain::send::{
    ContactBody, LocationBody, MAX_AUDIO_BYTES, MAX_DOCUMENT_BYTES, MAX_IMAGE_BYTES,
    MAX_VIDEO_BYTES, MediaSource, OutboundContent, PollBody, ReactionBody, TextBody,
};
use crate::store::Store;
use crate::store::whatsapp::WaMessageRow;
use crate::{NetworkError, SendReceipt};

/// Length of a poll's `message_secret`, from which voters derive the key
/// that encrypts their votes.
pub const POLL_SECRET_LEN: usize = 32;

/// The crate's JID for one of ours.
pub fn wa_jid(j: &Jid) -> Result<whatsapp_rust::Jid, NetworkError> {
    j.to_string().parse().map_err(|e| {
        NetworkError::Rejected(format!("`{j}` is not an address WhatsApp accepts: {e}"))
    })
}

/// Sends `content` to `to` under `message_id` and keeps what was sent in
/// session `session_id`'s message history.
pub async fn send(
    client: &Arc<Client>,
    store: &Store,
    session_id: &str,
    message_id: &str,
    to: &Jid,
    content: &OutboundContent,
) -> Result<SendReceipt, NetworkError> {
    let jid = wa_jid(to)?;
    let message = match content {
        OutboundContent::Text(b) => {
            let quote = match &b.quoted_message_id {
                Some(quoted_id) => Some(look_up_quote(store, session_id, quoted_id, to).await),
                None => None,
            };
            text(b, quote)
        }
        OutboundContent::Location(b) => location(b),
        OutboundContent::Contact(b) => contact(b),
        OutboundContent::Reaction(b) => reaction(to, b)?,
        OutboundContent::Image(b) => {
            let up = upload(client, &b.source, MediaType::Image).await?;
            image(up, &b.mimetype, b.caption.clone(), b.view_once)
        }
        OutboundContent::Video(b) => {
            let up = upload(client, &b.source, MediaType::Video).await?;
            video(up, &b.mimetype, b.caption.clone(), b.view_once)
        }
        OutboundContent::Audio(b) => {
            let up = upload(client, &b.source, MediaType::Audio).await?;
            audio(up, &b.mimetype, b.ptt)
        }
        OutboundContent::Document(b) => {
            let up = upload(client, &b.source, MediaType::Document).await?;
            document(up, &b.mimetype, &b.filename, b.caption.clone())
        }
        OutboundContent::Poll(b) => poll(b, poll_secret())?,
        OutboundContent::CtaUrl(_) | OutboundContent::Buttons(_) | OutboundContent::List(_) => {
            return Err(NetworkError::NotSupported(format!(
                "`{}` messages are not supported by the whatsapp backend: WhatsApp renders buttons, lists and URL buttons only from the Business API, not from linked devices",
                content.kind().as_str()
            )));
        }
    };
    // The crate consumes the message; the copy is what gets kept.
    let kept = message.clone();
    let sent = client
        .send_message_with_options(jid.clone(), message, send_options(message_id))
        .await
        .map_err(|e| NetworkError::Failed(format!("the message was not sent: {e}")))?;
    let receipt = receipt(sent.message_id);
    keep_sent(client, store, session_id, &receipt, &jid, &kept).await;
    Ok(receipt)
}

/// Every send goes out under the gateway's message id, so a retry of the
/// same send (blasts, the scheduler) is the same message to WhatsApp.
fn send_options(message_id: &str) -> SendOptions {
    SendOptions::default().with_message_id(message_id)
}

fn receipt(message_id: String) -> SendReceipt {
    SendReceipt {
        message_id,
        timestamp: crate::domain::time::unix_now(),
    }
}

/// Keeps a sent message in the session's history. A failure is logged, not
/// returned: the message is out, and failing the send would have it sent again.
async fn keep_sent(
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
    let (store, sid) = (store.clone(), session_id.to_owned());
    let kept = tokio::task::spawn_blocking(move || store.put_wa_messages(&sid, &[row]))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()));
    if let Err(e) = kept {
        tracing::warn!(session = %session_id, message_id = %receipt.message_id, error = %e, "could not keep the sent message for quotes and poll votes");
    }
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
fn sent_row(
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
async fn look_up_quote(
    store: &Store,
    session_id: &str,
    quoted_id: &str,
    to: &Jid,
) -> wa::ContextInfo {
    let (s, sid, qid) = (store.clone(), session_id.to_owned(), quoted_id.to_owned());
    let kept = tokio::task::spawn_blocking(move || s.wa_message(&sid, &qid))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()))
        .unwrap_or_else(|e| {
            tracing::warn!(session = %session_id, quoted = %quoted_id, error = %e, "could not read the quoted message; quoting it by id only");
            None
        });
    let quoted = match kept.as_ref().map(Quoted::from_row) {
        Some(Ok(q)) => Some(q),
        Some(Err(e)) => {
            tracing::debug!(session = %session_id, quoted = %quoted_id, error = %e, "the kept quoted message is unreadable; quoting it by id only");
            None
        }
        None => {
            tracing::debug!(session = %session_id, quoted = %quoted_id, "the quoted message is not kept; quoting it by id only");
            None
        }
    };
    quote_context(quoted_id, to, quoted.as_ref())
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
    let one_to_one = matches!(to.kind(), JidKind::User | JidKind::Lid);
    wa::ContextInfo {
        stanza_id: Some(quoted_id.to_owned()),
        participant: one_to_one.then(|| to.to_string()),
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

/// What an upload gave, for the media message fields.
struct Uploaded(whatsapp_rust::upload::UploadResponse);

async fn upload(
    client: &Client,
    source: &MediaSource,
    kind: MediaType,
) -> Result<Uploaded, NetworkError> {
    let bytes = match source {
        MediaSource::Data(d) => d.clone(),
        MediaSource::Url(url) => fetch(url, size_limit(&kind)).await?,
    };
    client
        .upload(bytes, kind, UploadOptions::default())
        .await
        .map(Uploaded)
        .map_err(|e| NetworkError::Failed(format!("the media upload failed: {e}")))
}

/// The largest media of a kind the gateway sends: the same limits as for
/// media given inline (`data`), so a URL is no way around them.
fn size_limit(kind: &MediaType) -> usize {
    match kind {
        MediaType::Image => MAX_IMAGE_BYTES,
        MediaType::Video => MAX_VIDEO_BYTES,
        MediaType::Audio => MAX_AUDIO_BYTES,
        _ => MAX_DOCUMENT_BYTES,
    }
}

/// Downloads media given by URL, bounded in time and in size: a body (or a
/// declared `Content-Length`) over `limit` bytes is refused as soon as it
/// shows, without holding more than `limit` bytes.
async fn fetch(url: &str, limit: usize) -> Result<Vec<u8>, NetworkError> {
    super::http::install_crypto_provider();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| NetworkError::Failed(format!("could not fetch the media: {e}")))?;
    let mut response = client
        .get(url)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| {
            NetworkError::Rejected(format!("could not fetch the media from {url}: {e}"))
        })?;
    let too_large = || {
        NetworkError::Rejected(format!(
            "the media at {url} is larger than {} MiB, the limit for its kind",
            limit / (1024 * 1024)
        ))
    };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| NetworkError::Failed(format!("could not fetch the media from {url}: {e}")))?
    {
        if bytes.len() + chunk.len() > limit {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

fn image(u: Uploaded, mimetype: &str, caption: Option<String>, view_once: bool) -> wa::Message {
    let u = u.0;
    wa::Message {
        image_message: MessageField::some(wa::message::ImageMessage {
            url: Some(u.url),
            direct_path: Some(u.direct_path),
            media_key: Some(u.media_key.to_vec()),
            file_enc_sha256: Some(u.file_enc_sha256.to_vec()),
            file_sha256: Some(u.file_sha256.to_vec()),
            file_length: Some(u.file_length),
            media_key_timestamp: Some(u.media_key_timestamp),
            mimetype: Some(mimetype.to_owned()),
            caption,
            view_once: Some(view_once),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn video(u: Uploaded, mimetype: &str, caption: Option<String>, view_once: bool) -> wa::Message {
    let u = u.0;
    wa::Message {
        video_message: MessageField::some(wa::message::VideoMessage {
            url: Some(u.url),
            direct_path: Some(u.direct_path),
            media_key: Some(u.media_key.to_vec()),
            file_enc_sha256: Some(u.file_enc_sha256.to_vec()),
            file_sha256: Some(u.file_sha256.to_vec()),
            file_length: Some(u.file_length),
            media_key_timestamp: Some(u.media_key_timestamp),
            mimetype: Some(mimetype.to_owned()),
            caption,
            view_once: Some(view_once),
            streaming_sidecar: u.streaming_sidecar,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn audio(u: Uploaded, mimetype: &str, ptt: bool) -> wa::Message {
    let u = u.0;
    wa::Message {
        audio_message: MessageField::some(wa::message::AudioMessage {
            url: Some(u.url),
            direct_path: Some(u.direct_path),
            media_key: Some(u.media_key.to_vec()),
            file_enc_sha256: Some(u.file_enc_sha256.to_vec()),
            file_sha256: Some(u.file_sha256.to_vec()),
            file_length: Some(u.file_length),
            media_key_timestamp: Some(u.media_key_timestamp),
            mimetype: Some(mimetype.to_owned()),
            ptt: Some(ptt),
            streaming_sidecar: u.streaming_sidecar,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn document(u: Uploaded, mimetype: &str, filename: &str, caption: Option<String>) -> wa::Message {
    let u = u.0;
    wa::Message {
        document_message: MessageField::some(wa::message::DocumentMessage {
            url: Some(u.url),
            direct_path: Some(u.direct_path),
            media_key: Some(u.media_key.to_vec()),
            file_enc_sha256: Some(u.file_enc_sha256.to_vec()),
            file_sha256: Some(u.file_sha256.to_vec()),
            file_length: Some(u.file_length),
            media_key_timestamp: Some(u.media_key_timestamp),
            mimetype: Some(mimetype.to_owned()),
            file_name: Some(filename.to_owned()),
            title: Some(filename.to_owned()),
            caption,
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// Serves one request with `head` then `body` and closes, as a media
    /// host would; the URL to fetch.
    async fn serve_once(head: String, body: Vec<u8>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                if n == 0 {
                    return;
                }
                request.extend_from_slice(&buf[..n]);
            }
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(&body).await;
            let _ = socket.shutdown().await;
        });
        format!("http://{addr}/media")
    }

    #[tokio::test]
    async fn media_within_the_limit_is_fetched_whole() {
        let body = vec![7u8; 1000];
        let url = serve_once(
            "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n".into(),
            body.clone(),
        )
        .await;
        assert_eq!(fetch(&url, 1024).await.unwrap(), body);
    }

    #[tokio::test]
    async fn media_without_a_length_is_cut_off_at_the_limit() {
        let url = serve_once(
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".into(),
            vec![7u8; 4096],
        )
        .await;
        match fetch(&url, 1024).await {
            Err(NetworkError::Rejected(m)) => assert!(m.contains("larger"), "{m}"),
            other => panic!("an oversized body gave {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_declared_length_over_the_limit_is_refused_before_the_body() {
        let url = serve_once(
            "HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\nConnection: close\r\n\r\n".into(),
            Vec::new(),
        )
        .await;
        match fetch(&url, 1024).await {
            Err(NetworkError::Rejected(m)) => assert!(m.contains("larger"), "{m}"),
            other => panic!("a declared 100 MiB body gave {other:?}"),
        }
    }

    fn jid(s: &str) -> Jid {
        Jid::parse(s).unwrap()
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
    fn a_text_without_quote_or_mentions_is_a_plain_conversation() {
        let m = text(&text_body(None, &[]), None);
        assert_eq!(m.conversation.as_deref(), Some("reply"));
        assert!(m.extended_text_message.is_unset());
    }

    #[test]
    fn a_reply_with_mentions_carries_both_its_quote_and_its_mentions() {
        let chat = "15552223333@s.whatsapp.net";
        let mention = "15556667777@s.whatsapp.net";
        let quote = quote_context("Q1", &jid(chat), Some(&kept(chat, chat, &said("hi"))));
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
    fn every_send_goes_out_under_the_gateways_message_id() {
        assert_eq!(
            send_options("3EB0GATEWAY").message_id.as_deref(),
            Some("3EB0GATEWAY")
        );
    }

    #[test]
    fn a_sent_poll_is_kept_under_the_gateways_id_with_its_secret() {
        let group: whatsapp_rust::Jid = "120363000000000001@g.us".parse().unwrap();
        let own: whatsapp_rust::Jid = "15550001111:3@s.whatsapp.net".parse().unwrap();
        let sent = poll(&poll_body(&["A", "B"], 1), [5; POLL_SECRET_LEN]).unwrap();
        let row = sent_row("3EB0GATEWAY", &group, &own, 1_700_000_000, &sent);
        assert_eq!(row.message_id, "3EB0GATEWAY");
        assert_eq!(row.chat, "120363000000000001@g.us");
        assert_eq!(
            row.sender, "15550001111@s.whatsapp.net",
            "without the device"
        );
        assert_eq!(row.timestamp, 1_700_000_000);
        let back = wa::Message::decode_from_slice(&row.proto).unwrap();
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

    #[test]
    fn a_url_is_held_to_the_same_limits_as_inline_media() {
        assert_eq!(size_limit(&MediaType::Image), MAX_IMAGE_BYTES);
        assert_eq!(size_limit(&MediaType::Video), MAX_VIDEO_BYTES);
        assert_eq!(size_limit(&MediaType::Audio), MAX_AUDIO_BYTES);
        assert_eq!(size_limit(&MediaType::Document), MAX_DOCUMENT_BYTES);
    }
}
