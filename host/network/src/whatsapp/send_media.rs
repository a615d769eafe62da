//! The media of a send: its bytes (inline `data`, fetched from a `url`, or a
//! stored media named by `media_id`, each held to its kind's limit), the
//! crate's encrypted upload of them, and the media message built from what
//! the upload gave. A `url` is fetched through the egress guard's
//! [`Fetcher`](switchboard_egress::Fetcher): only checked public addresses
//! (unless `MEDIA_URL_ALLOW_PRIVATE`), pinned, no redirect, no
//! environment proxy, within `MEDIA_URL_TIMEOUT_SECS`, never more than the
//! kind's limit held. A stored media is never held whole: it is encrypted
//! into a temporary file as it is read and uploaded from there.

use std::io::Write as _;

use futures_util::StreamExt;
use switchboard_egress::{FetchError, MediaUrlConfig};
use whatsapp_rust::Client;
use whatsapp_rust::download::MediaType;
use whatsapp_rust::upload::UploadOptions;
use whatsapp_rust::wacore::upload::{EncryptedMediaInfo, MediaEncryptor, UploadSource};
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::NetworkError;
use crate::domain::send::{
    MAX_AUDIO_BYTES, MAX_DOCUMENT_BYTES, MAX_IMAGE_BYTES, MAX_VIDEO_BYTES, MediaSource,
};
use crate::media_store::{MediaStore, MediaStoreError, media_key};
use crate::whatsapp::media_facts::{self, Facts};
use crate::whatsapp::send::Stores;

/// What an upload gave, for the media message fields.
/// (The crate's own answer cannot be built outside it, so the message
/// builders take this copy of its fields.)
pub(super) struct Uploaded {
    url: String,
    direct_path: String,
    media_key: [u8; 32],
    file_enc_sha256: [u8; 32],
    file_sha256: [u8; 32],
    file_length: u64,
    media_key_timestamp: i64,
    streaming_sidecar: Option<Vec<u8>>,
    /// What was read of the plain media (size, length, thumbnail).
    facts: Facts,
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
            facts: Facts::default(),
        }
    }
}

pub(super) async fn upload(
    client: &Client,
    stores: Stores<'_>,
    session_id: &str,
    source: &MediaSource,
    kind: MediaType,
) -> Result<Uploaded, NetworkError> {
    let bytes = match source {
        MediaSource::Data(d) => d.clone(),
        MediaSource::Url(url) => fetch(stores.media_urls, url, size_limit(&kind)).await?,
        MediaSource::Stored(id) => {
            return stored(client, stores.media, session_id, id, kind).await;
        }
    };
    let (bytes, facts) = tokio::task::spawn_blocking(move || {
        let facts = media_facts::read(kind, &mut std::io::Cursor::new(&bytes));
        (bytes, facts)
    })
    .await
    .map_err(upload_failed)?;
    let mut up = client
        .upload(bytes, kind, UploadOptions::default())
        .await
        .map(Uploaded::from)
        .map_err(upload_failed)?;
    up.facts = facts;
    Ok(up)
}

fn upload_failed(e: impl std::fmt::Display) -> NetworkError {
    NetworkError::Failed(format!("the media upload failed: {e}"))
}

/// Uploads a media the session holds (an upload, or inbound media), bounded
/// like media given inline, without holding it in memory: it is encrypted
/// on a blocking thread as it is read from the media store, into an
/// unlinked temporary file (`spool`), and the crate streams the upload from
/// that file (`upload_stream`; the HTTP client feeds the request from it
/// chunk by chunk). A retry of the upload reads the file again.
async fn stored(
    client: &Client,
    media: &MediaStore,
    session_id: &str,
    media_id: &str,
    kind: MediaType,
) -> Result<Uploaded, NetworkError> {
    let bytes = stored_bytes(media, session_id, media_id, size_limit(&kind)).await?;
    let (spooled, info, facts) = spool(bytes, kind, media_id).await?;
    let mut up = client
        .upload_stream(spooled, info, kind)
        .await
        .map(Uploaded::from)
        .map_err(upload_failed)?;
    up.facts = facts;
    Ok(up)
}

/// The bytes of a media the session holds, as the media store streams
/// them, once its size is known to be within `limit`.
async fn stored_bytes(
    media: &MediaStore,
    session_id: &str,
    media_id: &str,
    limit: usize,
) -> Result<
    futures_util::stream::BoxStream<'static, Result<bytes::Bytes, std::io::Error>>,
    NetworkError,
> {
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
    Ok(media.read(&key, None).await.map_err(unreadable)?.stream)
}

/// Encrypts `bytes` as media of `kind`, on a blocking thread as they come,
/// into an unlinked temporary file; the file, what the encryption gave, and
/// the facts of the plain media (read from a second temporary file of the
/// plain bytes, kept only for a picture, a video or an audio).
async fn spool(
    mut bytes: futures_util::stream::BoxStream<'static, Result<bytes::Bytes, std::io::Error>>,
    kind: MediaType,
    media_id: &str,
) -> Result<(Spooled, EncryptedMediaInfo, Facts), NetworkError> {
    let (chunks, mut rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(CHUNKS_IN_FLIGHT);
    let sidecar = matches!(kind, MediaType::Audio | MediaType::Video);
    let has_facts = matches!(kind, MediaType::Image | MediaType::Video | MediaType::Audio);
    let encrypting = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        let mut file = tempfile::tempfile()?;
        let mut plain = if has_facts {
            Some(std::io::BufWriter::new(tempfile::tempfile()?))
        } else {
            None
        };
        let mut encryptor = MediaEncryptor::new_with_sidecar(kind, sidecar)?;
        let mut out = std::io::BufWriter::new(&mut file);
        while let Some(chunk) = rx.blocking_recv() {
            encryptor.update_to_writer(&chunk, &mut out)?;
            // The plain copy only serves the media's facts: one that cannot
            // be written is dropped, and the media goes without them.
            if let Some(copy) = plain.as_mut()
                && copy.write_all(&chunk).is_err()
            {
                plain = None;
            }
        }
        let info = encryptor.finalize_to_writer(&mut out)?;
        out.flush()?;
        drop(out);
        let len = file.metadata()?.len();
        let facts = match plain.map(std::io::BufWriter::into_inner) {
            Some(Ok(mut copy)) => media_facts::read(kind, &mut copy),
            _ => Facts::default(),
        };
        Ok((Spooled { file, len }, info, facts))
    });
    while let Some(chunk) = bytes.next().await {
        let chunk = chunk.map_err(|e| {
            NetworkError::Failed(format!("the media `{media_id}` could not be read: {e}"))
        })?;
        // A closed channel: the encryption failed, and says why below.
        if chunks.send(chunk).await.is_err() {
            break;
        }
    }
    drop(chunks);
    encrypting
        .await
        .map_err(upload_failed)?
        .map_err(|e| upload_failed(format!("could not encrypt the media: {e}")))
}

/// Chunks of a stored media on their way to the encrypting thread.
const CHUNKS_IN_FLIGHT: usize = 4;

/// A media encrypted into an unlinked temporary file, as the crate's
/// streaming upload reads it: from any offset, as often as it retries.
struct Spooled {
    file: std::fs::File,
    len: u64,
}

impl UploadSource for Spooled {
    fn len(&self) -> u64 {
        self.len
    }

    fn reader_from(&self, offset: u64) -> std::io::Result<Box<dyn std::io::Read + Send>> {
        Ok(Box::new(ReadAt {
            file: self.file.try_clone()?,
            offset,
        }))
    }
}

/// Reads a file from its own offset (positioned reads), so readers of the
/// same file never move each other's place.
struct ReadAt {
    file: std::fs::File,
    offset: u64,
}

impl std::io::Read for ReadAt {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
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

/// Downloads media given by URL under the media URLs' rule, bounded in
/// time and in size: a body (or a declared `Content-Length`) over `limit`
/// bytes is refused as soon as it shows, without holding more than `limit`
/// bytes. Everything the fetch refuses or cannot reach will not change on
/// a retry of the same send: `Rejected`.
async fn fetch(config: &MediaUrlConfig, url: &str, limit: usize) -> Result<Vec<u8>, NetworkError> {
    let fetcher = config
        .fetcher()
        .map_err(|e| NetworkError::Failed(e.to_string()))?;
    fetcher.get(url, limit).await.map_err(|e| match e {
        // A server error may pass; nothing else about the URL will.
        FetchError::Status(s) if s.is_server_error() => NetworkError::Failed(e.to_string()),
        e => NetworkError::Rejected(e.to_string()),
    })
}

pub(super) fn image(
    u: Uploaded,
    mimetype: &str,
    caption: Option<String>,
    view_once: bool,
) -> wa::Message {
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
            width: u.facts.width,
            height: u.facts.height,
            jpeg_thumbnail: u.facts.thumbnail,
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub(super) fn video(
    u: Uploaded,
    mimetype: &str,
    caption: Option<String>,
    view_once: bool,
) -> wa::Message {
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
            seconds: u.facts.seconds,
            width: u.facts.width,
            height: u.facts.height,
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub(super) fn audio(u: Uploaded, mimetype: &str, ptt: bool) -> wa::Message {
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
            seconds: u.facts.seconds,
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub(super) fn document(
    u: Uploaded,
    mimetype: &str,
    filename: &str,
    caption: Option<String>,
) -> wa::Message {
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
    use super::*;
    use crate::whatsapp::cdn;

    /// Media URLs allowed to reach the test's host on loopback.
    fn local() -> MediaUrlConfig {
        MediaUrlConfig {
            allow_private: true,
            ..MediaUrlConfig::default()
        }
    }

    #[tokio::test]
    async fn a_media_url_on_loopback_is_refused_without_a_request_under_the_default_rule() {
        let url = serve_once(
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\n".into(),
            vec![1],
        )
        .await;
        match fetch(&MediaUrlConfig::default(), &url, 1024).await {
            Err(NetworkError::Rejected(m)) => {
                assert!(m.contains("internal address 127.0.0.1"), "{m}");
                assert!(m.contains("MEDIA_URL_ALLOW_PRIVATE"), "{m}");
            }
            other => panic!("a loopback URL gave {other:?}"),
        }
    }

    /// Serves `head` then `body` as a media host would; the URL to fetch.
    async fn serve_once(head: String, body: Vec<u8>) -> String {
        format!(
            "http://{}/media",
            cdn::serve(head, body, std::time::Duration::ZERO).await
        )
    }

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
            facts: Facts::default(),
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

    /// The bytes of session `s`'s media `up-1` within `limit`, collected.
    async fn stored(
        media: &MediaStore,
        session: &str,
        id: &str,
        limit: usize,
    ) -> Result<Vec<u8>, NetworkError> {
        let mut stream = stored_bytes(media, session, id, limit).await?;
        let mut all = Vec::new();
        while let Some(chunk) = stream.next().await {
            all.extend_from_slice(&chunk.unwrap());
        }
        Ok(all)
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stored_media_spooled_in_pieces_decrypts_to_itself_and_reads_from_any_offset() {
        use std::io::Read as _;
        use whatsapp_rust::wacore::download::DownloadUtils;
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 241) as u8).collect();
        let pieces: Vec<Result<bytes::Bytes, std::io::Error>> = bytes
            .chunks(7_777)
            .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
            .collect();
        let stream = futures_util::stream::iter(pieces).boxed();
        let (spooled, info, _) = spool(stream, MediaType::Video, "up-1").await.unwrap();
        assert_eq!(info.file_length, bytes.len() as u64);
        assert!(info.streaming_sidecar.is_some(), "a video gets its sidecar");
        let mut encrypted = Vec::new();
        spooled
            .reader_from(0)
            .unwrap()
            .read_to_end(&mut encrypted)
            .unwrap();
        assert_eq!(encrypted.len() as u64, spooled.len());
        let plain =
            DownloadUtils::verify_and_decrypt(&encrypted, &info.media_key, MediaType::Video)
                .unwrap();
        assert_eq!(plain, bytes);
        // A retry resumes at an offset; two readers never move each other.
        let mut first = spooled.reader_from(0).unwrap();
        let mut tail = Vec::new();
        spooled
            .reader_from(1_000)
            .unwrap()
            .read_to_end(&mut tail)
            .unwrap();
        let mut head = [0u8; 16];
        first.read_exact(&mut head).unwrap();
        assert_eq!(
            (&head[..], &tail[..]),
            (&encrypted[..16], &encrypted[1_000..])
        );
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

    #[tokio::test]
    async fn media_within_the_limit_is_fetched_whole() {
        let body = vec![7u8; 1000];
        let url = serve_once(
            "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n".into(),
            body.clone(),
        )
        .await;
        assert_eq!(fetch(&local(), &url, 1024).await.unwrap(), body);
    }

    #[tokio::test]
    async fn media_without_a_length_is_cut_off_at_the_limit() {
        let url = serve_once(
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".into(),
            vec![7u8; 4096],
        )
        .await;
        match fetch(&local(), &url, 1024).await {
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
        match fetch(&local(), &url, 1024).await {
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
