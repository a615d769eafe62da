//! The own-profile operations of a sim session's client ([`ProfileOps`]):
//! its push name, about text and picture, kept by the world
//! (`world/profile.rs`).

use async_trait::async_trait;

use super::client::SimClient;
use crate::NetworkError;
use crate::profile::{OwnProfile, ProfileOps};

#[async_trait]
impl ProfileOps for SimClient {
    async fn own_profile(&self) -> Result<OwnProfile, NetworkError> {
        self.world.own_profile(&self.id)
    }

    async fn set_push_name(&self, name: &str) -> Result<(), NetworkError> {
        self.world.set_push_name(&self.id, name).await
    }

    async fn set_about(&self, about: &str) -> Result<(), NetworkError> {
        self.world.set_about(&self.id, about).await
    }

    async fn set_picture(&self, image: Vec<u8>) -> Result<Option<String>, NetworkError> {
        // The real network takes pictures a client made a JPEG; the sim
        // takes what a real client could send, so what it cannot read is
        // refused as there.
        if image.len() < 4 || !looks_like_image(&image) {
            return Err(NetworkError::Rejected(
                "the picture is not an image this gateway can read (JPEG, PNG, WebP)".into(),
            ));
        }
        self.world.set_picture(&self.id, Some(&image)).await
    }

    async fn remove_picture(&self) -> Result<(), NetworkError> {
        self.world.set_picture(&self.id, None).await.map(|_| ())
    }
}

/// Whether `bytes` start as a JPEG, a PNG or a WebP file does.
fn looks_like_image(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0xFF, 0xD8, 0xFF])
        || bytes.starts_with(b"\x89PNG\r\n\x1a\n")
        || (bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP")
}
