//! The real network: a [`Network`](super::Network) backend named `whatsapp`
//! on the `whatsapp-rust` crate (unofficial WhatsApp Web multi-device
//! protocol), behind the `whatsapp` cargo feature.
//!
//! - [`WhatsAppNetwork`] attaches sessions; each gets a [`session::WaSession`]
//!   whose every `connect` builds a fresh crate client on the session's device
//!   state in redb ([`crate::store::whatsapp::WaStore`]): a crate client is
//!   single-use once disconnected.
//! - The crate's own reconnect loop is switched off: a failed connect is an
//!   error of `connect` (so the session shows it as `last_error`), a drop is a
//!   `Disconnected` event, and the gateway's reconnect policy
//!   (`sessions/reconnect.rs`, per session `auto_reconnect`) decides about
//!   retries. The one reconnect the backend does itself is the restart the
//!   server asks for right after pairing.
//! - Each session has one ordered lane (`lane.rs`) that never makes the
//!   crate wait: the crate's events, the batches the durability hook
//!   committed (`inbound.rs`) and the backend's own news go through it in
//!   order. One pump per session (`pump.rs`) empties it, turning the crate's
//!   events into [`NetworkEvent`](super::NetworkEvent)s through the pure
//!   mappings in [`map`], and counts the events that give none in
//!   [`WhatsAppCounters`] (which the backend owns and every session shares).
//! - Media: inbound media messages carry a download handle (`map/media.rs`)
//!   that `ops/media.rs` later downloads and decrypts, through an unlinked
//!   temporary file, for the runtime to put in the media store; sends read
//!   uploads named by `media_id` from that store (`send.rs`). The backend
//!   holds the [`MediaStore`](crate::media_store::MediaStore) and hands it to
//!   every session.
//! - A session with a proxy (its own, or the gateway's default) connects
//!   through it: the chat socket by `proxy_transport.rs`, media transfers by
//!   the HTTP client's proxy (`http.rs`); a proxy that cannot be reached
//!   fails the connect, never falling back to a direct connection.
//!
//! The knobs ([`WhatsAppConfig`]) and the counters exist in every build.

mod config;
mod counters;

pub use config::{WhatsAppConfig, parse_version};
pub use counters::WhatsAppCounters;

#[cfg(feature = "whatsapp")]
mod actions;
#[cfg(feature = "whatsapp")]
mod build;
#[cfg(all(test, feature = "whatsapp"))]
mod cdn;
#[cfg(feature = "whatsapp")]
mod chat_timers;
#[cfg(feature = "whatsapp")]
mod history;
#[cfg(feature = "whatsapp")]
mod http;
#[cfg(feature = "whatsapp")]
pub mod inbound;
#[cfg(feature = "whatsapp")]
mod lane;
#[cfg(feature = "whatsapp")]
pub mod map;
#[cfg(feature = "whatsapp")]
mod media_facts;
#[cfg(feature = "whatsapp")]
mod off_thread;
#[cfg(feature = "whatsapp")]
mod ops;
#[cfg(feature = "whatsapp")]
mod proxy_transport;
#[cfg(feature = "whatsapp")]
mod pump;
#[cfg(feature = "whatsapp")]
mod send;
#[cfg(feature = "whatsapp")]
mod send_error;
#[cfg(feature = "whatsapp")]
pub(crate) mod send_interactive;
#[cfg(feature = "whatsapp")]
mod send_media;
#[cfg(feature = "whatsapp")]
pub mod session;
#[cfg(all(test, feature = "whatsapp"))]
mod tests_pump;
#[cfg(feature = "whatsapp")]
mod timelock;

#[cfg(feature = "whatsapp")]
pub use network::WhatsAppNetwork;

/// A local media store under `dir`, for the backend's tests.
#[cfg(all(test, feature = "whatsapp"))]
pub(crate) fn test_media_store(dir: &std::path::Path) -> crate::media_store::MediaStore {
    crate::media_store::MediaStore::open(&crate::media_store::MediaStoreConfig::Local {
        dir: dir.join("media"),
    })
    .expect("a local media store")
}

#[cfg(feature = "whatsapp")]
mod network {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;

    use super::session::WaSession;
    use super::{WhatsAppConfig, WhatsAppCounters};
    use crate::media_store::MediaStore;
    use crate::store::Store;
    use crate::{AttachSpec, EventSink, Network, NetworkError, NetworkSession};

    /// The `whatsapp` backend: one [`WaSession`] per attached session.
    pub struct WhatsAppNetwork {
        store: Store,
        media: MediaStore,
        config: WhatsAppConfig,
        counters: WhatsAppCounters,
        sessions: Mutex<HashMap<String, Arc<WaSession>>>,
    }

    impl WhatsAppNetwork {
        /// A backend keeping device state in `store`, and reading the
        /// uploads sends name from `media`.
        pub fn new(store: Store, media: MediaStore, config: WhatsAppConfig) -> Self {
            Self {
                store,
                media,
                config,
                counters: WhatsAppCounters::default(),
                sessions: Mutex::new(HashMap::new()),
            }
        }

        /// The counters every session of this backend bumps, to register
        /// with the metrics registry.
        pub fn counters(&self) -> &WhatsAppCounters {
            &self.counters
        }

        /// The durability hook of an attached session's clients, `None` for
        /// a session this backend does not hold.
        pub fn inbound_hook(&self, session_id: &str) -> Option<super::inbound::InboundHook> {
            self.sessions
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(session_id)
                .map(|s| s.inbound_hook())
        }
    }

    #[async_trait]
    impl Network for WhatsAppNetwork {
        fn name(&self) -> &'static str {
            "whatsapp"
        }

        async fn attach(
            &self,
            spec: AttachSpec,
            events: EventSink,
        ) -> Result<Arc<dyn NetworkSession>, NetworkError> {
            let session = Arc::new(WaSession::new(
                spec.session_id.clone(),
                self.store.clone(),
                self.media.clone(),
                self.config.clone(),
                self.counters.clone(),
                events,
            ));
            let old = self
                .sessions
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(spec.session_id, session.clone());
            if let Some(old) = old {
                old.stop().await;
            }
            Ok(session)
        }

        async fn forget(&self, session_id: &str) {
            let gone = self
                .sessions
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(session_id);
            if let Some(session) = gone {
                session.stop().await;
            }
        }
    }
}
