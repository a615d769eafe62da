//! The inbound path of messages, and the crate's durability hook on it.
//!
//! whatsapp-rust acknowledges a decrypted message to the server, which then
//! drops it from its offline queue, only after the registered
//! [`InboundDurabilityHook`] returns `Ok` (it buffers the message in our redb
//! store first, through the pending-inbound methods of
//! [`crate::store::whatsapp::WaStore`], and replays it from there when the
//! server delivers it again). [`InboundHook`] returns only once the session's
//! intake has stored every message of the batch and published its event, so
//! what the server forgets, the gateway holds. A failure (the store refused,
//! the gateway is stopping) returns `Err`: the crate withholds the
//! acknowledgements and the server delivers the batch again on the next
//! connect. That makes delivery at-least-once: a crash after the intake
//! stored a batch but before the acknowledgement reached the server shows the
//! batch again (same ids; the intake's dedup window drops it when it is
//! still remembered).
//!
//! On the way each message is kept as the crate's protobuf (for quotes and
//! poll votes), classified ([`super::map::protocol`]), given the sender's
//! phone when the crate knows a lid's, and votes are opened with their
//! poll's secret; the chat timers they state are kept (`chat_timers.rs`). Batches the crate did not hand to the hook (newsletters,
//! placeholder recoveries) take the same path from the pump, without a
//! receipt. A committed batch goes through the session's lane
//! ([`super::lane`]), so it reaches the intake after every event the crate
//! read before it.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use whatsapp_rust::Client;
use whatsapp_rust::InboundDurabilityHook;
use whatsapp_rust::types::events::InboundMessage as WaInbound;
use whatsapp_rust::wacore::poll;
use whatsapp_rust::waproto::codec;

use super::chat_timers;
use super::map::protocol::{self, MessageItem, PollVote};
use super::map::{message, user_jid};
use super::off_thread::with_store;
use super::session::Inner;
use crate::store::whatsapp::WaMessageRow;
use crate::{NetworkEvent, StoredReceipt};

/// The crate's durability hook of one session's clients.
pub struct InboundHook {
    inner: Weak<Inner>,
}

impl InboundHook {
    /// The hook of the session `inner` belongs to.
    pub(super) fn new(inner: &Arc<Inner>) -> Self {
        Self {
            inner: Arc::downgrade(inner),
        }
    }

    /// Hands `batch` to the session's intake and returns once it is stored
    /// (`client` resolves lids and opens votes across the lid/phone switch
    /// when given). This is the hook's whole work; `Err` says why the batch
    /// must stay unacknowledged.
    pub async fn commit(&self, client: Option<&Client>, batch: &[WaInbound]) -> Result<(), String> {
        let inner = self
            .inner
            .upgrade()
            .ok_or_else(|| "the session is gone".to_owned())?;
        let events = prepare(&inner, client, batch, false).await?;
        if events.is_empty() {
            return Ok(());
        }
        let (receipt, stored) = StoredReceipt::new();
        // Through the lane, behind the events the crate read before it.
        inner.lane.news(NetworkEvent::Durable { events, receipt });
        stored
            .await
            .map_err(|_| "the session's intake stopped before storing the messages".to_owned())?
            // Not stored (a storage fault among them): nothing is
            // acknowledged, so the server delivers the batch again.
            .map_err(|not| not.to_string())
    }
}

#[async_trait]
impl InboundDurabilityHook for InboundHook {
    async fn on_messages(&self, client: Arc<Client>, batch: &[WaInbound]) -> anyhow::Result<()> {
        self.commit(Some(&client), batch)
            .await
            .map_err(anyhow::Error::msg)
    }
}

/// Delivers a batch the crate did not hand to the hook (it acknowledged it
/// on its own path): the same events, without a receipt.
pub(super) async fn deliver_unhooked(
    inner: &Arc<Inner>,
    client: &Client,
    batch: &[WaInbound],
    drained: bool,
) {
    match prepare(inner, Some(client), batch, drained).await {
        Ok(events) => {
            for event in events {
                if inner.sink.send(event).await.is_err() {
                    return;
                }
            }
        }
        Err(e) => {
            tracing::error!(session = %inner.id, error = %e, "could not keep inbound messages")
        }
    }
}

/// Keeps the batch's messages, classifies them, and returns the events for
/// intake.
async fn prepare(
    inner: &Arc<Inner>,
    client: Option<&Client>,
    batch: &[WaInbound],
    drained: bool,
) -> Result<Vec<NetworkEvent>, String> {
    let items = message::items(batch, drained);
    keep(inner, batch, &items).await?;
    chat_timers::remember(&inner.store, &inner.id, chat_timers::learned(batch)).await;
    let mut events = Vec::with_capacity(items.len());
    for item in items {
        match item {
            MessageItem::Message(mut m) => {
                if m.from_phone.is_none()
                    && let Some(client) = client
                {
                    m.from_phone = lid_phone(client, &m.from).await;
                }
                events.push(NetworkEvent::Message(m));
            }
            MessageItem::PollVote(vote) => {
                let selected = open_vote(inner, client, &vote).await;
                if let Err(why) = &selected {
                    tracing::debug!(session = %inner.id, poll = %vote.poll_id, %why, "a poll vote could not be opened");
                }
                events.push(protocol::poll_vote_event(&vote, selected));
            }
            MessageItem::Event(event) => events.push(event),
            MessageItem::Internal(kind) => inner.counters.unmapped(kind),
        }
    }
    Ok(events)
}

/// Keeps the messages with content as the crate's protobuf, for quotes of
/// them and votes on them.
async fn keep(
    inner: &Arc<Inner>,
    batch: &[WaInbound],
    items: &[MessageItem],
) -> Result<(), String> {
    let rows: Vec<WaMessageRow> = batch
        .iter()
        .zip(items)
        .filter(|(_, item)| matches!(item, MessageItem::Message(m) if !matches!(m.message_type.as_str(), "revoke" | "edit" | "reaction")))
        .map(|(m, _)| WaMessageRow {
            message_id: m.info.id.clone(),
            chat: user_jid(&m.info.source.chat),
            sender: user_jid(&m.info.source.sender),
            timestamp: m.info.timestamp.timestamp(),
            proto: codec::message_to_vec(&m.message),
        })
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    with_store(&inner.store, &inner.id, move |s, id| {
        s.put_wa_messages(id, &rows)
    })
    .await
    .map_err(|e| format!("could not keep inbound messages: {e}"))
}

/// The options a vote chose, opened with the poll's kept secret.
async fn open_vote(
    inner: &Arc<Inner>,
    client: Option<&Client>,
    vote: &PollVote,
) -> Result<Vec<String>, String> {
    let poll_id = vote.poll_id.clone();
    let row = with_store(&inner.store, &inner.id, move |s, id| {
        s.wa_message(id, &poll_id)
    })
    .await
    .map_err(|e| format!("could not read the poll: {e}"))?
    .ok_or_else(|| "the poll is not known to this session".to_owned())?;
    let poll_message = codec::message_decode(&row.proto)
        .map_err(|e| format!("the kept poll is unreadable: {e}"))?;
    let (_, options, secret) = protocol::poll_of(&poll_message)
        .ok_or_else(|| "the message voted on is not a poll with a secret".to_owned())?;
    let ciphertext = poll::PollVoteCiphertext {
        enc_payload: &vote.enc_payload,
        enc_iv: &vote.enc_iv,
    };
    let hashes = match client {
        Some(client) => {
            let creator: whatsapp_rust::Jid = row
                .sender
                .parse()
                .map_err(|e| format!("the poll's author is unreadable: {e}"))?;
            let voter: whatsapp_rust::Jid = vote
                .voter
                .parse()
                .map_err(|e| format!("the voter is unreadable: {e}"))?;
            client
                .polls()
                .decrypt_vote(ciphertext, &secret, &vote.poll_id, &creator, &voter)
                .await
                .map_err(|e| format!("the vote could not be opened: {e}"))?
        }
        None => poll::decrypt_poll_vote_with_secret(
            ciphertext,
            &secret,
            &vote.poll_id,
            &row.sender,
            &vote.voter,
        )
        .map_err(|e| format!("the vote could not be opened: {e}"))?,
    };
    Ok(protocol::selected_names(&options, &hashes))
}

/// The phone digits of an `@lid` sender from the client's lid/phone mapping.
async fn lid_phone(client: &Client, from: &str) -> Option<String> {
    let jid: whatsapp_rust::Jid = from.parse().ok()?;
    if !jid.is_lid() {
        return None;
    }
    match client.get_lid_pn_entry(&jid).await {
        Ok(Some(entry)) => Some(entry.phone_number.to_string()),
        _ => None,
    }
}
