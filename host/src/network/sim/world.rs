//! The state of the simulated world: every attached session's link, account,
//! faults and offline queue, and the rules that move them.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Deserialize;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::SimConfig;
use super::convert::{Sender, to_inbound};
use super::ids::{SimRng, derived_phone};
use crate::domain::event::EventName;
use crate::domain::jid::Jid;
use crate::domain::send::OutboundContent;
use crate::domain::session::Account;
use crate::domain::time::unix_now;
use crate::network::{
    AttachSpec, EventSink, InboundMessage, NetworkError, NetworkEvent, SendReceipt,
};
use crate::store::{OutboxEntry, SimUser, Store};

/// Send faults of one session, set through the control API.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Faults {
    /// Sends to these JIDs fail.
    #[serde(default)]
    pub fail_sends_to: HashSet<String>,
    /// Probability in `[0, 1]` that any send fails.
    #[serde(default)]
    pub fail_send_rate: f64,
    /// Added latency of every send, in milliseconds.
    #[serde(default)]
    pub send_latency_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    Offline,
    WaitingQr,
    WaitingPairCode,
    Online,
}

struct Attached {
    events: EventSink,
    link: Link,
    account: Option<Account>,
    phone_hint: Option<String>,
    name: Option<String>,
    pair_phone: Option<String>,
    faults: Faults,
    offline_queue: VecDeque<InboundMessage>,
    pairing: Option<CancellationToken>,
}

/// The whole simulated world.
pub struct World {
    store: Store,
    config: SimConfig,
    rng: Mutex<SimRng>,
    sessions: Mutex<HashMap<String, Attached>>,
    cancel: CancellationToken,
    tasks: TaskTracker,
}

fn internal(e: impl std::fmt::Display) -> NetworkError {
    NetworkError::Failed(format!("simulated network storage failed: {e}"))
}

impl World {
    pub(super) fn new(
        store: Store,
        config: SimConfig,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) -> Self {
        Self {
            rng: Mutex::new(SimRng::new(config.seed)),
            store,
            config,
            sessions: Mutex::new(HashMap::new()),
            cancel,
            tasks,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Attached>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn rng(&self) -> MutexGuard<'_, SimRng> {
        self.rng.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on an attached session's state.
    fn with<R>(&self, id: &str, f: impl FnOnce(&mut Attached) -> R) -> Result<R, NetworkError> {
        let mut sessions = self.lock();
        let s = sessions.get_mut(id).ok_or_else(|| {
            NetworkError::NotFound(format!("session `{id}` is not on the simulated network"))
        })?;
        Ok(f(s))
    }

    pub(super) fn next_message_id(&self) -> String {
        self.rng().message_id()
    }

    pub(super) fn attach(&self, spec: AttachSpec, events: EventSink) -> Result<(), NetworkError> {
        let mut sessions = self.lock();
        if sessions.contains_key(&spec.session_id) {
            return Err(NetworkError::InvalidState(format!(
                "session `{}` is already attached",
                spec.session_id
            )));
        }
        sessions.insert(
            spec.session_id,
            Attached {
                events,
                link: Link::Offline,
                account: spec.account,
                phone_hint: spec.phone_hint,
                name: spec.name,
                pair_phone: None,
                faults: Faults::default(),
                offline_queue: VecDeque::new(),
                pairing: None,
            },
        );
        Ok(())
    }

    pub(super) fn forget(&self, id: &str) {
        if let Some(s) = self.lock().remove(id)
            && let Some(t) = s.pairing
        {
            t.cancel();
        }
    }

    /// Connects: a paired account logs in at once and drains its offline queue;
    /// an unpaired one starts showing QR codes (and pairs by itself when configured).
    pub(super) async fn connect(world: &Arc<World>, id: &str) -> Result<(), NetworkError> {
        enum Plan {
            Nothing,
            LogIn(Vec<InboundMessage>),
            Pair(CancellationToken),
        }
        let (events, plan) = world.with(id, |s| {
            let plan = match (s.link, &s.account) {
                (Link::Online | Link::WaitingQr | Link::WaitingPairCode, _) => Plan::Nothing,
                (Link::Offline, Some(_)) => {
                    s.link = Link::Online;
                    Plan::LogIn(s.offline_queue.drain(..).collect())
                }
                (Link::Offline, None) => {
                    s.link = Link::WaitingQr;
                    let token = world.cancel.child_token();
                    s.pairing = Some(token.clone());
                    Plan::Pair(token)
                }
            };
            (s.events.clone(), plan)
        })?;
        match plan {
            Plan::Nothing => {}
            Plan::LogIn(queued) => {
                emit(&events, NetworkEvent::Connecting).await;
                emit(&events, NetworkEvent::LoggedIn).await;
                drain_offline(&events, queued).await;
            }
            Plan::Pair(token) => {
                emit(&events, NetworkEvent::Connecting).await;
                let world = world.clone();
                let id = id.to_owned();
                world
                    .tasks
                    .clone()
                    .spawn(async move { world.pairing_loop(&id, token).await });
            }
        }
        Ok(())
    }

    /// Rotates QR codes until pairing completes, the session leaves the pairing
    /// states, or the token is cancelled; completes pairing after the configured
    /// delay when automatic pairing is on.
    async fn pairing_loop(self: &Arc<Self>, id: &str, token: CancellationToken) {
        let deadline = self
            .config
            .auto_pair
            .then(|| Instant::now() + self.config.pair_delay);
        loop {
            let Ok((link, events)) = self.with(id, |s| (s.link, s.events.clone())) else {
                return;
            };
            if link == Link::WaitingQr {
                let code = self.rng().qr_code();
                let expires_at = unix_now() + self.config.qr_interval.as_secs().max(1) as i64;
                emit(&events, NetworkEvent::Qr { code, expires_at }).await;
            } else if link != Link::WaitingPairCode {
                return;
            }
            let next_qr = Instant::now() + self.config.qr_interval;
            let wake = deadline.map_or(next_qr, |d| d.min(next_qr));
            tokio::select! {
                _ = token.cancelled() => return,
                _ = sleep_until(wake) => {}
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                let _ = Self::complete_pairing(self, id).await;
                return;
            }
        }
    }

    /// Pairs a session that is waiting for a QR scan or a pair code.
    pub(super) async fn complete_pairing(
        world: &Arc<World>,
        id: &str,
    ) -> Result<Account, NetworkError> {
        let (events, account) = world.pair_now(id)?;
        emit(&events, NetworkEvent::Paired(account.clone())).await;
        emit(&events, NetworkEvent::LoggedIn).await;
        Ok(account)
    }

    /// The synchronous part of pairing: choose the phone, link the account.
    fn pair_now(&self, id: &str) -> Result<(EventSink, Account), NetworkError> {
        let seed = self.config.seed;
        let mut sessions = self.lock();
        let taken: HashSet<String> = sessions
            .iter()
            .filter(|(other, _)| other.as_str() != id)
            .filter_map(|(_, s)| s.account.as_ref().map(|a| a.phone.clone()))
            .collect();
        let s = sessions.get_mut(id).ok_or_else(|| {
            NetworkError::NotFound(format!("session `{id}` is not on the simulated network"))
        })?;
        if !matches!(s.link, Link::WaitingQr | Link::WaitingPairCode) {
            return Err(NetworkError::InvalidState(format!(
                "session `{id}` is not waiting to be paired; connect it first"
            )));
        }
        let phone = s
            .pair_phone
            .clone()
            .or_else(|| s.phone_hint.clone())
            .unwrap_or_else(|| derived_phone(seed, id));
        if taken.contains(&phone) {
            return Err(NetworkError::InvalidState(format!(
                "phone {phone} is already linked to another session"
            )));
        }
        let account = Account {
            jid: format!("{phone}@s.whatsapp.net"),
            push_name: Some(s.name.clone().unwrap_or_else(|| format!("Sim {id}"))),
            phone,
        };
        s.account = Some(account.clone());
        s.link = Link::Online;
        if let Some(t) = s.pairing.take() {
            t.cancel();
        }
        Ok((s.events.clone(), account))
    }

    pub(super) async fn disconnect(&self, id: &str) -> Result<(), NetworkError> {
        let (events, was) = self.with(id, |s| {
            if let Some(t) = s.pairing.take() {
                t.cancel();
            }
            let was = std::mem::replace(&mut s.link, Link::Offline);
            (s.events.clone(), was)
        })?;
        if was != Link::Offline {
            let reason = "disconnected on request".to_owned();
            emit(&events, NetworkEvent::Disconnected { reason }).await;
        }
        Ok(())
    }

    pub(super) async fn logout(&self, id: &str) -> Result<(), NetworkError> {
        let (events, had_account, was) = self.with(id, |s| {
            if let Some(t) = s.pairing.take() {
                t.cancel();
            }
            s.offline_queue.clear();
            s.pair_phone = None;
            let was = std::mem::replace(&mut s.link, Link::Offline);
            (s.events.clone(), s.account.take().is_some(), was)
        })?;
        if had_account {
            let reason = "logged out on request".to_owned();
            emit(&events, NetworkEvent::LoggedOut { reason }).await;
        } else if was != Link::Offline {
            let reason = "disconnected on request".to_owned();
            emit(&events, NetworkEvent::Disconnected { reason }).await;
        }
        Ok(())
    }

    pub(super) async fn request_pair_code(
        &self,
        id: &str,
        phone: &str,
    ) -> Result<String, NetworkError> {
        let code = self.rng().pair_code();
        let events = self.with(id, |s| {
            if s.account.is_some() {
                return Err(NetworkError::InvalidState(
                    "the session is already paired".into(),
                ));
            }
            if !matches!(s.link, Link::WaitingQr | Link::WaitingPairCode) {
                return Err(NetworkError::NotConnected);
            }
            s.link = Link::WaitingPairCode;
            s.pair_phone = Some(phone.to_owned());
            Ok(s.events.clone())
        })??;
        emit(&events, NetworkEvent::PairCode { code: code.clone() }).await;
        Ok(code)
    }

    pub(super) async fn send(
        &self,
        id: &str,
        to: &Jid,
        content: &OutboundContent,
    ) -> Result<SendReceipt, NetworkError> {
        let (faults, me) = self.with(id, |s| match (&s.link, &s.account) {
            (Link::Online, Some(a)) => Ok((s.faults.clone(), a.clone())),
            _ => Err(NetworkError::NotConnected),
        })??;
        if faults.send_latency_ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(faults.send_latency_ms)).await;
        }
        let to_str = to.to_string();
        if faults.fail_sends_to.contains(&to_str) {
            return Err(NetworkError::Failed(format!(
                "simulated send failure to {to_str}"
            )));
        }
        if faults.fail_send_rate > 0.0 && self.rng().unit() < faults.fail_send_rate {
            return Err(NetworkError::Failed("simulated random send failure".into()));
        }
        if to.is_group() {
            return Err(NetworkError::NotFound(format!(
                "group {to_str} does not exist on the simulated network"
            )));
        }
        let message_id = self.next_message_id();
        let timestamp = unix_now();
        let body = serde_json::to_value(content).map_err(internal)?;
        let entry = OutboxEntry {
            to: to_str.clone(),
            kind: content.kind().as_str().to_owned(),
            body,
            message_id: message_id.clone(),
            timestamp,
        };
        self.store.append_outbox(id, &entry).map_err(internal)?;
        let peer = to.phone().and_then(|phone| {
            self.lock()
                .iter()
                .find(|(other, s)| {
                    *other != id && s.account.as_ref().is_some_and(|a| a.phone == phone)
                })
                .map(|(other, _)| other.clone())
        });
        if let Some(peer) = peer {
            let push_name = me.push_name.clone().unwrap_or_else(|| me.phone.clone());
            let sender = Sender {
                jid: &me.jid,
                push_name: &push_name,
            };
            let inbound = to_inbound(&sender, &me.jid, content, &message_id, timestamp);
            // The peer may have been deleted since; the sender's send still succeeded.
            let _ = self.deliver(&peer, inbound).await;
        }
        Ok(SendReceipt {
            message_id,
            timestamp,
        })
    }

    /// Hands a message to a session: now when online, queued for its next
    /// connect (and flagged offline) otherwise.
    pub(super) async fn deliver(
        &self,
        id: &str,
        mut message: InboundMessage,
    ) -> Result<String, NetworkError> {
        let message_id = message.message_id.clone();
        let live = self.with(id, |s| {
            if s.account.is_none() {
                return Err(NetworkError::InvalidState(format!(
                    "session `{id}` is not paired; nothing can reach it yet"
                )));
            }
            if s.link == Link::Online {
                Ok(Some(s.events.clone()))
            } else {
                message.offline = true;
                s.offline_queue.push_back(message.clone());
                Ok(None)
            }
        })??;
        if let Some(events) = live {
            emit(&events, NetworkEvent::Message(Box::new(message))).await;
        }
        Ok(message_id)
    }

    pub(super) fn set_faults(&self, id: &str, faults: Faults) -> Result<(), NetworkError> {
        self.with(id, |s| s.faults = faults)
    }

    pub(super) fn outbox(&self, id: &str) -> Result<Vec<OutboxEntry>, NetworkError> {
        self.with(id, |_| ())?;
        self.store.list_outbox(id).map_err(internal)
    }

    pub(super) fn register_user(&self, user: SimUser) -> Result<SimUser, NetworkError> {
        self.store.put_sim_user(&user).map_err(internal)?;
        Ok(user)
    }

    pub(super) fn user(&self, phone: &str) -> Result<Option<SimUser>, NetworkError> {
        self.store.get_sim_user(phone).map_err(internal)
    }
}

/// Sends an event to a session's intake; a closed channel means the session is
/// being deleted, and the event has nowhere to go.
async fn emit(events: &EventSink, event: NetworkEvent) {
    let _ = events.send(event).await;
}

/// Replays the disconnect window: preview, the queued messages, completion.
async fn drain_offline(events: &EventSink, queued: Vec<InboundMessage>) {
    if queued.is_empty() {
        return;
    }
    let count = queued.len();
    let preview = serde_json::json!({ "messages": count });
    emit(
        events,
        NetworkEvent::Other {
            event: EventName::OfflineSyncPreview,
            data: preview,
        },
    )
    .await;
    for m in queued {
        emit(events, NetworkEvent::Message(Box::new(m))).await;
    }
    let done = serde_json::json!({ "count": count });
    emit(
        events,
        NetworkEvent::Other {
            event: EventName::OfflineSyncCompleted,
            data: done,
        },
    )
    .await;
}
