//! Media downloads of a whatsapp session: the crate fetches the encrypted
//! bytes from WhatsApp's CDN and decrypts them, as they arrive, into an
//! unlinked temporary file (constant memory whatever the size); the answer
//! is a stream over that file, which the runtime copies into its media
//! store. The file has no name, so it disappears when the stream is
//! dropped, read to the end or not.

use async_trait::async_trait;
use serde_json::Value;
use whatsapp_rust::ErrorChainExt as _;

use crate::NetworkError;
use crate::domain::media::MediaKind;
use crate::media::{MediaBytes, MediaOps};
use crate::whatsapp::map::media::download_params;
use crate::whatsapp::session::WaSession;

/// How much of the temporary file one chunk of the answer holds.
const CHUNK: usize = 64 * 1024;

#[async_trait]
impl MediaOps for WaSession {
    async fn download_media(
        &self,
        kind: MediaKind,
        handle: &Value,
    ) -> Result<MediaBytes, NetworkError> {
        // A handle that cannot be downloaded is refused before the
        // connection is asked for: it would not be downloadable later either.
        let params = download_params(kind, handle)?;
        let client = self.logged_in().await?;
        let file = client
            .download_from_params_to_writer(&params, temp_file().await?)
            .await
            .map_err(|e| {
                let cause: &(dyn std::error::Error + Send + Sync + 'static) = e.as_ref();
                download_error(cause.http_status(), &format!("{e:#}"))
            })?;
        Ok(file_stream(file))
    }
}

/// An anonymous temporary file to decrypt into: unlinked from the start, so
/// nothing is left behind whatever happens to the download or its reader.
async fn temp_file() -> Result<std::fs::File, NetworkError> {
    let no_file = |e: &dyn std::fmt::Display| {
        NetworkError::Failed(format!("no temporary file for the download: {e}"))
    };
    tokio::task::spawn_blocking(tempfile::tempfile)
        .await
        .map_err(|e| no_file(&e))?
        .map_err(|e| no_file(&e))
}

/// The bytes of a finished download, read from its file (which the crate
/// rewound to its start after verifying it). The stream owns the file, so
/// the bytes stay readable for as long as the stream lives.
fn file_stream(file: std::fs::File) -> MediaBytes {
    let reader = tokio::fs::File::from_std(file);
    Box::pin(tokio_util::io::ReaderStream::with_capacity(reader, CHUNK))
}

/// A CDN answer that says the media is gone or refused (expired, deleted;
/// given after the crate's own retry with fresh media credentials) will
/// not change on a retry: `Rejected`. Anything else (no answer, a server
/// error, a broken transfer, bytes that do not verify) might: `Failed`.
pub(crate) fn download_error(status: Option<u16>, message: &str) -> NetworkError {
    let gone = matches!(status, Some(401 | 403 | 404 | 410));
    let text = format!("the media download failed: {message}");
    if gone {
        NetworkError::Rejected(text)
    } else {
        NetworkError::Failed(text)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use anyhow::Result;
    use async_trait::async_trait;
    use futures_util::TryStreamExt as _;
    use whatsapp_rust::TokioRuntime;
    use whatsapp_rust::download::{MediaDownloader, MediaHost, MediaRoute, MediaType};
    use whatsapp_rust::http::{HttpClient, HttpRequest, HttpResponse};
    use whatsapp_rust::wacore::net::StreamingHttpResponse;

    use super::*;
    use crate::whatsapp::http::ReqwestHttp;
    use crate::whatsapp::map::media::{Fields, network_media};

    /// The gateway's HTTP client, asking over plain HTTP what the crate asks
    /// over HTTPS: a test CDN without a certificate.
    struct PlainHttp(ReqwestHttp);

    fn plain(mut request: HttpRequest) -> HttpRequest {
        request.url = request.url.replacen("https://", "http://", 1);
        request
    }

    #[async_trait]
    impl HttpClient for PlainHttp {
        async fn execute(&self, request: HttpRequest) -> Result<HttpResponse> {
            self.0.execute(plain(request)).await
        }

        fn supports_streaming(&self) -> bool {
            self.0.supports_streaming()
        }

        fn execute_streaming(&self, request: HttpRequest) -> Result<StreamingHttpResponse> {
            self.0.execute_streaming(plain(request))
        }
    }

    /// A CDN that answers every request with `status` and `body`; its host.
    async fn cdn(status: &'static str, body: Vec<u8>) -> String {
        let head = crate::whatsapp::cdn::head(status, &body);
        crate::whatsapp::cdn::serve(head, body, std::time::Duration::ZERO)
            .await
            .to_string()
    }

    /// The handle the inbound mapping keeps for media encrypted as `enc`.
    fn handle_of(enc: &whatsapp_rust::wacore::upload::EncryptedMedia, len: u64) -> Value {
        let (key, sha, enc_sha) = (
            Some(enc.media_key.to_vec()),
            Some(enc.file_sha256.to_vec()),
            Some(enc.file_enc_sha256.to_vec()),
        );
        let path = Some("/v/t62.7118-24/media.enc".to_owned());
        let fields = Fields {
            mimetype: &None,
            file_sha256: &sha,
            file_enc_sha256: &enc_sha,
            media_key: &key,
            direct_path: &path,
            file_length: Some(len),
            width: None,
            height: None,
            seconds: None,
            ptt: None,
            filename: None,
            view_once: false,
        };
        network_media(MediaKind::Image, &fields).handle
    }

    fn downloader(host: String) -> MediaDownloader {
        let http = ReqwestHttp::local(Duration::from_secs(5)).unwrap();
        MediaDownloader::new(
            Arc::new(PlainHttp(http)),
            Arc::new(TokioRuntime),
            MediaRoute::unauthenticated(vec![MediaHost::new(host)]),
        )
    }

    #[tokio::test]
    async fn an_unconnected_session_refuses_a_bad_handle_for_good_and_a_good_one_for_now() {
        let dir = tempfile::tempdir().unwrap();
        let (sink, _events) = tokio::sync::mpsc::channel(16);
        let s = WaSession::new(
            "wa".into(),
            crate::store::Store::open(dir.path()).unwrap(),
            crate::whatsapp::test_media_store(dir.path()),
            crate::whatsapp::WhatsAppConfig::default(),
            Default::default(),
            sink,
        );
        let enc = whatsapp_rust::wacore::upload::encrypt_media(b"x", MediaType::Image).unwrap();
        match s
            .download_media(MediaKind::Image, &handle_of(&enc, 1))
            .await
        {
            Err(NetworkError::NotConnected) => {}
            Err(e) => panic!("{e:?}"),
            Ok(_) => panic!("downloaded without a connection"),
        }
        match s
            .download_media(MediaKind::Image, &serde_json::json!({}))
            .await
        {
            Err(NetworkError::Rejected(_)) => {}
            Err(e) => panic!("{e:?}"),
            Ok(_) => panic!("downloaded without a handle"),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stored_handle_downloads_and_decrypts_through_a_file_into_the_plain_bytes() {
        let plain_bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
        let enc =
            whatsapp_rust::wacore::upload::encrypt_media(&plain_bytes, MediaType::Image).unwrap();
        let handle = handle_of(&enc, plain_bytes.len() as u64);
        let host = cdn("200 OK", enc.data_to_upload.clone()).await;

        let params = download_params(MediaKind::Image, &handle).unwrap();
        let file = downloader(host)
            .download_to_writer(&params, temp_file().await.unwrap())
            .await
            .unwrap();
        let chunks: Vec<bytes::Bytes> = file_stream(file).try_collect().await.unwrap();
        assert_eq!(chunks.concat(), plain_bytes);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn media_the_cdn_no_longer_has_is_rejected_and_a_server_error_may_be_retried() {
        let enc = whatsapp_rust::wacore::upload::encrypt_media(b"gone", MediaType::Image).unwrap();
        let params = download_params(MediaKind::Image, &handle_of(&enc, 4)).unwrap();
        for (status, rejected) in [("410 Gone", true), ("503 Service Unavailable", false)] {
            let host = cdn(status, Vec::new()).await;
            let e = downloader(host)
                .download_to_writer(&params, temp_file().await.unwrap())
                .await
                .expect_err("the download fails");
            let mapped = download_error(e.http_status(), &e.to_string());
            assert_eq!(
                matches!(mapped, NetworkError::Rejected(_)),
                rejected,
                "{status}: {mapped:?}"
            );
        }
    }
}
