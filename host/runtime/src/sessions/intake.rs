//! Intake: one task per session turns what the network says into session state,
//! stored records and published envelopes (a message's envelope recorded
//! with its record in one write, through [`PublishQueue`]). It drops duplicate messages (the
//! per-session dedup window) and learns and applies the lid-to-phone mapping.
//! A batch the network holds its acknowledgement back for
//! ([`NetworkEvent::Durable`]) is answered once all of it is stored and
//! published.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Live;
use super::dedup::{MessageDedup, MessageKey};
use super::lid::{LearnedLid, learned_from_contact, learned_from_message, resolve_phones};
use super::message_event::message_data;
use super::publish_queue::{Owed, PublishQueue};
use crate::domain::event::{Envelope, EventName};
use crate::domain::event_data::own::{
    ConnectedData, LoggedOutData, PairCodeData, QrCodeData, to_data,
};
use crate::domain::media::MediaObject;
use crate::domain::message::{Direction, MessageRecord};
use crate::domain::session::SessionStatus;
use crate::media::Media;
use crate::network::{InboundMessage, NetworkEvent, NetworkSession, StoredReceipt};
use crate::store::Store;

/// Most events intake takes from the channel for one trip to a blocking
/// thread (whatever is already waiting, up to this many).
const HANDLE_BATCH: usize = 64;

/// What the intake task of one session needs.
pub(super) struct Intake {
    pub store: Store,
    /// Where envelopes wait for their records' commits, in order.
    pub queue: PublishQueue,
    pub live: Arc<Live>,
    /// The keys of the last messages seen; memory only.
    pub dedup: MessageDedup,
    /// Decides about reconnects after drops and account locks.
    pub supervisor: super::reconnect::Supervisor,
    /// The receipt of the unacknowledged batch being handled, if any.
    pub receipt: Option<StoredReceipt>,
    /// Inbound media: recorded (and in eager mode downloaded) before the
    /// message's event is built.
    pub media: Media,
    /// The session's network client, which downloads its media.
    pub client: Arc<dyn NetworkSession>,
    /// The media objects of the batch being handled, by message.
    pub prepared: HashMap<(String, String), MediaObject>,
}

/// What the intake loop does next.
enum Step {
    Flushed,
    Events(Vec<NetworkEvent>),
    Closed,
    Stopping,
}

impl Intake {
    /// Handles events until the network drops the channel or the gateway
    /// stops. Envelopes whose records are committed leave first; no new
    /// event is read while the publish queue is full. Handling writes to
    /// the store (session records, lid mappings, contacts), so it runs on a
    /// blocking thread, a batch of waiting events at a time, never on an
    /// async worker.
    /// `deleted` ends it at once: its session is being deleted, and
    /// nothing more is handled or waited for.
    pub async fn run(
        mut self,
        mut rx: mpsc::Receiver<NetworkEvent>,
        cancel: CancellationToken,
        deleted: CancellationToken,
    ) {
        loop {
            let step = tokio::select! {
                biased;
                _ = deleted.cancelled() => return,
                () = self.queue.flush(), if !self.queue.is_empty() => Step::Flushed,
                ev = rx.recv(), if self.queue.has_room() => match ev {
                    Some(ev) => Step::Events(vec![ev]),
                    None => Step::Closed,
                },
                _ = cancel.cancelled() => Step::Stopping,
            };
            match step {
                Step::Flushed => self.forget_failed(),
                Step::Events(mut batch) => {
                    while batch.len() < HANDLE_BATCH
                        && let Ok(ev) = rx.try_recv()
                    {
                        batch.push(ev);
                    }
                    self.prepare_media(&batch, false).await;
                    match self.handle_all(batch).await {
                        Some(this) => self = this,
                        None => return,
                    }
                }
                Step::Closed => break,
                Step::Stopping => {
                    // Stopping: handle what the network already handed over, so
                    // a message received just before shutdown is still stored.
                    let batch: Vec<NetworkEvent> =
                        std::iter::from_fn(|| rx.try_recv().ok()).collect();
                    // Stopping: media is recorded, not downloaded, so the
                    // stop does not wait on downloads; the first read
                    // downloads it.
                    self.prepare_media(&batch, true).await;
                    match self.handle_all(batch).await {
                        Some(this) => self = this,
                        None => return,
                    }
                    break;
                }
            }
        }
        self.queue.drain().await;
        self.forget_failed();
    }

    /// Records the media of the batch's messages, downloading it first in
    /// eager mode (the batch's at once, within the gateway's download
    /// limit), so each message's event carries the gateway's media object
    /// and, in eager mode, its webhook can fetch the bytes at once. A
    /// duplicate message, already seen or twice in the batch, is handled
    /// once. With `defer`, nothing is downloaded.
    async fn prepare_media(&mut self, batch: &[NetworkEvent], defer: bool) {
        fn messages<'a>(events: &'a [NetworkEvent], out: &mut Vec<&'a InboundMessage>) {
            for ev in events {
                match ev {
                    NetworkEvent::Message(m) if m.media.is_some() => out.push(m),
                    NetworkEvent::Durable { events, .. } => messages(events, out),
                    _ => {}
                }
            }
        }
        let mut found = Vec::new();
        messages(batch, &mut found);
        let mut seen = std::collections::HashSet::new();
        found.retain(|m| {
            let key = MessageKey::of(m);
            !self.dedup.contains(&key) && seen.insert((m.chat.clone(), m.message_id.clone()))
        });
        if found.is_empty() {
            return;
        }
        let id = self.live.id.clone();
        let client = self.client.clone();
        let media = self.media.clone();
        let done = futures_util::future::join_all(found.into_iter().map(|m| {
            let (media, client, id) = (media.clone(), client.clone(), id.clone());
            async move {
                let record = media.ingest(&id, m, client, defer).await;
                record.map(|r| ((m.chat.clone(), m.message_id.clone()), media.object(&r)))
            }
        }))
        .await;
        self.prepared.extend(done.into_iter().flatten());
    }

    /// Handles `batch` in order on a blocking thread; `None` if handling
    /// panicked (the session's intake is then over, as a panic on the task
    /// would have ended it).
    async fn handle_all(self, batch: Vec<NetworkEvent>) -> Option<Self> {
        let id = self.live.id.clone();
        let handled = tokio::task::spawn_blocking(move || {
            let mut this = self;
            for ev in batch {
                this.handle(ev);
            }
            this
        })
        .await;
        match handled {
            Ok(this) => Some(this),
            Err(e) => {
                tracing::error!(session = %id, error = %e, "the session's intake failed; its events are no longer handled");
                None
            }
        }
    }

    /// Messages whose records could not be stored are no longer duplicates:
    /// the network delivers them again, and then they must be stored.
    fn forget_failed(&mut self) {
        for key in self.queue.take_failed() {
            self.dedup.forget(&key);
        }
    }

    pub(super) fn publish(&mut self, event: EventName, data: serde_json::Value) {
        let envelope = Envelope::now(&self.live.id, event, data);
        let owed = self.owed();
        self.queue.push(envelope, owed);
    }

    /// What an event's write owes: the receipt of the batch being handled.
    pub(super) fn owed(&self) -> Owed {
        Owed {
            receipt: self.receipt.clone(),
            key: None,
            also: Vec::new(),
        }
    }

    fn handle(&mut self, ev: NetworkEvent) {
        let id = &self.live.id;
        match ev {
            NetworkEvent::Connecting => self.live.update(|s| s.status = SessionStatus::Connecting),
            NetworkEvent::Qr { code, expires_at } => {
                self.live.update(|s| {
                    s.status = SessionStatus::WaitingForQr;
                    s.qr = Some((code.clone(), expires_at));
                });
                self.publish(EventName::QrCode, to_data(&QrCodeData { code, expires_at }));
            }
            NetworkEvent::PairCode { code } => {
                self.live.update(|s| {
                    s.status = SessionStatus::WaitingForPairCode;
                    s.qr = None;
                });
                self.publish(EventName::PairCode, to_data(&PairCodeData { code }));
            }
            NetworkEvent::Paired(account) => {
                tracing::info!(session = %id, phone = %account.phone, "session paired");
                if let Err(e) = self
                    .store
                    .modify_session_of(id, Some(self.live.incarnation), |r| {
                        r.account = Some(account)
                    })
                {
                    tracing::error!(session = %id, error = %e, "could not store the paired account");
                }
                self.fresh_pair();
            }
            NetworkEvent::LoggedIn => {
                self.live.update(|s| {
                    s.status = SessionStatus::LoggedIn;
                    s.qr = None;
                    s.last_error = None;
                });
                tracing::info!(session = %id, "session logged in");
                self.supervisor.logged_in(&self.live);
                self.publish(EventName::Connected, to_data(&ConnectedData {}));
            }
            NetworkEvent::Disconnected { reason } => {
                self.live.update(|s| {
                    s.status = SessionStatus::Disconnected;
                    s.qr = None;
                });
                tracing::info!(session = %id, %reason, "session disconnected");
                self.publish(EventName::Disconnected, json!({ "reason": reason }));
                if let Some(next) = self.supervisor.dropped(&self.live, &reason) {
                    self.publish(EventName::ReconnectScheduled, to_data(&next));
                }
            }
            NetworkEvent::Replaced { reason } | NetworkEvent::Refused { reason } => {
                // Not a drop: the supervisor is not told, so it does not
                // reconnect, and the session is no longer meant to be
                // connected, so a restart does not either.
                if let Err(e) = self
                    .store
                    .modify_session_of(id, Some(self.live.incarnation), |r| {
                        r.want_connected = false
                    })
                {
                    tracing::error!(session = %id, error = %e, "could not store that the session was replaced");
                }
                self.live.update(|s| {
                    s.status = SessionStatus::Disconnected;
                    s.qr = None;
                    s.last_error = Some(reason.clone());
                });
                tracing::warn!(session = %id, %reason, "the network ended the session for good; not reconnecting");
                self.publish(EventName::Disconnected, json!({ "reason": reason }));
            }
            NetworkEvent::LoggedOut { reason } => {
                if let Err(e) = self
                    .store
                    .modify_session_of(id, Some(self.live.incarnation), |r| {
                        r.account = None;
                        r.want_connected = false;
                    })
                {
                    tracing::error!(session = %id, error = %e, "could not clear the account");
                }
                self.live.update(|s| {
                    s.status = SessionStatus::Disconnected;
                    s.qr = None;
                });
                tracing::info!(session = %id, %reason, "session logged out");
                self.publish(EventName::LoggedOut, to_data(&LoggedOutData { reason }));
            }
            NetworkEvent::Message(m) => self.message(&m),
            NetworkEvent::Other { event, data } => {
                if event == EventName::StreamError && (data["code"] == "429" || data["code"] == 429)
                {
                    self.supervisor.rate_limited(&self.live);
                }
                if matches!(event, EventName::PushNameUpdate | EventName::ContactUpdate)
                    && let Some(pair) = learned_from_contact(&data)
                {
                    self.learn(&pair);
                }
                self.contact_event(event, &data);
                self.chat_event(event, &data);
                self.publish(event, data);
            }
            NetworkEvent::Contacts(sync) => self.contacts_synced(&sync),
            NetworkEvent::AccountLocked { reason, until, url } => {
                self.account_locked(&reason, until, url)
            }
            NetworkEvent::ReachOutTimelock { active, until } => {
                self.supervisor.timelock(&self.live, active, until)
            }
            NetworkEvent::Durable { events, receipt } => {
                let outer = self.receipt.replace(receipt.clone());
                for ev in events {
                    self.handle(ev);
                }
                self.receipt = outer;
                self.queue.push_mark(receipt);
            }
        }
    }

    /// Stores and publishes a message unless it is a duplicate.
    fn message(&mut self, m: &InboundMessage) {
        // A write that failed meanwhile leaves the window first: its
        // message, delivered again, must be stored this time.
        self.forget_failed();
        let id = &self.live.id;
        let key = MessageKey::of(m);
        if !self.dedup.insert(&key) {
            tracing::debug!(session = %id, chat = %m.chat, message_id = %m.message_id, "duplicate message dropped");
            // The copy's batch was answered by the first write: while that
            // is pending, it fails with it (and the network delivers again).
            if let Some(receipt) = &self.receipt {
                self.queue.also_owe(&key, receipt);
            }
            return;
        }
        if let Some(pair) = learned_from_message(m) {
            self.learn(&pair);
        }
        let phones = resolve_phones(m, |lid| self.learned_phone(lid));
        self.contact_from_message(m, &phones);
        let media = self
            .prepared
            .remove(&(m.chat.clone(), m.message_id.clone()));
        let data = to_data(&message_data(m, &phones, media));
        let record = MessageRecord {
            message_id: m.message_id.clone(),
            session_id: id.clone(),
            direction: Direction::Inbound,
            chat: m.chat.clone(),
            sender: Some(m.participant.clone()),
            kind: m.message_type.clone(),
            // The bus gives the record the envelope's data (see
            // `EventBus::publish_message`): one value for both.
            body: serde_json::Value::Null,
            timestamp: m.timestamp,
        };
        let mut envelope = Envelope::now(id, EventName::Message, data);
        envelope.offline = Some(m.offline);
        let owed = Owed {
            receipt: self.receipt.clone(),
            key: Some(key),
            also: Vec::new(),
        };
        self.queue.push_message(envelope, record, owed);
    }

    /// Keeps what the account's devices say of a chat (archived, pinned,
    /// muted, read or unread, deleted) in the chat's record. A failure is
    /// logged: the event itself is still published.
    fn chat_event(&self, event: EventName, data: &serde_json::Value) {
        let Some(chat) = data.get("chat_jid").and_then(serde_json::Value::as_str) else {
            return;
        };
        let id = &self.live.id;
        // The chat as the gateway lists it (an `@lid` by its phone when known).
        let key = self
            .store
            .chat_key(id, chat)
            .unwrap_or_else(|_| chat.to_owned());
        let chat = key.as_str();
        let name = event.as_str();
        let done = if event == EventName::ChatDeleted {
            self.store.delete_chat(id, chat).map(|_| ())
        } else if matches!(
            event,
            EventName::ArchiveUpdate
                | EventName::PinUpdate
                | EventName::MuteUpdate
                | EventName::MarkChatAsRead
        ) {
            self.store
                .update_chat(id, chat, |c| {
                    c.on_app_state(name, data);
                })
                .map(|_| ())
        } else {
            Ok(())
        };
        if let Err(e) = done {
            tracing::error!(session = %id, event = %name, error = %e, "could not keep a chat change");
        }
    }

    fn learn(&self, pair: &LearnedLid) {
        let id = &self.live.id;
        match self
            .store
            .learn_lid(id, &pair.lid_user, &pair.phone, Some(self.live.incarnation))
        {
            Ok(true) => {
                tracing::debug!(session = %id, lid = %pair.lid_user, "learned a lid's phone")
            }
            Ok(false) => {}
            Err(e) => tracing::error!(session = %id, error = %e, "could not store a lid mapping"),
        }
    }

    fn learned_phone(&self, lid_user: &str) -> Option<String> {
        self.store
            .lid_phone(&self.live.id, lid_user)
            .unwrap_or_else(|e| {
                tracing::error!(session = %self.live.id, error = %e, "could not read the lid mapping");
                None
            })
    }
}
