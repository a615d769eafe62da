//! The pump driven with the crate's events in the order a session lives
//! them: a pair code and its renewal, pairing and the login after it, a
//! stream taken over by another client, and an unlink from the phone, with
//! the gateway's events and the stored device state checked after each.

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
use super::pump::{self, Forward, Item};
use super::session::{RunState, WaSession};
use super::{WhatsAppConfig, WhatsAppCounters};
use crate::NetworkEvent;
use crate::domain::session::Account;
use crate::store::Store;
use crate::store::whatsapp::WaStore;

/// A crate client on the session's device state, built but never started.
async fn offline_client(backend: Arc<WaStore>) -> Arc<Client> {
    let bot = Bot::builder()
        .with_backend_arc(backend)
        .with_transport_factory(TokioWebSocketTransportFactory::new())
        .with_http_client(ReqwestHttp::new(Duration::from_secs(1)).unwrap())
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

fn event(e: Event) -> Item {
    Item::Event(Arc::new(e))
}

fn jid(s: &str) -> whatsapp_rust::Jid {
    s.parse().unwrap()
}

#[tokio::test]
async fn the_pump_follows_a_session_from_pair_code_to_unlink() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (sink, mut events) = mpsc::channel(64);
    let session = WaSession::new(
        "wa".into(),
        store.clone(),
        crate::whatsapp::test_media_store(dir.path()),
        WhatsAppConfig::default(),
        WhatsAppCounters::default(),
        sink,
    );
    let backend = Arc::new(WaStore::new(store.clone(), "wa"));
    let client = offline_client(backend.clone()).await;
    let state = Arc::new(RunState::default());
    let (tx, rx) = mpsc::channel(pump::PUMP_CAPACITY);
    let pumping = tokio::spawn(pump::run(
        session.inner.clone(),
        state.clone(),
        client.clone(),
        rx,
    ));

    // A pair code, then the server invalidates it: the pump asks a new one
    // for the same phone (which fails here, offline, and says so in the
    // log), and the code the crate then announces replaces the old one.
    let code = |c: &str| {
        event(Event::PairingCode(
            PairingCode::builder()
                .code(c.to_string())
                .timeout(Duration::from_secs(180))
                .build(),
        ))
    };
    *state.pair_phone.lock().unwrap() = Some("15550001111".into());
    tx.send(code("AAAA-AAAA")).await.unwrap();
    assert_eq!(
        next(&mut events).await,
        NetworkEvent::PairCode {
            code: "AAAA-AAAA".into()
        }
    );
    tx.send(event(Event::PairingCodeRefresh(
        PairingCodeRefresh::builder().force_manual(false).build(),
    )))
    .await
    .unwrap();
    nothing_more(&mut events).await;
    tx.send(code("BBBB-BBBB")).await.unwrap();
    assert_eq!(
        next(&mut events).await,
        NetworkEvent::PairCode {
            code: "BBBB-BBBB".into()
        }
    );

    // Paired: the account is announced, and the login that follows on the
    // same client is the next `LoggedIn`.
    tx.send(event(Event::PairSuccess(
        PairSuccess::builder()
            .id(jid("15550001111:12@s.whatsapp.net"))
            .lid(jid("99887766:12@lid"))
            .business_name("ACME Bakery".to_string())
            .platform("smba".to_string())
            .build(),
    )))
    .await
    .unwrap();
    let NetworkEvent::Paired(Account { jid, phone, .. }) = next(&mut events).await else {
        panic!("not paired")
    };
    assert_eq!(
        (jid.as_str(), phone.as_str()),
        ("15550001111@s.whatsapp.net", "15550001111")
    );
    assert!(state.paired.load(Ordering::SeqCst));
    tx.send(event(Event::Connected(Connected::builder().build())))
        .await
        .unwrap();
    assert_eq!(next(&mut events).await, NetworkEvent::LoggedIn);

    // Another client takes the stream over: reported as replaced, once.
    tx.send(event(Event::StreamReplaced(
        StreamReplaced::builder().build(),
    )))
    .await
    .unwrap();
    assert!(matches!(
        next(&mut events).await,
        NetworkEvent::Replaced { .. }
    ));
    assert!(state.reported.load(Ordering::SeqCst));

    // Unlinked from the phone: reported at once; the device state stays
    // until the crate has wound down, then goes.
    backend.create().await.unwrap();
    assert!(backend.exists().await.unwrap());
    tx.send(event(Event::LoggedOut(
        LoggedOut::builder()
            .on_connect(false)
            .reason(ConnectFailureReason::LoggedOut)
            .build(),
    )))
    .await
    .unwrap();
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
    tx.send(Item::Ended).await.unwrap();
    pumping.await.unwrap();
    nothing_more(&mut events).await;
}

#[test]
fn pairing_lets_the_crate_log_in_again_on_the_same_client_until_it_is_connected() {
    let (tx, _rx) = mpsc::channel(4);
    let flag = Arc::new(AtomicBool::new(false));
    let forward = Forward {
        state: Default::default(),
        tx,
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
    let (tx, _rx) = mpsc::channel(4);
    let state: Arc<RunState> = Default::default();
    let forward = Forward {
        state: state.clone(),
        tx,
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
