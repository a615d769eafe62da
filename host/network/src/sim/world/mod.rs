//! The state of the simulated world: every attached session's link, account,
//! faults and offline queue, the group book (`groups.rs`), and the rules that
//! move them.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Deserialize;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::SimConfig;

pub(super) mod account_memory;
mod actions;
mod arrivals;
mod blocks;
mod book;
mod group_ops;
mod group_rules;
pub(super) mod groups;
mod pairing;
mod people;
mod presence;
mod profile;
mod timelock;
use super::convert::{Sender, to_inbound};
use super::ids::SimRng;
use super::media::SimMedia;
use crate::account::Collection;
use crate::domain::event::EventName;
use crate::domain::jid::Jid;
use crate::domain::media::NetworkMedia;
use crate::domain::send::OutboundContent;
use crate::domain::session::Account;
use crate::domain::time::unix_now;
use crate::media_store::MediaStore;
use crate::store::{OutboxEntry, SimUser, Store};
use crate::{AttachSpec, EventSink, InboundMessage, NetworkError, NetworkEvent, SendReceipt};
use account_memory::AppStateFault;

/// Send faults of one session, set through the control API.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Faults {
    /// Sends to these JIDs fail.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::domain::address_schema::ChatAddress>))]
    pub fail_sends_to: HashSet<String>,
    /// Probability in `[0, 1]` that any send fails.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    pub fail_send_rate: f64,
    /// Added latency of every send, in milliseconds.
    #[serde(default)]
    pub send_latency_ms: u64,
    /// App-state fetches of these collections fail: `fatal` or `retryable`.
    #[serde(default)]
    pub appstate: HashMap<Collection, AppStateFault>,
    /// Added latency of every app-state resync, in milliseconds.
    #[serde(default)]
    pub appstate_latency_ms: u64,
    /// Connects fail (as a network that cannot be reached).
    #[serde(default)]
    pub fail_connect: bool,
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
    timelock: Option<timelock::SimTimelock>,
    /// The accounts this one blocked, once read from the store.
    blocked: Option<std::collections::HashSet<String>>,
    /// Bumped by every change of the blocklist, so a read of the store that
    /// began before a change is never cached after it.
    blocks_changed: u64,
}

/// What one send puts on the network: its outbox kind and body, the
/// content whose media goes to the media servers (if any), and how a
/// recipient receives it (given the sender, the chat as the recipient sees
/// it, the id, the time and the media).
pub(in crate::sim) struct Outgoing<'a> {
    /// The outbox entry's kind.
    pub kind: &'a str,
    /// The outbox entry's body.
    pub body: serde_json::Value,
    /// The content, when it may carry media.
    pub content: Option<&'a OutboundContent>,
    /// Builds what a recipient receives.
    #[allow(clippy::type_complexity)]
    pub build: &'a (
            dyn Fn(&Sender<'_>, &str, &str, i64, Option<&NetworkMedia>) -> InboundMessage
                + Send
                + Sync
        ),
}

/// The whole simulated world.
pub struct World {
    store: Store,
    /// The sim's media servers.
    pub(in crate::sim) media: SimMedia,
    config: SimConfig,
    rng: Mutex<SimRng>,
    sessions: Mutex<HashMap<String, Attached>>,
    groups: Mutex<groups::GroupBook>,
    accounts: account_memory::AccountMemory,
    cancel: CancellationToken,
    tasks: TaskTracker,
}

/// The sim keeps its state in the gateway's own store: a storage fault
/// there is the gateway's (answered `507` or `503`), not the network's.
fn internal(e: crate::store::StoreError) -> NetworkError {
    match e.fault() {
        Some(fault) => NetworkError::Storage(fault, e.to_string()),
        None => NetworkError::Failed(format!("simulated network storage failed: {e}")),
    }
}

impl World {
    pub(in crate::sim) fn new(
        store: Store,
        media: MediaStore,
        config: SimConfig,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) -> Self {
        Self {
            media: SimMedia::new(media),
            rng: Mutex::new(SimRng::new(config.seed)),
            store,
            config,
            sessions: Mutex::new(HashMap::new()),
            groups: Mutex::default(),
            accounts: Default::default(),
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

    /// `NotConnected` unless the session is online: what the network's
    /// media servers ask of a download, as a real network's do.
    pub(in crate::sim) fn require_online(&self, id: &str) -> Result<(), NetworkError> {
        match self.with(id, |s| s.link == Link::Online && s.account.is_some())? {
            true => Ok(()),
            false => Err(NetworkError::NotConnected),
        }
    }

    pub(in crate::sim) fn next_message_id(&self) -> String {
        self.rng().message_id()
    }

    pub(in crate::sim) fn attach(
        &self,
        spec: AttachSpec,
        events: EventSink,
    ) -> Result<(), NetworkError> {
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
                timelock: None,
                blocked: None,
                blocks_changed: 0,
            },
        );
        Ok(())
    }

    pub(in crate::sim) fn forget(&self, id: &str) {
        self.accounts.forget(id);
        if let Some(s) = self.lock().remove(id)
            && let Some(t) = s.pairing
        {
            t.cancel();
        }
    }

    /// Connects: a paired account logs in at once and drains its offline queue;
    /// an unpaired one starts showing QR codes (and pairs by itself when configured).
    pub(in crate::sim) async fn connect(world: &Arc<World>, id: &str) -> Result<(), NetworkError> {
        enum Plan {
            Nothing,
            LogIn(Vec<InboundMessage>),
            Pair(CancellationToken),
        }
        if world.with(id, |s| s.faults.fail_connect)? {
            return Err(NetworkError::Failed(
                "simulated connect failure: the network cannot be reached".into(),
            ));
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
                world.timelock_after_login(id, &events).await;
                world.sync_after_login(id, &events).await;
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

    pub(in crate::sim) async fn disconnect(&self, id: &str) -> Result<(), NetworkError> {
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

    pub(in crate::sim) async fn logout(&self, id: &str) -> Result<(), NetworkError> {
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

    pub(in crate::sim) async fn send(
        &self,
        id: &str,
        message_id: &str,
        to: &Jid,
        content: &OutboundContent,
    ) -> Result<SendReceipt, NetworkError> {
        self.send_content(id, message_id, to, content, false).await
    }

    /// Sends `content`, marked forwarded when `forwarded`.
    pub(in crate::sim) async fn send_content(
        &self,
        id: &str,
        message_id: &str,
        to: &Jid,
        content: &OutboundContent,
        forwarded: bool,
    ) -> Result<SendReceipt, NetworkError> {
        let body = serde_json::to_value(content).map_err(|e| internal(e.into()))?;
        let outgoing = Outgoing {
            kind: content.kind().as_str(),
            body,
            content: Some(content),
            build: &|sender, chat, message_id, timestamp, media| {
                let mut m = to_inbound(sender, chat, content, message_id, timestamp, media);
                m.forwarded = forwarded;
                m
            },
        };
        self.send_outgoing(id, message_id, to, outgoing).await
    }

    /// Sends one message of any shape (content or an action on an earlier
    /// message): the faults, the membership rule, the one-message-per-id
    /// rule, the outbox entry and the delivery to every peer reached.
    pub(in crate::sim) async fn send_outgoing(
        &self,
        id: &str,
        message_id: &str,
        to: &Jid,
        outgoing: Outgoing<'_>,
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
        self.check_reach_out(id, to)?;
        // Who it reaches; a group refuses a sender that is not a member.
        let peers = self.reached_by(id, &me, to)?;
        // The network keeps one message per id: a resend of an id it already
        // has is acknowledged with the original receipt and not delivered again.
        if let Some(original) = self.store.find_outbox(id, message_id).map_err(internal)? {
            return Ok(SendReceipt {
                message_id: original.message_id,
                timestamp: original.timestamp,
            });
        }
        let message_id = message_id.to_owned();
        let timestamp = unix_now();
        let entry = OutboxEntry {
            to: to_str.clone(),
            kind: outgoing.kind.to_owned(),
            body: outgoing.body,
            message_id: message_id.clone(),
            timestamp,
        };
        self.store
            .append_outbox_async(id, &entry)
            .await
            .map_err(internal)?;
        let chat = if to.is_group() { &to_str } else { &me.jid };
        let push_name = me.push_name.clone().unwrap_or_else(|| me.phone.clone());
        let sender = Sender {
            jid: &me.jid,
            push_name: &push_name,
        };
        let media = match outgoing.content {
            Some(content) if !peers.is_empty() => self.sent_media(id, content).await?,
            _ => None,
        };
        for peer in peers {
            let inbound = (outgoing.build)(&sender, chat, &message_id, timestamp, media.as_ref());
            // The peer may have been deleted since; the sender's send still succeeded.
            let _ = self.deliver(&peer, inbound).await;
        }
        Ok(SendReceipt {
            message_id,
            timestamp,
        })
    }

    /// Puts the media of `content` on the sim's media servers once for
    /// every recipient, and describes it as a received message would.
    async fn sent_media(
        &self,
        id: &str,
        content: &OutboundContent,
    ) -> Result<Option<NetworkMedia>, NetworkError> {
        let (source, mimetype, filename, ptt, view_once) = match content {
            OutboundContent::Image(b) | OutboundContent::Video(b) => {
                (&b.source, &b.mimetype, None, None, b.view_once)
            }
            OutboundContent::Audio(b) => (&b.source, &b.mimetype, None, Some(b.ptt), false),
            OutboundContent::Document(b) => (
                &b.source,
                &b.mimetype,
                Some(b.filename.clone()),
                None,
                false,
            ),
            _ => return Ok(None),
        };
        let (handle, file_length, sha256) = self.media.put_sent(id, source).await?;
        Ok(Some(NetworkMedia {
            mimetype: Some(mimetype.clone()),
            file_length,
            sha256,
            filename,
            ptt,
            view_once,
            handle,
            ..NetworkMedia::default()
        }))
    }

    pub(in crate::sim) fn set_faults(&self, id: &str, faults: Faults) -> Result<(), NetworkError> {
        self.with(id, |s| s.faults = faults)
    }

    pub(in crate::sim) fn has_sent(
        &self,
        id: &str,
        message_id: &str,
    ) -> Result<bool, NetworkError> {
        self.with(id, |_| ())?;
        Ok(self
            .store
            .find_outbox(id, message_id)
            .map_err(internal)?
            .is_some())
    }

    pub(in crate::sim) fn outbox(&self, id: &str) -> Result<Vec<OutboxEntry>, NetworkError> {
        self.with(id, |_| ())?;
        self.store.list_outbox(id).map_err(internal)
    }

    pub(in crate::sim) fn register_user(&self, user: SimUser) -> Result<SimUser, NetworkError> {
        self.store.put_sim_user(&user).map_err(internal)?;
        Ok(user)
    }

    pub(in crate::sim) fn user(&self, phone: &str) -> Result<Option<SimUser>, NetworkError> {
        self.store.get_sim_user(phone).map_err(internal)
    }

    pub(in crate::sim) fn user_by_lid(&self, lid: &str) -> Result<Option<SimUser>, NetworkError> {
        let users = self.store.list_sim_users().map_err(internal)?;
        Ok(users.into_iter().find(|u| u.lid.as_deref() == Some(lid)))
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
