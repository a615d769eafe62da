//! The session registry: every session's network client and live state, and
//! the lifecycle operations (create, connect, pair, pause, logout, delete).
//! Durable facts (the account, pause, the wish to be connected) are in the
//! store; the connection status is live and starts `disconnected`.

pub mod dedup;
mod directory;
mod error;
mod intake;
pub mod lid;
mod lifecycle;
pub mod message_event;
pub mod next_attempt;
mod operations;
mod profile;
mod proxy;
mod publish_queue;
pub mod reconnect;
mod timelock;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use error::SessionError;
pub use operations::ContactPage;
pub use proxy::ProxyView;
pub use reconnect::{ReconnectConfig, ReconnectStatus};
pub use timelock::Timelock;

use crate::domain::jid::Jid;
use crate::domain::session::{Account, SessionRecord, SessionStatus, validate_session_id};
use crate::events::EventBus;
use crate::media::Media;
use crate::network::{AttachSpec, EVENT_CHANNEL_CAPACITY, Network, NetworkSession};
use crate::store::Store;
use intake::Intake;

/// Live (not stored) state of a session.
#[derive(Debug, Clone)]
pub struct LiveState {
    /// Connection status.
    pub status: SessionStatus,
    /// The current QR code and its expiry (Unix seconds) while waiting for a scan.
    pub qr: Option<(String, i64)>,
    /// The last network error, cleared on login.
    pub last_error: Option<String>,
    /// The account's reach-out timelock, as last reported (see
    /// [`Sessions::timelock`] for whether it still holds).
    pub timelock: Option<Timelock>,
    /// The automatic reconnect the session waits for (read from its
    /// reconnect watch with the rest of the state).
    pub next_reconnect: Option<next_attempt::NextAttempt>,
}

/// A session that is attached to its network.
pub struct Live {
    /// The session id.
    pub id: String,
    /// Which session of that id (see `SessionRecord::incarnation`): what
    /// its intake writes is written for it, and refused once it is deleted.
    pub incarnation: u64,
    /// Ended when the session is deleted (or the gateway stops): its
    /// intake and its pending reconnect stop with it.
    ended: CancellationToken,
    /// Cancelled once the intake returned.
    intake_done: CancellationToken,
    client: Arc<dyn NetworkSession>,
    state: Mutex<LiveState>,
    watch: reconnect::Watch,
}

impl Live {
    fn update(&self, f: impl FnOnce(&mut LiveState)) {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// A copy of the live state.
    pub fn state(&self) -> LiveState {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner()).clone();
        state.next_reconnect = self.watch.next_attempt();
        state
    }
}

/// A session as the API shows it: the stored record and the live state.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// What is stored.
    pub record: SessionRecord,
    /// What is live.
    pub state: LiveState,
}

/// What a caller asks for when creating a session.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// The id; generated when absent.
    pub id: Option<String>,
    /// A label.
    pub name: Option<String>,
    /// The network backend; the configured default when absent.
    pub network: Option<String>,
    /// Simulated network only: the account's phone number.
    pub phone: Option<String>,
    /// The session's own proxy (or a direct connection); `None` takes the
    /// gateway's default.
    pub proxy: Option<crate::domain::proxy::ProxyChoice>,
}

/// What a session gets when it names nothing else.
#[derive(Debug, Clone)]
pub struct SessionDefaults {
    /// The network backend of a session created without one.
    pub network: String,
    /// The proxy of every session that names none (`SWITCHBOARD_PROXY`).
    pub proxy: Option<crate::domain::proxy::Proxy>,
}

struct Inner {
    store: Store,
    bus: EventBus,
    media: Media,
    networks: HashMap<&'static str, Arc<dyn Network>>,
    default_network: String,
    default_proxy: Option<crate::domain::proxy::Proxy>,
    live: RwLock<HashMap<String, Arc<Live>>>,
    reconnect: ReconnectConfig,
    cancel: CancellationToken,
    tasks: TaskTracker,
}

/// Where what sessions receive goes: records into the store, envelopes
/// onto the bus, media through the media service.
pub struct SessionData {
    /// The store.
    pub store: Store,
    /// The event bus.
    pub bus: EventBus,
    /// The media service.
    pub media: Media,
}

/// The registry; cheap to clone.
#[derive(Clone)]
pub struct Sessions {
    inner: Arc<Inner>,
}

impl Sessions {
    /// A registry over `networks`; call [`Sessions::restore`] to bring back stored sessions.
    pub fn new(
        SessionData { store, bus, media }: SessionData,
        networks: Vec<Arc<dyn Network>>,
        defaults: SessionDefaults,
        reconnect: ReconnectConfig,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) -> Self {
        let networks = networks.into_iter().map(|n| (n.name(), n)).collect();
        Self {
            inner: Arc::new(Inner {
                store,
                bus,
                media,
                networks,
                default_network: defaults.network,
                default_proxy: defaults.proxy,
                live: RwLock::new(HashMap::new()),
                reconnect,
                cancel,
                tasks,
            }),
        }
    }

    /// Names of the networks sessions can use.
    pub fn network_names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.inner.networks.keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// Attaches every stored session and reconnects the ones that were meant to
    /// be connected. Returns how many sessions were restored.
    pub async fn restore(&self) -> Result<usize, SessionError> {
        let records = self.inner.store.list_sessions()?;
        let count = records.len();
        for record in records {
            let reconnect = record.want_connected && !record.paused;
            let id = record.id.clone();
            if let Err(e) = self.attach(&record).await {
                tracing::error!(session = %id, error = %e, "could not restore session");
                continue;
            }
            if reconnect {
                let this = self.clone();
                self.inner.tasks.spawn(async move {
                    if let Err(e) = this.connect_live(&id).await {
                        tracing::warn!(session = %id, error = %e, "reconnect on start failed");
                    }
                });
            }
        }
        Ok(count)
    }

    async fn attach(&self, record: &SessionRecord) -> Result<Arc<Live>, SessionError> {
        let network = self.network(&record.network)?;
        let (tx, rx) = mpsc::channel(EVENT_CHANNEL_CAPACITY);
        let spec = AttachSpec {
            session_id: record.id.clone(),
            account: record.account.clone(),
            phone_hint: record.phone_hint.clone(),
            name: record.name.clone(),
        };
        let client = network.attach(spec, tx).await?;
        let live = Arc::new(Live {
            id: record.id.clone(),
            incarnation: record.incarnation,
            ended: self.inner.cancel.child_token(),
            intake_done: CancellationToken::new(),
            client,
            state: Mutex::new(LiveState {
                status: SessionStatus::Disconnected,
                qr: None,
                last_error: None,
                timelock: None,
                next_reconnect: None,
            }),
            watch: Default::default(),
        });
        let intake = Intake {
            store: self.inner.store.clone(),
            queue: publish_queue::PublishQueue::new(self.inner.bus.clone(), record.incarnation),
            live: live.clone(),
            dedup: Default::default(),
            supervisor: reconnect::Supervisor {
                inner: Arc::downgrade(&self.inner),
            },
            receipt: None,
            media: self.inner.media.clone(),
            client: live.client.clone(),
            prepared: HashMap::new(),
        };
        let (stop, deleted, done) = (
            self.inner.cancel.clone(),
            live.ended.clone(),
            live.intake_done.clone(),
        );
        self.inner.tasks.spawn(async move {
            // Done however the intake ends (a panic too).
            let _done = done.drop_guard();
            intake.run(rx, stop, deleted).await;
        });
        self.live_map().insert(record.id.clone(), live.clone());
        Ok(live)
    }

    fn network(&self, name: &str) -> Result<Arc<dyn Network>, SessionError> {
        self.inner
            .networks
            .get(name)
            .cloned()
            .ok_or_else(|| SessionError::Invalid {
                field: "network",
                message: format!(
                    "names an unknown network `{name}`; available: {}",
                    self.network_names().join(", ")
                ),
            })
    }

    fn live_map(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Arc<Live>>> {
        self.inner.live.write().unwrap_or_else(|p| p.into_inner())
    }

    fn live(&self, id: &str) -> Result<Arc<Live>, SessionError> {
        let map = self.inner.live.read().unwrap_or_else(|p| p.into_inner());
        map.get(id)
            .cloned()
            .ok_or_else(|| SessionError::NotFound(id.to_owned()))
    }

    fn record(&self, id: &str) -> Result<SessionRecord, SessionError> {
        self.inner
            .store
            .get_session(id)?
            .ok_or_else(|| SessionError::NotFound(id.to_owned()))
    }

    fn modify(
        &self,
        id: &str,
        f: impl FnOnce(&mut SessionRecord),
    ) -> Result<SessionRecord, SessionError> {
        self.inner
            .store
            .modify_session(id, f)?
            .ok_or_else(|| SessionError::NotFound(id.to_owned()))
    }

    /// Creates and attaches a session (disconnected, unpaired).
    pub async fn create(&self, new: NewSession) -> Result<SessionInfo, SessionError> {
        let id = new.id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        validate_session_id(&id).map_err(|m| SessionError::Invalid {
            field: "id",
            message: m.into(),
        })?;
        let network = new
            .network
            .unwrap_or_else(|| self.inner.default_network.clone());
        self.network(&network)?;
        let phone = match new.phone {
            None => None,
            Some(_) if network != "sim" => {
                return Err(SessionError::Invalid {
                    field: "phone",
                    message: "is only for sessions on the sim network; a real account's number is known once it is paired".into(),
                });
            }
            Some(p) => Some(
                Jid::user(&p)
                    .map_err(|e| SessionError::Invalid {
                        field: "phone",
                        message: format!("is not a phone number: {e}"),
                    })?
                    .user_part()
                    .to_owned(),
            ),
        };
        if let Some(p) = &phone {
            let records = self.inner.store.list_sessions()?;
            let used = |r: &SessionRecord| {
                r.phone_hint.as_deref() == Some(p)
                    || r.account.as_ref().is_some_and(|a| &a.phone == p)
            };
            if records.iter().any(used) {
                return Err(SessionError::PhoneTaken(p.clone()));
            }
        }
        let mut record = SessionRecord::new(id.clone(), new.name, network, phone);
        record.proxy = new.proxy.as_ref().map(|c| self.inner.store.seal_proxy(c));
        let Some(record) = self.inner.store.create_session(record)? else {
            return Err(SessionError::AlreadyExists(id));
        };
        match self.attach(&record).await {
            Ok(live) => {
                tracing::info!(session = %id, network = %record.network, "session created");
                Ok(SessionInfo {
                    record,
                    state: live.state(),
                })
            }
            Err(e) => {
                self.inner.store.delete_session(&id)?;
                Err(e)
            }
        }
    }

    /// One session.
    pub fn get(&self, id: &str) -> Result<SessionInfo, SessionError> {
        let live = self.live(id)?;
        Ok(SessionInfo {
            record: self.record(id)?,
            state: live.state(),
        })
    }

    /// Every session, ordered by id.
    pub fn list(&self) -> Result<Vec<SessionInfo>, SessionError> {
        let records = self.inner.store.list_sessions()?;
        let map = self.inner.live.read().unwrap_or_else(|p| p.into_inner());
        Ok(records
            .into_iter()
            .filter_map(|record| {
                let state = map.get(&record.id)?.state();
                Some(SessionInfo { record, state })
            })
            .collect())
    }

    /// Deletes a session and everything stored for it. Its intake and
    /// pending reconnect are stopped first, and the intake awaited, so it
    /// writes nothing after the cascade (what it had in flight is refused
    /// by the store anyway: it is written for this incarnation). A
    /// logged-in session logs out first, so its device leaves the phone's
    /// linked devices instead of staying there with no gateway behind it.
    pub async fn delete(&self, id: &str) -> Result<(), SessionError> {
        let live = self
            .live_map()
            .remove(id)
            .ok_or_else(|| SessionError::NotFound(id.to_owned()))?;
        let logged_in = live.state().status == SessionStatus::LoggedIn;
        live.ended.cancel();
        live.watch.cancel_pending();
        live.intake_done.cancelled().await;
        let left = if logged_in {
            live.client.logout().await
        } else {
            live.client.disconnect().await
        };
        if let Err(e) = left {
            tracing::warn!(session = %id, error = %e, logged_in, "leaving the network before the delete failed");
        }
        let record = self.inner.store.get_session(id)?;
        if let Some(network) =
            record.and_then(|r| self.inner.networks.get(r.network.as_str()).cloned())
        {
            network.forget(id).await;
        }
        self.inner.store.delete_session(id)?;
        self.inner.media.delete_session(id).await;
        tracing::info!(session = %id, "session deleted");
        Ok(())
    }

    /// The client and account of a session that can send now.
    pub fn sender(
        &self,
        id: &str,
    ) -> Result<(Arc<dyn NetworkSession>, Option<Account>), SessionError> {
        let live = self.live(id)?;
        let record = self.record(id)?;
        if record.paused {
            return Err(SessionError::Paused(id.to_owned()));
        }
        let status = live.state().status;
        if status != SessionStatus::LoggedIn {
            return Err(SessionError::WrongState(format!(
                "session `{id}` is {}; it can send once it is logged_in",
                status.as_str()
            )));
        }
        Ok((live.client.clone(), record.account))
    }

    /// The network client of a session, whatever its state.
    pub fn client(&self, id: &str) -> Result<Arc<dyn NetworkSession>, SessionError> {
        Ok(self.live(id)?.client.clone())
    }

    /// Whether a session exists.
    pub fn exists(&self, id: &str) -> bool {
        self.live(id).is_ok()
    }

    /// Closes every connection (the stored wish to be connected is kept, so
    /// the next start reconnects them).
    pub async fn shutdown(&self) {
        let lives: Vec<Arc<Live>> = self.live_map().drain().map(|(_, l)| l).collect();
        for live in lives {
            let _ = live.client.disconnect().await;
        }
    }
}
