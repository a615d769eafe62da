//! Media downloads a network serves for a session: the bytes of an inbound
//! media, decrypted, given the handle the backend put into the message's
//! [`NetworkMedia`](crate::domain::media::NetworkMedia).

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::BoxStream;

use super::NetworkError;
use crate::domain::media::MediaKind;

/// The bytes of a download, read as they arrive.
pub type MediaBytes = BoxStream<'static, Result<Bytes, std::io::Error>>;

/// Downloading inbound media.
#[async_trait]
pub trait MediaOps {
    /// Downloads (and decrypts) the media `handle` names. `Rejected` when
    /// the network no longer has it (an expired link): retrying will not
    /// help; `Failed` when a later attempt can succeed.
    async fn download_media(
        &self,
        kind: MediaKind,
        handle: &serde_json::Value,
    ) -> Result<MediaBytes, NetworkError>;
}
