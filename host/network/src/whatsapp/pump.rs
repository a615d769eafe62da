//! The pump of one run: the crate's events, in order, mapped ([`super::map`])
//! and handed to the session's intake; then the end of the run, which is a
//! drop to report, the restart the server asks for after pairing, or
//! nothing (a stop the gateway asked for, a connect that failed and said so).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::mpsc;
use whatsapp_rust::Client;
use whatsapp_rust::types::events::{Event, EventHandler};

use super::map::{self, MapContext};
use super::session::{Inner, RunState, set, stopping};
use crate::NetworkEvent;

/// What flows from the crate's event bus to the pump.
pub(super) enum Item {
    /// An event of the crate.
    Event(Arc<Event>),
    /// The crate's run loop returned.
    Ended,
}

/// The crate-side handler: hands every event to the pump, never blocking.
pub(super) struct Forward(pub mpsc::UnboundedSender<Item>);

impl EventHandler for Forward {
    fn handle_event(&self, event: Arc<Event>) {
        let _ = self.0.send(Item::Event(event));
    }
}

/// Runs until the run ends.
pub(super) async fn run(
    inner: Arc<Inner>,
    state: Arc<RunState>,
    client: Arc<Client>,
    mut rx: mpsc::UnboundedReceiver<Item>,
) {
    while let Some(item) = rx.recv().await {
        match item {
            Item::Event(ev) => {
                if matches!(*ev, Event::PairingCodeRefresh(_)) {
                    refresh_pair_code(&inner, &state, &client);
                }
                handle(&inner, &state, &client, &ev).await
            }
            Item::Ended => {
                ended(&inner, &state).await;
                return;
            }
        }
    }
}

/// The server invalidated the outstanding pair code: ask a new one for the
/// same phone, so the session shows a code that works (the crate answers
/// with a `PairingCode` event, or a `PairingCodeError` when it cannot).
fn refresh_pair_code(inner: &Arc<Inner>, state: &RunState, client: &Arc<Client>) {
    let phone = state
        .pair_phone
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let Some(phone) = phone else {
        tracing::warn!(session = %inner.id, "the pair code was invalidated, but no pair-code flow of this run is known");
        return;
    };
    let (client, id) = (client.clone(), inner.id.clone());
    tokio::spawn(async move {
        let options = whatsapp_rust::pair_code::PairCodeOptions {
            phone_number: phone,
            ..Default::default()
        };
        if let Err(e) = client.pair_with_code(options).await {
            tracing::warn!(session = %id, error = %e, "could not renew the invalidated pair code");
        }
    });
}

async fn handle(inner: &Arc<Inner>, state: &RunState, client: &Client, ev: &Event) {
    let mut own_users = Vec::new();
    own_users.extend(client.pn().map(|j| j.user.to_string()));
    own_users.extend(client.lid().map(|j| j.user.to_string()));
    let cx = MapContext {
        now: crate::domain::time::unix_now(),
        own_users,
        push_name: Some(client.push_name()),
    };
    let mapped = map::map_event(ev, &cx);
    if mapped.is_empty() {
        tracing::debug!(session = %inner.id, event = ?std::mem::discriminant(ev), "whatsapp event not forwarded");
    }
    for mut event in mapped {
        match &mut event {
            NetworkEvent::Message(m) if m.from_phone.is_none() => {
                m.from_phone = lid_phone(client, &m.from).await;
            }
            NetworkEvent::Paired(_) => set(&state.paired),
            NetworkEvent::LoggedOut { .. } => {
                set(&state.reported);
                let (store, id) = (inner.store.clone(), inner.id.clone());
                let wiped =
                    tokio::task::spawn_blocking(move || store.wipe_whatsapp_state(&id)).await;
                if !matches!(wiped, Ok(Ok(_))) {
                    tracing::error!(session = %inner.id, "could not drop the credentials of a logged-out device");
                }
            }
            NetworkEvent::Disconnected { .. }
            | NetworkEvent::Replaced { .. }
            | NetworkEvent::AccountLocked { .. } => set(&state.reported),
            _ => {}
        }
        // After a stop the gateway asked for, connection news is its own to tell.
        let connection_news = !matches!(
            event,
            NetworkEvent::Message(_) | NetworkEvent::Other { .. } | NetworkEvent::Contacts(_)
        );
        if stopping(state) && connection_news {
            continue;
        }
        if inner.sink.send(event).await.is_err() {
            return;
        }
    }
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

async fn ended(inner: &Arc<Inner>, state: &RunState) {
    if stopping(state) {
        return;
    }
    if state.paired.load(Ordering::SeqCst) && !state.reported.load(Ordering::SeqCst) {
        // The server closes the stream right after pairing; log in at once.
        tracing::info!(session = %inner.id, "paired; reconnecting to log in");
        let _ = inner.restart.send(());
        return;
    }
    if state.socket_up.load(Ordering::SeqCst) && !state.reported.load(Ordering::SeqCst) {
        let reason = state
            .last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_else(|| "the connection to WhatsApp closed".into());
        let _ = inner.sink.send(NetworkEvent::Disconnected { reason }).await;
    }
}
