//! The simulated network: a small, deterministic world that behaves like the
//! real one from the gateway's side. Sessions pair by QR or pair code, sends
//! between sessions of this instance arrive as inbound messages, messages to a
//! disconnected session wait and arrive `offline` on reconnect, and faults
//! (failures, latency) can be injected. Groups keep real state (members, roles,
//! settings, invite codes). Outside users, the outbox and groups live in the
//! store; faults and the offline queue are the network's memory and reset on restart.

mod account;
mod chats;
mod client;
mod contacts;
mod convert;
mod forward;
mod groups;
mod ids;
mod inbound;
mod media;
mod profile;
mod world;

pub use inbound::SimInbound;
pub use media::{DecodedMedia, SimMediaIn};

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::domain::event::EventName;
use crate::domain::session::Account;
use crate::media_store::MediaStore;
use crate::store::{OutboxEntry, SimUser, Store};

pub use ids::derived_phone;
pub use world::Faults;
pub use world::account_memory::{AppStateFault, ReceivedReport, StarredMessage};
pub use world::groups::{JoinStatus, Joiner};

use super::{AttachSpec, EventSink, InboundMessage, Network, NetworkError, NetworkSession};
use client::SimClient;
use world::World;

/// Knobs of the simulated network.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Seed of every random choice (ids, codes, derived phones, fault rolls).
    pub seed: u64,
    /// Complete pairing by itself `pair_delay` after connect; otherwise only
    /// `POST /api/v1/sim/sessions/{id}/scan` completes it.
    pub auto_pair: bool,
    /// Delay before automatic pairing.
    pub pair_delay: Duration,
    /// How often a new QR code replaces the previous one.
    pub qr_interval: Duration,
    /// How long a trust contact token lives before it can be pruned.
    pub tctoken_lifetime: Duration,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            auto_pair: true,
            pair_delay: Duration::from_secs(3),
            qr_interval: Duration::from_secs(20),
            tctoken_lifetime: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

/// The simulated network backend, and the control surface tests and demos drive.
#[derive(Clone)]
pub struct SimNetwork {
    world: Arc<World>,
}

impl SimNetwork {
    /// A simulated network whose durable state lives in `store`. Timers stop
    /// when `cancel` fires; they are spawned on `tasks`.
    pub fn new(
        store: Store,
        media: MediaStore,
        config: SimConfig,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) -> Self {
        Self {
            world: Arc::new(World::new(store, media, config, cancel, tasks)),
        }
    }

    /// Registers (or replaces) an outside user.
    pub fn register_user(&self, user: SimUser) -> Result<SimUser, NetworkError> {
        self.world.register_user(user)
    }

    /// Completes pairing of a session that shows a QR code or a pair code, as if
    /// a phone scanned it.
    pub async fn scan(&self, session_id: &str) -> Result<Account, NetworkError> {
        World::complete_pairing(&self.world, session_id).await
    }

    /// Delivers an inbound message to a session: at once when it is online,
    /// otherwise on its next connect with `offline: true`.
    pub async fn inject_inbound(
        &self,
        session_id: &str,
        message: InboundMessage,
    ) -> Result<String, NetworkError> {
        self.world.deliver(session_id, message).await
    }

    /// Delivers a network-side event (already in its API `data` shape) to a
    /// session that is online; `NotConnected` otherwise. `disconnected` also
    /// drops the session's link.
    pub async fn inject_event(
        &self,
        session_id: &str,
        event: EventName,
        data: serde_json::Value,
    ) -> Result<(), NetworkError> {
        self.world.inject_event(session_id, event, data).await
    }

    /// Puts an injected message's media on the sim's media servers and
    /// attaches its description to the message.
    pub async fn stage_media(
        &self,
        message: &mut InboundMessage,
        media: DecodedMedia,
    ) -> Result<(), NetworkError> {
        message.media = Some(self.world.media.put_injected(media).await?);
        Ok(())
    }

    /// A fresh message id from the seeded generator.
    pub fn next_message_id(&self) -> String {
        self.world.next_message_id()
    }

    /// Sets the send faults of a session.
    pub fn set_faults(&self, session_id: &str, faults: Faults) -> Result<(), NetworkError> {
        self.world.set_faults(session_id, faults)
    }

    /// What the network received from a session, oldest first.
    pub fn outbox(&self, session_id: &str) -> Result<Vec<OutboxEntry>, NetworkError> {
        self.world.outbox(session_id)
    }

    /// A registered outside user by phone digits.
    pub fn user(&self, phone: &str) -> Result<Option<SimUser>, NetworkError> {
        self.world.user(phone)
    }

    /// The registered outside user whose alternate identifier is `lid`
    /// (`<id>@lid`). Knowing the user does not reveal its phone to sessions.
    pub fn user_by_lid(&self, lid: &str) -> Result<Option<SimUser>, NetworkError> {
        self.world.user_by_lid(lid)
    }
}

#[async_trait]
impl Network for SimNetwork {
    fn name(&self) -> &'static str {
        "sim"
    }

    async fn attach(
        &self,
        spec: AttachSpec,
        events: EventSink,
    ) -> Result<Arc<dyn NetworkSession>, NetworkError> {
        let id = spec.session_id.clone();
        self.world.attach(spec, events)?;
        Ok(Arc::new(SimClient::new(id, self.world.clone())))
    }

    async fn forget(&self, session_id: &str) {
        self.world.forget(session_id);
    }
}
