//! Sends: each send kind as the crate's `wa::Message`, sent under the
//! gateway's message id. Media is fetched (for `url`), taken from `data`, or
//! read from the media store (for `media_id`: an upload or a downloaded
//! inbound media of the same session), then encrypted and uploaded by the
//! crate, which takes the whole file in memory; every source is bounded by
//! the same per-kind size limit before it is read. Polls are built here as WhatsApp
//! Web builds them (the crate's builder is private), so they too go out under
//! the gateway's id. Buttons, lists and CTA-URL messages are not supported:
//! WhatsApp only renders them from the Business API.
//!
//! Every message sent is kept in the session's history and a reply's quote
//! is looked up there (`history.rs`).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use whatsapp_rust::Client;
use whatsapp_rust::download::MediaType;
use whatsapp_rust::send::SendOptions;
use whatsapp_rust::upload::UploadOptions;
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::history;
use crate::domain::jid::Jid;
use crate::domain::send::{
    ContactBody, LocationBody, MAX_AUDIO_BYTES, MAX_DOCUMENT_BYTES, MAX_IMAGE_BYTES,
    MAX_VIDEO_BYTES, MediaSource, OutboundContent, PollBody, ReactionBody, TextBody,
};
use crate::media_store::{MediaStore, MediaStoreError, media_key};
use crate::store::Store;
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

/// Where a send reads from: the store (quotes, history) and the media
/// store (uploads named by `media_id`).
#[derive(Clone, Copy)]
pub struct Stores<'a> {
    /// The database.
    pub store: &'a Store,
    /// The media store.
    pub media: &'a MediaStore,
}

/// Sends `content` to `to` under `message_id` and keeps what was sent in
/// session `session_id`'s message history.
pub async fn send(
    client: &Arc<Client>,
    Stores { store, media }: Stores<'_>,
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
                    Some(history::look_up_quote(store, session_id, quoted_id, to).await)
                }
                None => None,
            };
            text(b, quote)
        }
        OutboundContent::Location(b) => location(b),
        OutboundContent::Contact(b) => contact(b),
        OutboundContent::Reaction(b) => reaction(to, b)?,
        OutboundContent::Image(b) => {
            let up = upload(client, media, session_id, &b.source, MediaType::Image).await?;
            image(up, &b.mimetype, b.caption.clone(), b.view_once)
        }
        OutboundContent::Video(b) => {
            let up = upload(client, media, session_id, &b.source, MediaType::Video).await?;
            video(up, &b.mimetype, b.caption.clone(), b.view_once)
        }
        OutboundContent::Audio(b) => {
            let up = upload(client, media, session_id, &b.source, MediaType::Audio).await?;
            audio(up, &b.mimetype, b.ptt)
        }
        OutboundContent::Document(b) => {
            let up = upload(client, media, session_id, &b.source, MediaType::Document).await?;
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
    history::keep_sent(client, store, session_id, &receipt, &jid, &kept).await;
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
/// (The crate's own answer cannot be built outside it, so the message
/// builders take this copy of its fields.)
struct Uploaded {
    url: String,
    direct_path: String,
    media_key: [u8; 32],
    file_enc_sha256: [u8; 32],
    file_sha256: [u8; 32],
    file_length: u64,
    media_key_timestamp: i64,
    streaming_sidecar: Option<Vec<u8>>,
}

impl From<whatsapp_rust::upload::UploadResponse> for Uploaded {
    fn from(u: whatsapp_rust::upload::UploadResponse) -> Self {
        Self {
            url: u.url,
            direct_path: u.direct_path,
            media_key: u.media_key,
            file_enc_sha256: u.file_enc_sha256,
            file_sha256: u.file_sha256,
            file_length: u.file_length,
            media_key_timestamp: u.media_key_timestamp,
            streaming_sidecar: u.streaming_sidecar,
        }
    }
}

async fn upload(
    client: &Client,
    media: &MediaStore,
    session_id: &str,
    source: &MediaSource,
    kind: MediaType,
) -> Result<Uploaded, NetworkError> {
    let bytes = match source {
        MediaSource::Data(d) => d.clone(),
        MediaSource::Url(url) => fetch(url, size_limit(&kind)).await?,
        MediaSource::Stored(id) => stored(media, session_id, id, size_limit(&kind)).await?,
    };
    client
        .upload(bytes, kind, UploadOptions::default())
        .await
        .map(Uploaded::from)
        .map_err(|e| NetworkError::Failed(format!("the media upload failed: {e}")))
}

/// The bytes of a media the session holds (an upload, or inbound media),
/// bounded like media given inline. The crate encrypts and uploads from
/// memory, so this is where a stored media is read whole, once, per send.
async fn stored(
    media: &MediaStore,
    session_id: &str,
    media_id: &str,
    limit: usize,
) -> Result<Vec<u8>, NetworkError> {
    let key = media_key(session_id, media_id);
    let unreadable = |e: MediaStoreError| {
        NetworkError::Failed(format!("the media `{media_id}` could not be read: {e}"))
    };
    let size = match media.size(&key).await {
        Ok(size) => size,
        Err(MediaStoreError::NotFound(_)) => {
            return Err(NetworkError::Rejected(format!(
                "the media `{media_id}` is no longer in the media store"
            )));
        }
        Err(e) => return Err(unreadable(e)),
    };
    if size > limit as u64 {
        return Err(NetworkError::Rejected(format!(
            "the media `{media_id}` is {size} bytes; the most a send of its kind takes is {} MiB",
            limit >> 20
        )));
    }
    let blob = media.read(&key, None).await.map_err(unreadable)?;
    let mut bytes = Vec::with_capacity(size as usize);
    let mut stream = blob.stream;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| unreadable(MediaStoreError::Backend(e.to_string())))?;
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
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

    /// What the crate's upload of `bytes` would have answered (its own
    /// type cannot be built outside it).
    fn uploaded_as(bytes: &[u8], direct_path: &str) -> Uploaded {
        use sha2::Digest;
        Uploaded {
            url: "https://mmg.whatsapp.net/d/f/enc".into(),
            direct_path: direct_path.into(),
            media_key: [1; 32],
            file_enc_sha256: [2; 32],
            file_sha256: sha2::Sha256::digest(bytes).into(),
            file_length: bytes.len() as u64,
            media_key_timestamp: 1_700_000_000,
            streaming_sidecar: None,
        }
    }

    /// A media store holding `bytes` as session `s`'s media `up-1`.
    async fn store_with(dir: &std::path::Path, bytes: &[u8]) -> MediaStore {
        let media = crate::whatsapp::test_media_store(dir);
        media
            .put_bytes(&media_key("s", "up-1"), bytes.to_vec().into())
            .await
            .unwrap();
        media
    }

    #[tokio::test]
    async fn a_stored_upload_is_read_back_only_within_its_kinds_limit_and_only_by_its_session() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = b"%PDF-1.7 a stored upload".to_vec();
        let media = store_with(dir.path(), &bytes).await;
        assert_eq!(stored(&media, "s", "up-1", 1024).await.unwrap(), bytes);
        assert_eq!(
            stored(&media, "s", "up-1", bytes.len()).await.unwrap(),
            bytes,
            "a media of exactly the limit is taken"
        );
        match stored(&media, "s", "up-1", 4).await {
            Err(NetworkError::Rejected(m)) => assert!(m.contains("most a send"), "{m}"),
            other => panic!("{other:?}"),
        }
        match stored(&media, "other", "up-1", 1024).await {
            Err(NetworkError::Rejected(m)) => assert!(m.contains("no longer"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn building_the_outbound_document_from_a_stored_upload_keeps_every_field() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = b"%PDF-1.7 a stored upload".to_vec();
        let media = store_with(dir.path(), &bytes).await;
        let loaded = stored(&media, "s", "up-1", size_limit(&MediaType::Document))
            .await
            .unwrap();
        let up = uploaded_as(&loaded, "/v/t62.7119-24/doc");
        let sha = up.file_sha256;
        let message = document(up, "application/pdf", "offer.pdf", Some("the offer".into()));
        let d = message
            .document_message
            .as_option()
            .expect("a document message");
        assert_eq!(d.mimetype.as_deref(), Some("application/pdf"));
        assert_eq!(d.file_name.as_deref(), Some("offer.pdf"));
        assert_eq!(d.caption.as_deref(), Some("the offer"));
        assert_eq!(d.file_length, Some(bytes.len() as u64));
        assert_eq!(d.file_sha256.as_deref(), Some(sha.as_slice()));
        assert_eq!(d.file_enc_sha256.as_deref(), Some([2u8; 32].as_slice()));
        assert_eq!(d.media_key.as_deref(), Some([1u8; 32].as_slice()));
        assert_eq!(d.direct_path.as_deref(), Some("/v/t62.7119-24/doc"));
        assert_eq!(d.url.as_deref(), Some("https://mmg.whatsapp.net/d/f/enc"));
        assert_eq!(d.media_key_timestamp, Some(1_700_000_000));
    }

    #[tokio::test]
    async fn building_the_outbound_image_from_a_stored_upload_keeps_every_field() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = b"\x89PNG a stored image".to_vec();
        let media = store_with(dir.path(), &bytes).await;
        let loaded = stored(&media, "s", "up-1", size_limit(&MediaType::Image))
            .await
            .unwrap();
        assert_eq!(loaded, bytes);
        let up = uploaded_as(&loaded, "/v/t62.7118-24/img");
        let sha = up.file_sha256;
        let message = image(up, "image/png", Some("look".into()), true);
        let i = message.image_message.as_option().expect("an image message");
        assert_eq!(i.mimetype.as_deref(), Some("image/png"));
        assert_eq!(i.caption.as_deref(), Some("look"));
        assert_eq!(i.view_once, Some(true));
        assert_eq!(i.file_length, Some(bytes.len() as u64));
        assert_eq!(i.file_sha256.as_deref(), Some(sha.as_slice()));
        assert_eq!(i.file_enc_sha256.as_deref(), Some([2u8; 32].as_slice()));
        assert_eq!(i.media_key.as_deref(), Some([1u8; 32].as_slice()));
        assert_eq!(i.direct_path.as_deref(), Some("/v/t62.7118-24/img"));
        assert_eq!(i.media_key_timestamp, Some(1_700_000_000));
    }

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

    #[test]
    fn a_url_is_held_to_the_same_limits_as_inline_media() {
        assert_eq!(size_limit(&MediaType::Image), MAX_IMAGE_BYTES);
        assert_eq!(size_limit(&MediaType::Video), MAX_VIDEO_BYTES);
        assert_eq!(size_limit(&MediaType::Audio), MAX_AUDIO_BYTES);
        assert_eq!(size_limit(&MediaType::Document), MAX_DOCUMENT_BYTES);
    }
}
