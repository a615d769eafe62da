//! Replace in place under load: inbound sim messages flow in several lanes
//! while a filter plugin's component (`PUT /api/v1/plugins/{id}`) or its
//! binding's configuration is replaced, and sends run in several lanes while
//! a message-transform plugin's component is replaced. Every message reaches
//! the real webhook receiver (or the sim network) exactly once, each one
//! handled by exactly one version, and every message sent after the swap
//! sees the new version.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::{Value, json};
use switchboard_tests::plugins::{self, FOOTER, KEYWORD_ROUTER, REDACTOR};
use switchboard_tests::receiver::{TestReceiver, inbound, message_hook, wait_until_idle};
use switchboard_tests::{TestServer, eventually};

use crate::plugins_support::{bind, id, plugin, replace, upload};

/// Messages in the stream, at least.
const N: usize = 300;
/// Messages whose injection starts after the swap returned, at least.
const AFTER_SWAP: usize = 30;
/// The swap starts once this many messages were delivered.
const SWAP_AT: usize = N / 5;
/// A bound on the stream, should the swap never return.
const MAX: usize = 20_000;
/// The phone number in every message's text (the redactor masks it).
const PHONE: &str = "4915112345678";

/// Which version of the filter an event went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    Old,
    New,
}

/// What the lanes share.
#[derive(Default)]
struct Stream {
    next: AtomicUsize,
    swapped: AtomicBool,
    after_swap: AtomicUsize,
    /// Every injected message id, and whether the swap had returned before
    /// its injection started.
    sent: Mutex<Vec<(String, bool)>>,
}

/// One lane: injects messages one after another until the stream has its
/// `N` messages and `AFTER_SWAP` of them were sent after the swap.
async fn lane(server: &TestServer, stream: &Stream) {
    loop {
        let after = stream.swapped.load(Ordering::SeqCst);
        let i = stream.next.fetch_add(1, Ordering::SeqCst);
        if i >= N && stream.after_swap.load(Ordering::SeqCst) >= AFTER_SWAP {
            return;
        }
        assert!(i < MAX, "the swap never returned");
        let id = inbound(server, "s", &format!("message {i}: call me on {PHONE}")).await;
        stream.sent.lock().unwrap().push((id, after));
        if after {
            stream.after_swap.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Streams messages in four lanes; once `SWAP_AT` were delivered, runs
/// `swap` while the lanes go on. Then checks at the receiver that every
/// message arrived exactly once, each classified by `version` as having
/// passed one version, the new one for all sent after the swap.
async fn stream_through_swap(
    server: &TestServer,
    receiver: &TestReceiver,
    swap: impl Future<Output = ()>,
    version: impl Fn(&Value) -> Version,
) {
    let stream = Stream::default();
    let swapper = async {
        receiver.wait_for(SWAP_AT).await;
        swap.await;
        stream.swapped.store(true, Ordering::SeqCst);
    };
    tokio::join!(
        lane(server, &stream),
        lane(server, &stream),
        lane(server, &stream),
        lane(server, &stream),
        swapper,
    );
    let sent = stream.sent.into_inner().unwrap();
    assert!(sent.len() >= N, "{} messages sent", sent.len());
    receiver.wait_for(sent.len()).await;
    // Nothing pending: no duplicate of any message is still on its way.
    wait_until_idle(server, "s", &receiver.url()).await;

    let mut delivered: HashMap<String, Value> = HashMap::new();
    for r in receiver.requests() {
        let data = r.json()["data"].clone();
        let id = data["message_id"]
            .as_str()
            .expect("a message id")
            .to_owned();
        if let Some(first) = delivered.insert(id.clone(), data.clone()) {
            panic!("message {id} was delivered twice: {first} and {data}");
        }
    }
    assert_eq!(delivered.len(), sent.len(), "nothing extra was delivered");
    let (mut old, mut new) = (0, 0);
    for (id, after_swap) in &sent {
        let data = delivered
            .get(id)
            .unwrap_or_else(|| panic!("message {id} was lost"));
        match version(data) {
            Version::Old => {
                assert!(
                    !after_swap,
                    "sent after the swap, filtered by the old version: {data}"
                );
                old += 1;
            }
            Version::New => new += 1,
        }
    }
    assert!(old >= SWAP_AT, "{old} messages through the old version");
    assert!(new >= AFTER_SWAP, "{new} messages through the new version");
}

/// The text as sent, and nothing masked: no filter changed it.
fn untouched(data: &Value) -> bool {
    let text = data["text"].as_str().unwrap_or_default();
    text.ends_with(&format!("call me on {PHONE}")) && data.to_string().contains("15550001111")
}

/// Every number masked with `mask`, none left readable.
fn masked_with(data: &Value, mask: char) -> bool {
    let text = data["text"].as_str().unwrap_or_default();
    let all = data.to_string();
    text.ends_with(&format!(
        "call me on {}",
        mask.to_string().repeat(PHONE.len())
    )) && !all.contains(PHONE)
        && !all.contains("15550001111")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacing_a_filter_component_under_a_stream_of_events_loses_and_duplicates_nothing() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    // Version A: a keyword router without keywords keeps every event as it is.
    let p = upload(&server, KEYWORD_ROUTER).await;
    let b = bind(&server, &p, "event_filter", json!({})).await;

    let swap = async {
        // Version B: the redactor, which masks every phone number.
        let v = replace(&server, &p, plugins::bytes(REDACTOR))
            .await
            .expect(200);
        assert_eq!(v["id"], p["id"], "{v}");
        assert_ne!(v["sha256"], p["sha256"], "{v}");
    };
    stream_through_swap(&server, &receiver, swap, |d| {
        if untouched(d) {
            Version::Old
        } else if masked_with(d, '*') {
            Version::New
        } else {
            panic!("an event half filtered, or by neither version: {d}")
        }
    })
    .await;

    let after = plugin(&server, &p).await;
    assert_eq!(after["status"], "active", "{after}");
    assert_eq!(after["counters"]["traps"], 0, "{after}");
    let bindings = server.get("/api/v1/plugins/bindings").await.expect(200);
    assert_eq!(bindings["bindings"][0]["id"], b["id"], "the binding stays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rebinding_with_a_new_configuration_under_a_stream_of_events_loses_and_duplicates_nothing()
{
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let p = upload(&server, REDACTOR).await;
    let b = bind(
        &server,
        &p,
        "event_filter",
        json!({ "config": { "mask": "*" } }),
    )
    .await;

    let swap = async {
        let body = json!({
            "plugin_id": p["id"],
            "hook": "event_filter",
            "config": { "mask": "#" },
        });
        let path = format!("/api/v1/plugins/bindings/{}", id(&b));
        let v = server
            .call(reqwest::Method::PUT, &path, Some(body))
            .await
            .expect(200);
        assert_eq!(v["config"], json!({ "mask": "#" }), "{v}");
    };
    stream_through_swap(&server, &receiver, swap, |d| {
        if masked_with(d, '*') {
            Version::Old
        } else if masked_with(d, '#') {
            Version::New
        } else {
            panic!("an event half filtered, or by neither configuration: {d}")
        }
    })
    .await;
    let after = plugin(&server, &p).await;
    assert_eq!(after["status"], "active", "{after}");
    assert_eq!(after["counters"]["traps"], 0, "{after}");
}

/// Sends in the transform stream, at least.
const SENDS: usize = 120;
/// The transform swap starts once this many sends were answered.
const SENDS_BEFORE_SWAP: usize = SENDS / 5;
/// The footer the transform binding appends.
const SIGNATURE: &str = "-- swapped";

/// A second version of the footer transform whose output differs from the
/// first: the same component with its default separator `"\r\n"` instead of
/// a blank line. The footer is the only example transform, and a swap is
/// seen only if the two versions sign a text differently; the release build
/// stores the default separator with one `i32.const 2570` (`"\n\n"` as a
/// little-endian u16) followed by `i32.store16`, so changing that constant to
/// 2573 (`"\r\n"`) changes nothing else. Should a rebuild compile it another
/// way, this fails instead of testing two identical versions.
fn footer_with_crlf_separator() -> Vec<u8> {
    let mut bytes = plugins::bytes(FOOTER);
    const BLANK_LINE: [u8; 4] = [0x41, 0x8a, 0x14, 0x3b];
    let at: Vec<usize> = bytes
        .windows(BLANK_LINE.len())
        .enumerate()
        .filter(|(_, w)| *w == BLANK_LINE)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        at.len(),
        1,
        "the footer's default separator is no longer one `i32.const 2570; i32.store16`"
    );
    bytes[at[0] + 1] = 0x8d;
    bytes
}

/// What the sends of the transform stream share.
#[derive(Default)]
struct Sends {
    next: AtomicUsize,
    swapped: AtomicBool,
    after_swap: AtomicUsize,
    /// Every answered send: its message id, its index, and whether the swap
    /// had returned before it started.
    answered: Mutex<Vec<(String, usize, bool)>>,
}

/// One lane: sends texts one after another until the stream has `SENDS`
/// and `AFTER_SWAP` of them started after the swap returned.
async fn send_lane(server: &TestServer, sends: &Sends) {
    loop {
        let after = sends.swapped.load(Ordering::SeqCst);
        let i = sends.next.fetch_add(1, Ordering::SeqCst);
        if i >= SENDS && sends.after_swap.load(Ordering::SeqCst) >= AFTER_SWAP {
            return;
        }
        assert!(i < MAX, "the swap never returned");
        let answer = server
            .post(
                "/api/v1/sessions/s/messages/text",
                json!({ "to": "+15550002222", "text": format!("send {i}") }),
            )
            .await
            .expect(200);
        let id = answer["message_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no message id: {answer}"))
            .to_owned();
        sends.answered.lock().unwrap().push((id, i, after));
        if after {
            sends.after_swap.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacing_a_transform_component_under_concurrent_sends_signs_each_send_with_one_version() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let p = upload(&server, FOOTER).await;
    bind(
        &server,
        &p,
        "message_transform",
        json!({ "config": { "footer": SIGNATURE } }),
    )
    .await;
    let new_version = footer_with_crlf_separator();

    let sends = Sends::default();
    let swapper = async {
        eventually("sends answered before the swap", || async {
            (sends.answered.lock().unwrap().len() >= SENDS_BEFORE_SWAP).then_some(())
        })
        .await;
        let v = replace(&server, &p, new_version).await.expect(200);
        assert_eq!(v["id"], p["id"], "{v}");
        assert_ne!(v["sha256"], p["sha256"], "{v}");
        sends.swapped.store(true, Ordering::SeqCst);
    };
    tokio::join!(
        send_lane(&server, &sends),
        send_lane(&server, &sends),
        send_lane(&server, &sends),
        send_lane(&server, &sends),
        swapper,
    );
    let answered = sends.answered.into_inner().unwrap();
    assert!(answered.len() >= SENDS, "{} sends answered", answered.len());

    // What the network got: each answered send once, signed by one version.
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    let outbox = outbox["messages"].as_array().expect("messages");
    let mut got: HashMap<String, String> = HashMap::new();
    for m in outbox {
        let id = m["message_id"].as_str().expect("a message id").to_owned();
        let text = m["body"]["text"].as_str().expect("a text").to_owned();
        if let Some(first) = got.insert(id.clone(), text.clone()) {
            panic!("message {id} reached the network twice: {first:?} and {text:?}");
        }
    }
    assert_eq!(got.len(), answered.len(), "nothing extra was sent");
    let (mut old, mut new) = (0, 0);
    for (id, i, after_swap) in &answered {
        let text = got
            .get(id)
            .unwrap_or_else(|| panic!("send {i} ({id}) was answered but never sent"));
        if *text == format!("send {i}\n\n{SIGNATURE}") {
            assert!(
                !after_swap,
                "send {i}, started after the swap, was signed by the old version"
            );
            old += 1;
        } else if *text == format!("send {i}\r\n{SIGNATURE}") {
            new += 1;
        } else {
            panic!("send {i} signed by neither version, or by both: {text:?}");
        }
    }
    assert!(
        old >= SENDS_BEFORE_SWAP,
        "{old} sends through the old version"
    );
    assert!(new >= AFTER_SWAP, "{new} sends through the new version");

    let after = plugin(&server, &p).await;
    assert_eq!(after["status"], "active", "{after}");
    assert_eq!(after["counters"]["traps"], 0, "{after}");
}
