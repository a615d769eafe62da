//! The pump of one session: what its lane ([`super::lane`]) holds, in
//! order, handed to the session's intake. A run's crate events are mapped
//! ([`super::map`]); the end of a run is a drop to report, the restart the
//! server asks for after pairing, or nothing (a stop the gateway asked for,
//! a connect that failed and said so). Message batches take the inbound
//! path ([`super::inbound`]); the hook's committed batches and the
//! backend's own news pass as they are.
//!
//! [`Forward`] is the crate-side handler that puts a run's events in the
//! lane; it never waits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use whatsapp_rust::Client;
use whatsapp_rust::types::events::{
    BatchOrigin, ConnectFailureReason, Event, EventHandler, StreamError,
};

use super::lane::{Item, Lane, LaneRx};
use super::map::{self, MapContext};
use super::off_thread::with_store;
use super::session::{Inner, Run, RunState, set, stopping};
use crate::NetworkEvent;

/// The crate-side handler: puts every event of its run in the session's
/// lane, in order.
pub(super) struct Forward {
    /// The run's shared state: an unlink is marked here as it is read, so
    /// the end of the run drops the device state even when the pump is still
    /// behind with the event.
    pub state: Arc<RunState>,
    /// The session's lane.
    pub lane: Lane,
    /// The run these events belong to, set once it is built (weakly: the
    /// run holds the client, which holds this handler).
    pub run: Arc<OnceLock<Weak<Run>>>,
    /// The client's auto-reconnect switch, set once the client is built.
    pub reconnect: Arc<OnceLock<Arc<AtomicBool>>>,
    /// Resolves when the server rate-limits the stream (stream error 429),
    /// which the crate handles without an event of its own; set once the
    /// client is built.
    pub rate_limit: Arc<std::sync::Mutex<Option<RateLimitWaiter>>>,
}

/// The crate's waiter for a `<stream:error code="429">`.
pub(super) type RateLimitWaiter =
    whatsapp_rust::futures::channel::oneshot::Receiver<Arc<whatsapp_rust::OwnedNodeRef>>;

impl EventHandler for Forward {
    fn handle_event(&self, event: Arc<Event>) {
        // Right after pairing the server closes the stream and the client
        // must log in again. The crate does that on the same client, which
        // remembers that the new device needs its first full app-state sync
        // (a fresh client would not, and a business account, whose name is
        // known at pairing, would then skip it); once logged in, drops are
        // the gateway's reconnect policy's again. This runs inside the
        // crate's dispatch, before it reads the close, so the switch is set
        // in time.
        match &*event {
            Event::PairSuccess(_) => self.switch_reconnect(true),
            // The run can end (and `wound_down` look at the flag) before the
            // pump reaches this event: mark the unlink now. A lock reported
            // as a logout keeps its credentials.
            Event::LoggedOut(e) if e.reason != ConnectFailureReason::AccountLocked => {
                set(&self.state.logged_out)
            }
            Event::Connected(_) => self.switch_reconnect(false),
            // The rate limit is told before the drop it caused, so the
            // gateway's reconnect policy counts its penalty first.
            Event::Disconnected(_) if self.rate_limited() => {
                let limited = StreamError::builder().code("429".to_owned()).build();
                self.forward(Arc::new(Event::StreamError(limited)));
            }
            _ => {}
        }
        self.forward(event);
    }
}

impl Forward {
    /// Puts `event` in the lane with its run. A run that is gone (its loop
    /// returned and the session let it go) has nobody to tell any more.
    fn forward(&self, event: Arc<Event>) {
        match self.run.get().and_then(Weak::upgrade) {
            Some(run) => self.lane.send(Item::Event(run, event)),
            None => tracing::debug!(event = ?event, "an event of a finished run is dropped"),
        }
    }

    /// Whether the server sent `<stream:error code="429">` on this run (the
    /// waiter is resolved inline as the stanza is read, so before the
    /// close that follows it).
    fn rate_limited(&self) -> bool {
        let mut waiter = self.rate_limit.lock().unwrap_or_else(|p| p.into_inner());
        match waiter.as_mut().map(|w| w.try_recv()) {
            Some(Ok(Some(_))) => {
                *waiter = None;
                true
            }
            _ => false,
        }
    }

    fn switch_reconnect(&self, on: bool) {
        if let Some(flag) = self.reconnect.get() {
            flag.store(on, Ordering::SeqCst);
        }
    }
}

/// Empties the session's lane into its intake until the session is gone.
pub(super) async fn run(inner: Weak<Inner>, mut rx: LaneRx) {
    while let Some(item) = rx.recv().await {
        let Some(inner) = inner.upgrade() else {
            return;
        };
        match item {
            Item::Event(run, ev) => {
                if matches!(*ev, Event::PairingCodeRefresh(_)) {
                    refresh_pair_code(&inner, &run.state, &run.client);
                }
                handle(&inner, &run.state, &run.client, &ev).await
            }
            Item::News(event) => {
                let _ = inner.sink.send(event).await;
            }
            Item::Ended(run) => ended(&inner, &run.state, &run.client).await,
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

async fn handle(inner: &Arc<Inner>, state: &RunState, client: &Arc<Client>, ev: &Event) {
    if let Event::Messages(batch) = ev {
        // A batch the hook committed is in the store already.
        if !batch.hook_committed {
            let drained = batch.origin == BatchOrigin::OfflineDrain;
            super::inbound::deliver_unhooked(inner, client, &batch.messages, drained).await;
        }
        return;
    }
    if let Event::HistorySync(chunk) = ev {
        let event = history_sync(inner, client, chunk).await;
        let _ = inner.sink.send(event).await;
        return;
    }
    if let Event::GroupUpdate(update) = ev
        && let Some(timer) = super::chat_timers::of_group_update(update)
    {
        super::chat_timers::remember(&inner.store, &inner.id, vec![timer]).await;
    }
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
        if let Some(kind) = map::unmapped_kind(ev) {
            inner.counters.unmapped(kind);
        }
        tracing::debug!(session = %inner.id, event = ?ev, "whatsapp event not forwarded");
    }
    for event in mapped {
        match &event {
            NetworkEvent::Paired(_) => set(&state.paired),
            // The device state is dropped once the crate has wound down
            // (`build.rs`), not now: it still writes while tearing down.
            NetworkEvent::LoggedOut { .. } => {
                set(&state.reported);
                set(&state.logged_out);
            }
            NetworkEvent::Disconnected { .. }
            | NetworkEvent::Replaced { .. }
            | NetworkEvent::Refused { .. }
            | NetworkEvent::AccountLocked { .. } => set(&state.reported),
            _ => {}
        }
        // After a stop the gateway asked for, connection news is its own to tell.
        let connection_news = !matches!(
            event,
            NetworkEvent::Message(_)
                | NetworkEvent::Other { .. }
                | NetworkEvent::Contacts(_)
                | NetworkEvent::Durable { .. }
        );
        if stopping(state) && connection_news {
            continue;
        }
        let logged_in = event == NetworkEvent::LoggedIn;
        if inner.sink.send(event).await.is_err() {
            return;
        }
        if logged_in {
            ask_timelock(inner, client);
        }
    }
}

/// Reads a history sync chunk on a blocking thread (inflating and decoding
/// megabytes is no work for an async worker) and keeps its messages there
/// too, for quotes, forwards and votes on what came before the link; the
/// progress event is returned. A failure to keep them is logged: the
/// history is a convenience, and the chunk is not delivered again.
async fn history_sync(
    inner: &Arc<Inner>,
    client: &Client,
    chunk: &whatsapp_rust::types::events::LazyHistorySync,
) -> NetworkEvent {
    let own = map::history::Own {
        pn: client.pn().map(|j| j.to_non_ad_string()),
        lid: client.lid().map(|j| j.to_non_ad_string()),
    };
    // A clone shares the compressed bytes.
    let (lazy, store, id) = (chunk.clone(), inner.store.clone(), inner.id.clone());
    let read = tokio::task::spawn_blocking(move || {
        let read = map::history::read(&lazy, &own);
        let event = map::history::history_sync_event(&lazy, read.counts);
        (event, store.put_wa_history(&id, read.rows))
    })
    .await;
    match read {
        Ok((event, kept)) => {
            match kept {
                Ok(n) => {
                    tracing::debug!(session = %inner.id, new = n, "kept the messages of a history chunk")
                }
                Err(e) => {
                    tracing::warn!(session = %inner.id, error = %e, "could not keep the messages of a history chunk; quotes of them go by id")
                }
            }
            event
        }
        Err(e) => {
            tracing::error!(session = %inner.id, error = %e, "reading a history chunk failed");
            map::history::history_sync_event(chunk, None)
        }
    }
}

/// Asks, once logged in, whether the account is under a reach-out
/// timelock, and tells the session (off the pump: the answer is an IQ
/// round trip). Not knowing is not news: the next refused send says.
fn ask_timelock(inner: &Arc<Inner>, client: &Arc<Client>) {
    let (inner, client) = (inner.clone(), client.clone());
    tokio::spawn(async move {
        match super::timelock::ask(&client, inner.config.send_ack_wait).await {
            Ok(lock) => {
                inner.lane.news(NetworkEvent::ReachOutTimelock {
                    active: lock.active,
                    until: lock.until,
                });
            }
            Err(why) => {
                tracing::debug!(session = %inner.id, error = %why, "the reach-out timelock state could not be read at login");
            }
        }
    });
}

/// The server closes the stream the moment the device answers
/// `pair-success`; when that close wins the race against the crate's
/// pairing handler, the run ends with the pairing stored in the device
/// state but never announced (no `PairSuccess` event, no reconnect). The
/// device state is the truth: a session without an account whose device
/// now has a phone number was paired, so it is announced here and the
/// restart logs it in.
async fn paired_unannounced(inner: &Arc<Inner>, state: &RunState, client: &Client) {
    let Some(pn) = client.pn() else {
        return;
    };
    let unpaired = with_store(&inner.store, &inner.id, |s, id| s.get_session(id))
        .await
        .ok()
        .flatten()
        .is_some_and(|r| r.account.is_none());
    if !unpaired {
        return;
    }
    let name = client.push_name();
    let account = crate::domain::session::Account {
        jid: map::user_jid(&pn),
        phone: map::jid_user(&pn),
        push_name: (!name.is_empty()).then_some(name),
    };
    tracing::info!(session = %inner.id, "the device was paired as the stream closed; announcing it");
    set(&state.paired);
    let _ = inner.sink.send(NetworkEvent::Paired(account)).await;
}

/// The crate's run loop has returned: an unlinked device's state goes now
/// that the crate has wound down and written its last (so nothing of it
/// comes back), then the run counts as ended.
pub(super) async fn wound_down(inner: &Arc<Inner>, state: &RunState) {
    if state.logged_out.load(Ordering::SeqCst) {
        let wiped = with_store(&inner.store, &inner.id, |s, id| s.wipe_whatsapp_state(id)).await;
        if let Err(e) = wiped {
            tracing::error!(session = %inner.id, error = %e, "could not drop the credentials of a logged-out device");
        }
    }
    state.ended.cancel();
}

async fn ended(inner: &Arc<Inner>, state: &RunState, client: &Client) {
    if stopping(state) {
        return;
    }
    if !state.paired.load(Ordering::SeqCst) && !state.reported.load(Ordering::SeqCst) {
        paired_unannounced(inner, state, client).await;
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
