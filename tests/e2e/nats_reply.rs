//! Where the gateway publishes for a NATS publisher, against a real
//! `nats-server -js`: a command's `Switchboard-Reply-To` may name only its
//! own session's replies subject (`switchboard.replies.<session>[.…]`); one
//! naming another session's results, or any other subject, is refused
//! unsent and nothing is published there. And commands for sessions that do
//! not exist are answered without leaving a reader per subject behind;
//! a session's reader is retired when the session goes, or when idle.

use std::time::Duration;

use async_nats::HeaderMap;
use bytes::Bytes;
use futures_util::{FutureExt, StreamExt};
use serde_json::{Value, json};
use switchboard_tests::nats::{NatsServer, read_stream, wait_for_stream};
use switchboard_tests::{TestServer, eventually};

const EVENTS: &str = "SWITCHBOARD_EVENTS";

async fn gateway(nats: &NatsServer, worker_idle: Duration) -> TestServer {
    let url = nats.url();
    let server = TestServer::start_with(move |c| {
        c.nats.servers = vec![url];
        c.nats.command_attempts = 2;
        c.nats.command_retry_base = Duration::from_millis(100);
        c.nats.command_retry_max = Duration::from_millis(200);
        c.nats.retry_base = Duration::from_millis(50);
        c.nats.command_worker_idle = worker_idle;
    })
    .await;
    eventually("the broker to be ready", || async {
        let ready = server.get("/readyz").await;
        (ready.body["checks"]["nats"] == "ok").then_some(())
    })
    .await;
    server
}

async fn command_with_reply(
    js: &async_nats::jetstream::Context,
    session: &str,
    reply_to: &str,
    body: Value,
) {
    let mut headers = HeaderMap::new();
    headers.insert("Switchboard-Reply-To", reply_to);
    js.publish_with_headers(
        format!("switchboard.send.{session}"),
        headers,
        Bytes::from(body.to_string()),
    )
    .await
    .expect("published")
    .await
    .expect("stored in the send stream");
}

fn text(request_id: &str) -> Value {
    json!({"kind": "text", "request_id": request_id, "to": "4940000001", "text": request_id})
}

/// The value of `switchboard_nats_command_workers` on `/metrics`.
async fn workers(server: &TestServer) -> Option<i64> {
    server
        .get_text("/metrics")
        .await
        .lines()
        .find_map(|l| l.strip_prefix("switchboard_nats_command_workers "))
        .and_then(|v| v.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_subject_outside_the_sessions_own_replies_is_refused_and_nothing_is_published_there()
 {
    let nats = NatsServer::start().await;
    let server = gateway(&nats, Duration::from_secs(3600)).await;
    server.paired_session("s").await;
    server.paired_session("victim").await;
    let js = nats.jetstream().await;
    // One connection subscribed to every subject a forged result could go
    // to, and to the allowed one: NATS delivers the gateway's publishes to
    // it in the order the gateway made them.
    let client = async_nats::connect(nats.url()).await.unwrap();
    let mut victim = client
        .subscribe("switchboard.results.victim")
        .await
        .unwrap();
    let mut elsewhere = client.subscribe("answers.>").await.unwrap();
    let mut own = client.subscribe("switchboard.replies.s.>").await.unwrap();
    client.flush().await.unwrap();

    let forged = [
        ("f1", "switchboard.results.victim"),
        ("f2", "answers.r1"),
        ("f3", "switchboard.replies.victim.x"),
        ("f4", "switchboard.replies.s.*"),
    ];
    for (id, reply) in forged {
        command_with_reply(&js, "s", reply, text(id)).await;
    }
    let got = wait_for_stream(&js, EVENTS, "switchboard.results.s", forged.len()).await;
    for (id, reply) in forged {
        let r = got
            .iter()
            .find(|m| m.json["request_id"] == id)
            .unwrap_or_else(|| panic!("a result for {id}: {got:?}"));
        assert_eq!(r.json["ok"], false, "{:?}", r.json);
        assert_eq!(
            r.json["error"]["code"], "invalid_reply_subject",
            "{:?}",
            r.json
        );
        let message = r.json["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(reply) && message.contains("switchboard.replies.s"),
            "{message}"
        );
    }
    // None was sent.
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    assert_eq!(
        outbox["messages"].as_array().map(Vec::len),
        Some(0),
        "{outbox}"
    );

    // A command asking for its own session's replies gets its result there,
    // after any the refused ones could have caused.
    command_with_reply(&js, "s", "switchboard.replies.s.r9", text("r9")).await;
    let reply = tokio::time::timeout(Duration::from_secs(30), own.next())
        .await
        .expect("a reply in time")
        .expect("a reply");
    assert_eq!(reply.subject.as_str(), "switchboard.replies.s.r9");
    let reply: Value = serde_json::from_slice(&reply.payload).unwrap();
    assert_eq!(
        (reply["request_id"].clone(), reply["ok"].clone()),
        (json!("r9"), json!(true))
    );
    assert!(
        victim.next().now_or_never().is_none(),
        "a result reached the victim's subject"
    );
    assert!(
        elsewhere.next().now_or_never().is_none(),
        "a result reached another subject"
    );
    // And the events stream holds no result on the victim's subject.
    assert!(
        read_stream(&js, EVENTS, "switchboard.results.victim")
            .await
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_for_sessions_that_do_not_exist_are_answered_without_a_reader_each() {
    let nats = NatsServer::start().await;
    let server = gateway(&nats, Duration::from_secs(3600)).await;
    let js = nats.jetstream().await;
    let ghosts = 150;
    for i in 0..ghosts {
        js.publish(
            format!("switchboard.send.ghost-{i}"),
            Bytes::from(text(&format!("g{i}")).to_string()),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    }
    // And some subjects that name no session at all.
    for i in 0..10 {
        js.publish(
            format!("switchboard.send.a{i}.b"),
            Bytes::from(text(&format!("bad{i}")).to_string()),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    }
    let got = wait_for_stream(&js, EVENTS, "switchboard.results.>", ghosts + 10).await;
    let not_found = got
        .iter()
        .filter(|m| m.json["error"]["code"] == "session_not_found")
        .count();
    let bad_subject = got
        .iter()
        .filter(|m| m.json["error"]["code"] == "invalid_subject")
        .count();
    assert_eq!((not_found, bad_subject), (ghosts, 10));
    assert_eq!(
        workers(&server).await,
        Some(0),
        "a reader was left per subject"
    );

    // A session that exists gets its own reader, which goes with the session.
    server.paired_session("real").await;
    js.publish("switchboard.send.real", Bytes::from(text("r1").to_string()))
        .await
        .unwrap()
        .await
        .unwrap();
    let got = wait_for_stream(&js, EVENTS, "switchboard.results.real", 1).await;
    assert_eq!(got[0].json["ok"], true, "{:?}", got[0].json);
    assert_eq!(workers(&server).await, Some(1));
    server.delete("/api/v1/sessions/real").await.expect(200);
    eventually("the deleted session's reader to be retired", || async {
        (workers(&server).await == Some(0)).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_sessions_reader_is_retired_and_started_again_by_its_next_command() {
    let nats = NatsServer::start().await;
    let server = gateway(&nats, Duration::from_millis(200)).await;
    server.paired_session("s").await;
    let js = nats.jetstream().await;
    js.publish("switchboard.send.s", Bytes::from(text("r1").to_string()))
        .await
        .unwrap()
        .await
        .unwrap();
    wait_for_stream(&js, EVENTS, "switchboard.results.s", 1).await;
    eventually("the idle reader to be retired", || async {
        (workers(&server).await == Some(0)).then_some(())
    })
    .await;
    js.publish("switchboard.send.s", Bytes::from(text("r2").to_string()))
        .await
        .unwrap()
        .await
        .unwrap();
    let got = wait_for_stream(&js, EVENTS, "switchboard.results.s", 2).await;
    assert!(got.iter().all(|m| m.json["ok"] == true), "{got:?}");
}
