//! The pump driven with the crate's events in the order a session lives
//! them: a pair code and its renewal, pairing and the login after it, a
//! stream taken over by another client, and an unlink from the phone, with
//! the gateway's events and the stored device state checked after each;
//! and the lane's promises: the crate never waits, a committed batch never
//! overtakes what was read before it, and a reader of the client never
//! waits for a connect.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;
use whatsapp_rust::bot::Bot;
use whatsapp_rust::store::traits::DeviceStore;
use whatsapp_rust::transport::TokioWebSocketTransportFactory;
use whatsapp_rust::types::events::{
    ConnectFailureReason, Connected, Event, EventHandler, LoggedOut, PairSuccess, PairingCode,
    PairingCodeRefresh, StreamReplaced,
};
use whatsapp_rust::{Client, TokioRuntime};

use super::http::ReqwestHttp;
use super::lane::Item;
use super::pump::{self, Forward};
use super::session::{Run, RunState, WaSession};
use super::{WhatsAppConfig, WhatsAppCounters};
use crate::NetworkEvent;
use crate::domain::session::Account;
use crate::store::Store;
use crate::store::whatsapp::WaStore;

/// A crate client on the session's device state, built but never started.
pub(super) async fn offline_client(backend: Arc<WaStore>) -> Arc<Client> {
    let bot = Bot::builder()
        .with_backend_arc(backend)
        .with_transport_factory(TokioWebSocketTransportFactory::new())
        .with_http_client(ReqwestHttp::via(Duration::from_secs(1), None).unwrap())
        .with_runtime(TokioRuntime)
        .build()
        .await
        .unwrap();
    bot.client()
}

async fn next(rx: &mut mpsc::Receiver<NetworkEvent>) -> NetworkEvent {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("an event in time")
        .expect("the sink is open")
}

async fn nothing_more(rx: &mut mpsc::Receiver<NetworkEvent>) {
    let more = tokio::time::timeout(Duration::from_millis(100), rx.recv()).await;
    assert!(more.is_err(), "no further event: {more:?}");
}

/// Puts a crate event of `run` in the session's lane, as `Forward` does.
fn push(session: &WaSession, run: &Arc<Run>, e: Event) {
    session
        .inner
        .lane
        .send(Item::Event(run.clone(), Arc::new(e)));
}

/// A session on a fresh store whose events arrive on the returned receiver
/// (of room `room`).
fn session_with_sink(
    dir: &std::path::Path,
    room: usize,
) -> (WaSession, Store, mpsc::Receiver<NetworkEvent>) {
    let store = Store::open(dir).unwrap();
    let (sink, events) = mpsc::channel(room);
    let session = WaSession::new(
        "wa".into(),
        store.clone(),
        crate::whatsapp::test_media_store(dir),
        WhatsAppConfig::default(),
        WhatsAppCounters::default(),
        sink,
    );
    (session, store, events)
}

/// A handler of `run` as the build gives its client.
fn forward_of(session: &WaSession, run: &Arc<Run>) -> Forward {
    Forward {
        state: run.state.clone(),
        lane: session.inner.lane.clone(),
        run: Arc::new(std::sync::OnceLock::from(Arc::downgrade(run))),
        reconnect: Default::default(),
        rate_limit: Default::default(),
    }
}

fn jid(s: &str) -> whatsapp_rust::Jid {
    s.parse().unwrap()
}

#[tokio::test]
async fn the_pump_follows_a_session_from_pair_code_to_unlink() {
    let dir = tempfile::tempdir().unwrap();
    let (session, store, mut events) = session_with_sink(dir.path(), 64);
    let backend = Arc::new(WaStore::new(store.clone(), "wa"));
    let client = offline_client(backend.clone()).await;
    let state = Arc::new(RunState::default());
    let run = Arc::new(Run {
        client,
        state: state.clone(),
        versions: backend.versions_written(),
    });

    // A pair code, then the server invalidates it: the pump asks a new one
    // for the same phone (which fails here, offline, and says so in the
    // log), and the code the crate then announces replaces the old one.
    let code = |c: &str| {
        Event::PairingCode(
            PairingCode::builder()
                .code(c.to_string())
                .timeout(Duration::from_secs(180))
                .build(),
        )
    };
    *state.pair_phone.lock().unwrap() = Some("15550001111".into());
    push(&session, &run, code("AAAA-AAAA"));
    assert_eq!(
        next(&mut events).await,
        NetworkEvent::PairCode {
            code: "AAAA-AAAA".into()
        }
    );
    push(
        &session,
        &run,
        Event::PairingCodeRefresh(PairingCodeRefresh::builder().force_manual(false).build()),
    );
    nothing_more(&mut events).await;
    push(&session, &run, code("BBBB-BBBB"));
    assert_eq!(
        next(&mut events).await,
        NetworkEvent::PairCode {
            code: "BBBB-BBBB".into()
        }
    );

    // Paired: the account is announced, and the login that follows on the
    // same client is the next `LoggedIn`.
    push(
        &session,
        &run,
        Event::PairSuccess(
            PairSuccess::builder()
                .id(jid("15550001111:12@s.whatsapp.net"))
                .lid(jid("99887766:12@lid"))
                .business_name("ACME Bakery".to_string())
                .platform("smba".to_string())
                .build(),
        ),
    );
    let NetworkEvent::Paired(Account { jid, phone, .. }) = next(&mut events).await else {
        panic!("not paired")
    };
    assert_eq!(
        (jid.as_str(), phone.as_str()),
        ("15550001111@s.whatsapp.net", "15550001111")
    );
    assert!(state.paired.load(Ordering::SeqCst));
    push(
        &session,
        &run,
        Event::Connected(Connected::builder().build()),
    );
    assert_eq!(next(&mut events).await, NetworkEvent::LoggedIn);

    // Another client takes the stream over: reported as replaced, once.
    push(
        &session,
        &run,
        Event::StreamReplaced(StreamReplaced::builder().build()),
    );
    assert!(matches!(
        next(&mut events).await,
        NetworkEvent::Replaced { .. }
    ));
    assert!(state.reported.load(Ordering::SeqCst));

    // Unlinked from the phone: reported at once; the device state stays
    // until the crate has wound down, then goes.
    backend.create().await.unwrap();
    assert!(backend.exists().await.unwrap());
    push(
        &session,
        &run,
        Event::LoggedOut(
            LoggedOut::builder()
                .on_connect(false)
                .reason(ConnectFailureReason::LoggedOut)
                .build(),
        ),
    );
    assert!(matches!(
        next(&mut events).await,
        NetworkEvent::LoggedOut { .. }
    ));
    assert!(
        backend.exists().await.unwrap(),
        "kept while the crate tears down"
    );
    pump::wound_down(&session.inner, &state).await;
    assert!(!backend.exists().await.unwrap(), "dropped once it has");
    assert!(state.ended.is_cancelled());

    // The run ends without a drop to report (the logout was reported) and
    // without the post-pairing restart.
    session.inner.lane.send(Item::Ended(run));
    nothing_more(&mut events).await;
}

#[test]
fn pairing_lets_the_crate_log_in_again_on_the_same_client_until_it_is_connected() {
    let (lane, _rx) = super::lane::Lane::new(Default::default());
    let flag = Arc::new(AtomicBool::new(false));
    let forward = Forward {
        state: Default::default(),
        lane,
        run: Default::default(),
        reconnect: Arc::new(std::sync::OnceLock::from(flag.clone())),
        rate_limit: Default::default(),
    };
    forward.handle_event(Arc::new(Event::PairSuccess(
        PairSuccess::builder()
            .id(jid("15550001111:12@s.whatsapp.net"))
            .lid(jid("99887766:12@lid"))
            .business_name(String::new())
            .platform("android".to_string())
            .build(),
    )));
    assert!(flag.load(Ordering::SeqCst), "the crate reconnects itself");
    forward.handle_event(Arc::new(Event::Connected(Connected::builder().build())));
    assert!(
        !flag.load(Ordering::SeqCst),
        "later drops are the gateway's to handle"
    );
}

#[test]
fn an_unlink_is_marked_as_it_is_read_not_when_the_pump_reaches_it() {
    use whatsapp_rust::types::events::{ConnectFailureReason, LoggedOut};
    // No pump reads the events: the run's state knows at once anyway.
    let (lane, _rx) = super::lane::Lane::new(Default::default());
    let state: Arc<RunState> = Default::default();
    let forward = Forward {
        state: state.clone(),
        lane,
        run: Default::default(),
        reconnect: Default::default(),
        rate_limit: Default::default(),
    };
    let locked = LoggedOut::builder()
        .on_connect(true)
        .reason(ConnectFailureReason::AccountLocked)
        .build();
    forward.handle_event(Arc::new(Event::LoggedOut(locked)));
    assert!(
        !state.logged_out.load(Ordering::SeqCst),
        "a lock keeps its credentials"
    );
    let unlinked = LoggedOut::builder()
        .on_connect(false)
        .reason(ConnectFailureReason::LoggedOut)
        .build();
    forward.handle_event(Arc::new(Event::LoggedOut(unlinked)));
    assert!(state.logged_out.load(Ordering::SeqCst));
}

/// A pair-code event with this code (it maps to `PairCode`, and nothing
/// else happens on the way).
fn pair_code(code: &str) -> Arc<Event> {
    Arc::new(Event::PairingCode(
        PairingCode::builder()
            .code(code.to_string())
            .timeout(Duration::from_secs(180))
            .build(),
    ))
}

async fn offline_run(store: &Store) -> Arc<Run> {
    let backend = Arc::new(WaStore::new(store.clone(), "wa"));
    let client = offline_client(backend.clone()).await;
    Arc::new(Run {
        client,
        state: Default::default(),
        versions: backend.versions_written(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crates_dispatch_never_waits_for_an_intake_that_is_behind() {
    let dir = tempfile::tempdir().unwrap();
    // The intake takes one event and reads no more for now.
    let (session, store, mut events) = session_with_sink(dir.path(), 1);
    let run = offline_run(&store).await;
    let forward = forward_of(&session, &run);
    // Far more than the intake holds, handed over on a thread of their own
    // as the crate's socket reader would: every handoff returns, so the
    // reader would go on answering pings and IQs.
    const BURST: usize = 5_000;
    let handing = tokio::task::spawn_blocking(move || {
        for i in 0..BURST {
            forward.handle_event(pair_code(&format!("{i:04}")));
        }
    });
    tokio::time::timeout(Duration::from_secs(60), handing)
        .await
        .expect("the dispatch never blocks on a full intake")
        .unwrap();
    assert!(
        session.inner.counters.queued().get() > 0,
        "the rest waits in the lane"
    );
    for i in 0..BURST {
        let code = format!("{i:04}");
        assert_eq!(next(&mut events).await, NetworkEvent::PairCode { code });
    }
    assert_eq!(session.inner.counters.queued().get(), 0);
    nothing_more(&mut events).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_batch_reaches_the_intake_after_every_event_read_before_it() {
    use whatsapp_rust::types::events::InboundMessage as WaInbound;
    use whatsapp_rust::types::message::{MessageInfo, MessageSource};
    use whatsapp_rust::waproto::whatsapp as wa;

    let dir = tempfile::tempdir().unwrap();
    let (session, store, mut events) = session_with_sink(dir.path(), 1);
    let run = offline_run(&store).await;
    let forward = forward_of(&session, &run);
    // Three events read while the intake is busy, then a message batch the
    // hook commits.
    for code in ["A", "B", "C"] {
        forward.handle_event(pair_code(code));
    }
    let info = MessageInfo {
        source: MessageSource {
            chat: jid("4915112345678@s.whatsapp.net"),
            sender: jid("4915112345678:4@s.whatsapp.net"),
            ..Default::default()
        },
        id: "M1".into(),
        timestamp: whatsapp_rust::chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
        ..Default::default()
    };
    let message = wa::Message {
        conversation: Some("hello".into()),
        ..Default::default()
    };
    let batch = [WaInbound::builder()
        .message(Arc::new(message))
        .info(Arc::new(info))
        .build()];
    let hook = session.inbound_hook();
    let committing = tokio::spawn(async move { hook.commit(None, &batch).await });
    for code in ["A", "B", "C"] {
        let code = code.to_owned();
        assert_eq!(next(&mut events).await, NetworkEvent::PairCode { code });
    }
    let NetworkEvent::Durable {
        events: batch,
        receipt,
    } = next(&mut events).await
    else {
        panic!("the batch comes last")
    };
    assert!(matches!(&batch[..], [NetworkEvent::Message(m)] if m.message_id == "M1"));
    assert!(!committing.is_finished(), "the hook waits for the intake");
    receipt.stored();
    assert_eq!(committing.await.unwrap(), Ok(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_of_the_client_never_waits_for_a_connect_in_progress() {
    // A server that accepts and never answers: the connect waits for its
    // socket, while the intake is full and reads nothing.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (sink, mut events) = mpsc::channel(1);
    sink.send(NetworkEvent::Connecting).await.unwrap();
    let config = WhatsAppConfig {
        ws_url: Some(format!("ws://127.0.0.1:{port}/ws/chat")),
        version: Some((2, 3000, 1)),
        ..WhatsAppConfig::default()
    };
    let session = WaSession::new(
        "wa".into(),
        store,
        crate::whatsapp::test_media_store(dir.path()),
        config,
        WhatsAppCounters::default(),
        sink,
    );
    let inner = session.inner.clone();
    let connecting = tokio::spawn(async move { inner.connect().await });
    let (_held, _) = tokio::time::timeout(Duration::from_secs(30), silent.accept())
        .await
        .expect("the connect reaches the server")
        .unwrap();
    let read = tokio::time::timeout(Duration::from_secs(10), session.client())
        .await
        .expect("the client is read while the connect waits");
    assert!(matches!(read, Err(crate::NetworkError::NotConnected)));
    assert!(!connecting.is_finished());
    // The intake catches up: the attempt was told in order.
    assert_eq!(next(&mut events).await, NetworkEvent::Connecting);
    assert_eq!(next(&mut events).await, NetworkEvent::Connecting);
    connecting.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_chunk_is_reported_and_its_messages_are_kept_for_quotes() {
    use super::map::tests_events_sync::{chunk, said, text};
    use whatsapp_rust::types::events::LazyHistorySync;
    use whatsapp_rust::waproto::whatsapp as wa;

    let dir = tempfile::tempdir().unwrap();
    let (session, store, mut events) = session_with_sink(dir.path(), 8);
    let run = offline_run(&store).await;
    let conversation = wa::Conversation {
        id: "4915112345678@s.whatsapp.net".into(),
        messages: vec![said("OLD1", false, None, text("from before the link"))],
        ..Default::default()
    };
    let (compressed, size) = chunk(vec![conversation]);
    let lazy = LazyHistorySync::new(compressed, size, 2, Some(1), Some(100));
    push(&session, &run, Event::HistorySync(Box::new(lazy)));
    let NetworkEvent::Other { data, .. } = next(&mut events).await else {
        panic!("a history_sync event")
    };
    assert_eq!(
        (data["conversations"].as_u64(), data["messages"].as_u64()),
        (Some(1), Some(1))
    );
    let kept = store.wa_message("wa", "OLD1").unwrap().expect("kept");
    assert_eq!(kept.sender, "4915112345678@s.whatsapp.net");
}
