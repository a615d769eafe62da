//! [`WaSession`]: the `NetworkSession` of one whatsapp session — connect,
//! disconnect, logout, pair codes and sends on the current crate client.
//! Group, contact, account and media-download operations are in `ops/`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use whatsapp_rust::Client;
use whatsapp_rust::pair_code::PairCodeOptions;

use super::WhatsAppConfig;
use super::lane::Lane;
use super::off_thread::with_store;
use crate::domain::jid::Jid;
use crate::domain::send::OutboundContent;
use crate::media_store::MediaStore;
use crate::store::Store;
use crate::{EventSink, NetworkError, NetworkEvent, NetworkSession, SendReceipt};

/// How long `connect` waits for the socket (the crate gives transport and
/// version check 20 s each, in parallel, then the handshake).
const SOCKET_WAIT: Duration = Duration::from_secs(30);

/// How long a logout of a disconnected session waits for the login that
/// lets it unlink the device.
const LOGIN_WAIT: Duration = Duration::from_secs(20);

/// How long a disconnect waits for the client to wind down.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// The client of one whatsapp session.
pub struct WaSession {
    pub(super) inner: Arc<Inner>,
}

/// What the session's runs share.
pub(super) struct Inner {
    pub id: String,
    pub store: Store,
    /// Where uploads a send names by `media_id` are read from.
    pub media: MediaStore,
    pub config: WhatsAppConfig,
    pub sink: EventSink,
    /// The backend's counters (events no mapping forwards).
    pub counters: super::WhatsAppCounters,
    /// The session's one ordered path to `sink` (the pump empties it).
    pub lane: Lane,
    /// The current (or last) run of a crate client. Held only to look at or
    /// swap, never across an await: a reader of the client never waits for
    /// a connect.
    pub run: std::sync::Mutex<Option<Arc<Run>>>,
    /// Serialises what starts or ends runs (connect, disconnect, logout,
    /// stop), so a disconnect cannot miss a run a connect is building.
    pub connecting: tokio::sync::Mutex<()>,
    /// Asks the restarter task for a fresh run (the login after pairing).
    pub restart: tokio::sync::mpsc::UnboundedSender<()>,
    /// The app-state collections a resync is fetching now.
    pub resyncing: std::sync::Mutex<std::collections::HashSet<crate::account::Collection>>,
}

/// One crate client from build to shutdown.
pub(super) struct Run {
    pub client: Arc<Client>,
    pub state: Arc<RunState>,
    /// The app-state version writes of this run's backend (how a resync
    /// learns whether the crate's sync went through).
    pub versions: Arc<crate::store::whatsapp::VersionWrites>,
}

/// What the run's tasks tell each other.
#[derive(Default)]
pub(super) struct RunState {
    /// The gateway asked this run to stop (disconnect, logout, forget).
    pub stopping: AtomicBool,
    /// The socket came up (so an end of the run is a drop).
    pub socket_up: AtomicBool,
    /// The phone linked the device during this run.
    pub paired: AtomicBool,
    /// A disconnect, logout or lock was already reported for this run.
    pub reported: AtomicBool,
    /// The account was unlinked during this run: its device state goes when
    /// the run has ended.
    pub logged_out: AtomicBool,
    /// Cancelled when the crate's run loop has returned.
    pub ended: CancellationToken,
    /// The last transport or HTTP failure, for the error a failed connect gives.
    pub last_error: std::sync::Mutex<Option<String>>,
    /// The trust-token timing derived from this connection's props, once
    /// read (a failed read is not kept: the next one asks again).
    pub token_config: std::sync::OnceLock<whatsapp_rust::wacore::iq::tctoken::TcTokenConfig>,
    /// The phone number of the pair-code flow this run started: when the
    /// server invalidates the code, a new one is asked for it.
    pub pair_phone: std::sync::Mutex<Option<String>>,
}

impl RunState {
    /// Why the connection could not be made.
    pub fn failure(&self) -> String {
        let last = self
            .last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match last {
            Some(e) => format!("could not connect to WhatsApp: {e}"),
            None => "could not connect to WhatsApp: the connection closed before the handshake completed".into(),
        }
    }

    /// Records a failure (the wrappers in `build.rs` call this).
    pub fn fail(&self, e: String) {
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    }
}

impl WaSession {
    /// A session that is not connected yet.
    pub fn new(
        id: String,
        store: Store,
        media: MediaStore,
        config: WhatsAppConfig,
        counters: super::WhatsAppCounters,
        sink: EventSink,
    ) -> Self {
        let (restart, mut requests) = tokio::sync::mpsc::unbounded_channel();
        let (lane, lane_rx) = Lane::new(counters.queued());
        let inner = Arc::new(Inner {
            id,
            store,
            media,
            config,
            sink,
            counters,
            lane,
            run: std::sync::Mutex::new(None),
            connecting: tokio::sync::Mutex::new(()),
            restart,
            resyncing: Default::default(),
        });
        // Ends with the session too (it holds the session weakly).
        tokio::spawn(super::pump::run(Arc::downgrade(&inner), lane_rx));
        // Ends when the session is dropped (its sender goes with it).
        let weak = Arc::downgrade(&inner);
        tokio::spawn(async move {
            while requests.recv().await.is_some() {
                let Some(inner) = weak.upgrade() else { return };
                // A failure is reported by `connect` itself.
                let _ = inner.connect().await;
            }
        });
        Self { inner }
    }

    /// Stops the current run without reporting anything (the session is being
    /// forgotten or replaced).
    pub async fn stop(&self) {
        let run = self.inner.take_run().await;
        if let Some(run) = run {
            stop_run(&run).await;
        }
    }

    /// The live client, or `NotConnected`.
    pub(super) async fn client(&self) -> Result<Arc<Client>, NetworkError> {
        match self.inner.current() {
            Some(r) if !r.state.ended.is_cancelled() && r.client.is_connected() => {
                Ok(r.client.clone())
            }
            _ => Err(NetworkError::NotConnected),
        }
    }

    /// Whether the gateway holds a paired account for this session.
    async fn paired(&self) -> bool {
        with_store(&self.inner.store, &self.inner.id, |s, id| s.get_session(id))
            .await
            .ok()
            .flatten()
            .is_some_and(|r| r.account.is_some())
    }

    /// Connects and waits for the login, so a logout can unlink the device.
    async fn connect_to_unlink(&self) -> Result<(), NetworkError> {
        self.inner.connect().await?;
        let client = self.client().await?;
        client.wait_for_connected(LOGIN_WAIT).await.map_err(|e| {
            NetworkError::Failed(format!(
                "not logged in within {} s: {e}",
                LOGIN_WAIT.as_secs()
            ))
        })
    }

    /// The durability hook of this session's clients (the crate calls it;
    /// exposed so the order it keeps can be shown without a server).
    pub fn inbound_hook(&self) -> super::inbound::InboundHook {
        super::inbound::InboundHook::new(&self.inner)
    }

    /// The live, logged-in client, or `NotConnected`.
    pub(super) async fn logged_in(&self) -> Result<Arc<Client>, NetworkError> {
        let client = self.client().await?;
        if client.is_logged_in() {
            Ok(client)
        } else {
            Err(NetworkError::NotConnected)
        }
    }
}

/// Asks the server to remove this device from the account's linked
/// devices (WhatsApp Web's logout), bounded by [`STOP_WAIT`].
async fn unlink(client: &Client) -> Result<(), NetworkError> {
    let Some(pn) = client.pn() else {
        return Err(NetworkError::InvalidState(
            "the device has no account to be unlinked from".into(),
        ));
    };
    let spec = whatsapp_rust::wacore::iq::devices::RemoveCompanionDeviceSpec::new(&pn);
    match tokio::time::timeout(STOP_WAIT, client.execute(spec)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(NetworkError::Failed(format!("the server refused: {e}"))),
        Err(_) => Err(NetworkError::Failed(format!(
            "no answer within {} s",
            STOP_WAIT.as_secs()
        ))),
    }
}

/// Marks a run as stopping, disconnects its client and waits (bounded) for
/// the run loop to return.
async fn stop_run(run: &Run) {
    run.state.stopping.store(true, Ordering::SeqCst);
    run.client.disconnect().await;
    let _ = tokio::time::timeout(STOP_WAIT, run.state.ended.cancelled()).await;
}

impl Inner {
    /// The current (or last) run.
    pub(super) fn current(&self) -> Option<Arc<Run>> {
        self.run.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Takes the current run away, once no connect is building one.
    async fn take_run(&self) -> Option<Arc<Run>> {
        let _serial = self.connecting.lock().await;
        self.run.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Starts a run unless one is live, and waits until its socket is up or
    /// it failed.
    pub(super) async fn connect(self: &Arc<Self>) -> Result<(), NetworkError> {
        let serial = self.connecting.lock().await;
        if self
            .current()
            .is_some_and(|r| !r.state.ended.is_cancelled())
        {
            return Ok(());
        }
        self.lane.news(NetworkEvent::Connecting);
        let run = super::build::start(self).await?;
        let (client, state) = (run.client.clone(), run.state.clone());
        *self.run.lock().unwrap_or_else(|p| p.into_inner()) = Some(run);
        drop(serial);
        let failure = tokio::select! {
            up = client.wait_for_socket(SOCKET_WAIT) => match up {
                Ok(()) => {
                    state.socket_up.store(true, Ordering::SeqCst);
                    return Ok(());
                }
                Err(_) => {
                    state.stopping.store(true, Ordering::SeqCst);
                    client.disconnect().await;
                    format!(
                        "could not connect to WhatsApp: no answer within {} s",
                        SOCKET_WAIT.as_secs()
                    )
                }
            },
            _ = state.ended.cancelled() => state.failure(),
        };
        // The attempt that began with `Connecting` ends here: a linked
        // session's reconnect policy takes it from this event.
        let reason = failure.clone();
        self.lane.news(NetworkEvent::Disconnected { reason });
        Err(NetworkError::Failed(failure))
    }
}

#[async_trait]
impl NetworkSession for WaSession {
    async fn connect(&self) -> Result<(), NetworkError> {
        self.inner.connect().await
    }

    async fn disconnect(&self) -> Result<(), NetworkError> {
        let run = self.inner.take_run().await;
        if let Some(run) = run {
            let was_live = !run.state.ended.is_cancelled();
            stop_run(&run).await;
            if was_live {
                let reason = "disconnected on request".to_owned();
                self.inner.lane.news(NetworkEvent::Disconnected { reason });
            }
        }
        Ok(())
    }

    async fn logout(&self) -> Result<(), NetworkError> {
        // Only a logged-in connection can ask the server to unlink the
        // device; without one it would stay in the phone's "Linked devices".
        let mut unlink_failure = if self.logged_in().await.is_err() && self.paired().await {
            self.connect_to_unlink().await.err()
        } else {
            None
        };
        let run = self.inner.take_run().await;
        if let Some(run) = &run {
            // The crate's own logout only logs a failed unlink; the
            // gateway asks the server itself, so a device left on the phone
            // is reported.
            if unlink_failure.is_none()
                && let Err(e) = unlink(&run.client).await
            {
                unlink_failure = Some(e);
            }
            stop_run(run).await;
        }
        let had_device = with_store(&self.inner.store, &self.inner.id, |s, id| {
            s.wipe_whatsapp_state(id)
        })
        .await
        .map_err(|e| NetworkError::Failed(format!("could not drop the credentials: {e}")))?;
        let reason = match unlink_failure {
            None => "logged out on request".to_owned(),
            Some(e) => format!(
                "logged out on request; the device could not be unlinked on WhatsApp ({e}): remove it in the phone's Linked devices"
            ),
        };
        let event = if had_device {
            NetworkEvent::LoggedOut { reason }
        } else {
            NetworkEvent::Disconnected {
                reason: "disconnected on request".into(),
            }
        };
        if had_device || run.is_some() {
            self.inner.lane.news(event);
        }
        Ok(())
    }

    async fn request_pair_code(&self, phone: &str) -> Result<String, NetworkError> {
        let client = self.client().await.map_err(|_| {
            NetworkError::InvalidState("the session is not connected; connect it first".into())
        })?;
        if client.is_logged_in() || client.pn().is_some() {
            return Err(NetworkError::InvalidState(
                "the session is already paired; log it out to pair another account".into(),
            ));
        }
        if let Some(run) = self.inner.current() {
            *run.state
                .pair_phone
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(phone.to_owned());
        }
        let options = PairCodeOptions {
            phone_number: phone.to_owned(),
            ..PairCodeOptions::default()
        };
        // A failure is also reported as a `pairing_code_error` event by the crate.
        client.pair_with_code(options).await.map_err(|e| {
            let msg = format!("the pair-code request failed: {e}");
            match e.rejection() {
                Some(r) if r.is_throttled() => NetworkError::Failed(msg),
                Some(_) => NetworkError::Rejected(msg),
                None => NetworkError::Failed(msg),
            }
        })
    }

    async fn send(
        &self,
        message_id: &str,
        to: &Jid,
        content: &OutboundContent,
    ) -> Result<SendReceipt, NetworkError> {
        let client = self.logged_in().await?;
        let stores = super::send::Stores {
            store: &self.inner.store,
            media: &self.inner.media,
            media_urls: &self.inner.config.media_urls,
            ack_wait: self.inner.config.send_ack_wait,
        };
        super::send::send(&client, stores, &self.inner.id, message_id, to, content).await
    }

    async fn has_sent(&self, _message_id: &str) -> Result<Option<bool>, NetworkError> {
        // WhatsApp keeps no record of a client's sends that could be asked.
        Ok(None)
    }
}

/// Whether the run was told to stop.
pub(super) fn stopping(state: &RunState) -> bool {
    state.stopping.load(Ordering::SeqCst)
}

/// Flags used by the pump.
pub(super) fn set(flag: &AtomicBool) {
    flag.store(true, Ordering::SeqCst);
}
