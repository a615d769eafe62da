//! The per-session client of the simulated network.

use std::sync::Arc;

use async_trait::async_trait;

use super::world::World;
use crate::domain::jid::Jid;
use crate::domain::media::MediaKind;
use crate::domain::send::OutboundContent;
use crate::media::{MediaBytes, MediaOps};
use crate::{NetworkError, NetworkSession, SendReceipt};

/// A session's handle on the simulated world.
pub struct SimClient {
    pub(super) id: String,
    pub(super) world: Arc<World>,
}

impl SimClient {
    /// The client of session `id`.
    pub fn new(id: String, world: Arc<World>) -> Self {
        Self { id, world }
    }
}

#[async_trait]
impl NetworkSession for SimClient {
    async fn connect(&self) -> Result<(), NetworkError> {
        World::connect(&self.world, &self.id).await
    }

    async fn disconnect(&self) -> Result<(), NetworkError> {
        self.world.disconnect(&self.id).await
    }

    async fn logout(&self) -> Result<(), NetworkError> {
        self.world.logout(&self.id).await
    }

    async fn request_pair_code(&self, phone: &str) -> Result<String, NetworkError> {
        self.world.request_pair_code(&self.id, phone).await
    }

    async fn send(
        &self,
        message_id: &str,
        to: &Jid,
        content: &OutboundContent,
    ) -> Result<SendReceipt, NetworkError> {
        self.world.send(&self.id, message_id, to, content).await
    }

    async fn has_sent(&self, message_id: &str) -> Result<Option<bool>, NetworkError> {
        self.world.has_sent(&self.id, message_id).map(Some)
    }
}

#[async_trait]
impl MediaOps for SimClient {
    async fn download_media(
        &self,
        _kind: MediaKind,
        handle: &serde_json::Value,
    ) -> Result<MediaBytes, NetworkError> {
        self.world.require_online(&self.id)?;
        self.world.media.download(handle).await
    }
}
