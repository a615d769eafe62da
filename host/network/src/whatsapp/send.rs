//! Sends: each send kind as the crate's `wa::Message`, sent under the
//! gateway's message id. Media is fetched (for `url`) or taken from `data`,
//! encrypted and uploaded by the crate first. Polls go through the crate's
//! poll API (which picks the id). Buttons, lists and CTA-URL messages are not
//! supported: WhatsApp only renders them from the Business API.

use std::sync::Arc;
use std::time::Duration;

use whatsapp_rust::Client;
use whatsapp_rust::download::MediaType;
use whatsapp_rust::send::SendOptions;
use whatsapp_rust::upload::UploadOptions;
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::domain::jid::Jid;
use crate::domain::send::{
    ContactBody, LocationBody, MAX_AUDIO_BYTES, MAX_DOCUMENT_BYTES, MAX_IMAGE_BYTES,
    MAX_VIDEO_BYTES, MediaSource, OutboundContent, ReactionBody, TextBody,
};
use crate::{NetworkError, SendReceipt};

/// The crate's JID for one of ours.
pub fn wa_jid(j: &Jid) -> Result<whatsapp_rust::Jid, NetworkError> {
    j.to_string().parse().map_err(|e| {
        NetworkError::Rejected(format!("`{j}` is not an address WhatsApp accepts: {e}"))
    })
}

/// Sends `content` to `to` under `message_id`.
pub async fn send(
    client: &Arc<Client>,
    message_id: &str,
    to: &Jid,
    content: &OutboundContent,
) -> Result<SendReceipt, NetworkError> {
    let jid = wa_jid(to)?;
    let message = match content {
        OutboundContent::Text(b) => text(b)?,
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
        OutboundContent::Poll(b) => {
            let (sent, _secret) = client
                .polls()
                .create(jid, &b.question, &b.options, b.selectable_count)
                .await
                .map_err(|e| NetworkError::Failed(format!("the poll was not sent: {e}")))?;
            return Ok(receipt(sent.message_id));
        }
        OutboundContent::CtaUrl(_) | OutboundContent::Buttons(_) | OutboundContent::List(_) => {
            return Err(NetworkError::NotSupported(format!(
                "`{}` messages are not supported by the whatsapp backend: WhatsApp renders buttons, lists and URL buttons only from the Business API, not from linked devices",
                content.kind().as_str()
            )));
        }
    };
    let options = SendOptions::default().with_message_id(message_id);
    let sent = client
        .send_message_with_options(jid, message, options)
        .await
        .map_err(|e| NetworkError::Failed(format!("the message was not sent: {e}")))?;
    Ok(receipt(sent.message_id))
}

fn receipt(message_id: String) -> SendReceipt {
    SendReceipt {
        message_id,
        timestamp: crate::domain::time::unix_now(),
    }
}

/// A text, with its quote and mentions in the context when there are any.
pub fn text(b: &TextBody) -> Result<wa::Message, NetworkError> {
    if b.quoted_message_id.is_none() && b.mentions.is_empty() {
        return Ok(wa::Message {
            conversation: Some(b.text.clone()),
            ..Default::default()
        });
    }
    let context = wa::ContextInfo {
        stanza_id: b.quoted_message_id.clone(),
        mentioned_jid: b.mentions.iter().map(ToString::to_string).collect(),
        ..Default::default()
    };
    Ok(wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some(b.text.clone()),
            context_info: MessageField::some(context),
            ..Default::default()
        }),
        ..Default::default()
    })
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

    #[test]
    fn a_url_is_held_to_the_same_limits_as_inline_media() {
        assert_eq!(size_limit(&MediaType::Image), MAX_IMAGE_BYTES);
        assert_eq!(size_limit(&MediaType::Video), MAX_VIDEO_BYTES);
        assert_eq!(size_limit(&MediaType::Audio), MAX_AUDIO_BYTES);
        assert_eq!(size_limit(&MediaType::Document), MAX_DOCUMENT_BYTES);
    }
}
