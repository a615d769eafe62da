//! Sends in through NATS JetStream, against a real `nats-server -js`: a
//! command on `switchboard.send.<session>` goes through the HTTP API's send
//! path and gets one result on `switchboard.results.<session>`; one that can
//! never succeed is answered with the HTTP API's error code and not
//! delivered again; a passing failure is retried, then answered; a command
//! repeated under its `request_id` is not sent twice.

use std::time::Duration;

use async_nats::HeaderMap;
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Value, json};
use switchboard_tests::nats::{NatsServer, Stored, wait_for_stream};
use switchboard_tests::{TestServer, eventually};

const EVENTS: &str = "SWITCHBOARD_EVENTS";

async fn gateway(nats: &NatsServer, attempts: u32, retry_ms: u64) -> TestServer {
    let url = nats.url();
    let server = TestServer::start_with(move |c| {
        c.nats.servers = vec![url];
        c.nats.command_attempts = attempts;
        c.nats.command_retry_base = Duration::from_millis(retry_ms);
        c.nats.command_retry_max = Duration::from_millis(retry_ms * 2);
        c.nats.retry_base = Duration::from_millis(50);
    })
    .await;
    // Commands can be published once the gateway has set the send stream up.
    eventually("the broker to be ready", || async {
        let ready = server.get("/readyz").await;
        (ready.body["checks"]["nats"] == "ok").then_some(())
    })
    .await;
    server
}

/// Publishes a command into the send stream (acknowledged by JetStream).
async fn command(js: &async_nats::jetstream::Context, session: &str, body: Value) {
    js.publish(
        format!("switchboard.send.{session}"),
        Bytes::from(body.to_string()),
    )
    .await
    .expect("published")
    .await
    .expect("stored in the send stream");
}

async fn results(js: &async_nats::jetstream::Context, session: &str, n: usize) -> Vec<Value> {
    wait_for_stream(js, EVENTS, &format!("switchboard.results.{session}"), n)
        .await
        .into_iter()
        .map(|m: Stored| m.json)
        .collect()
}

async fn status(server: &TestServer) -> Value {
    server.get("/api/v1/nats").await.expect(200)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_valid_command_is_sent_through_the_api_path_and_answered_once() {
    let nats = NatsServer::start().await;
    let server = gateway(&nats, 3, 100).await;
    server.paired_session("s").await;
    let js = nats.jetstream().await;
    command(
        &js,
        "s",
        json!({"kind": "text", "request_id": "r1", "to": "4940000001", "text": "from NATS"}),
    )
    .await;
    let got = results(&js, "s", 1).await;
    let r = &got[0];
    assert_eq!(r["request_id"], "r1", "{r}");
    assert_eq!(r["ok"], true, "{r}");
    let message_id = r["message_id"].as_str().unwrap().to_owned();
    assert!(message_id.starts_with("3EB0"), "{r}");
    assert!(r["timestamp"].as_i64().is_some(), "{r}");
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    let sent: Vec<&Value> = outbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["message_id"] == message_id.as_str())
        .collect();
    assert_eq!(sent.len(), 1, "{outbox}");
    assert_eq!(sent[0]["body"]["text"], "from NATS");

    // A future send_at schedules it, as the HTTP API does.
    command(
        &js,
        "s",
        json!({"kind": "text", "request_id": "r2", "to": "4940000001", "text": "later",
               "send_at": "2999-01-01T00:00:00Z"}),
    )
    .await;
    let got = results(&js, "s", 2).await;
    assert_eq!(got[1]["request_id"], "r2");
    assert_eq!(got[1]["status"], "scheduled", "{}", got[1]);
    let id = got[1]["scheduled_id"].as_str().unwrap();
    server
        .get(&format!("/api/v1/sessions/s/scheduled/{id}"))
        .await
        .expect(200);

    // A reply subject named in the header (under the session's own
    // replies subject) gets the result too.
    let client = async_nats::connect(nats.url()).await.unwrap();
    let mut inbox = client.subscribe("switchboard.replies.s.r3").await.unwrap();
    client.flush().await.unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("Switchboard-Reply-To", "switchboard.replies.s.r3");
    js.publish_with_headers(
        "switchboard.send.s",
        headers,
        Bytes::from(
            json!({"kind": "text", "request_id": "r3", "to": "4940000001", "text": "reply"})
                .to_string(),
        ),
    )
    .await
    .unwrap()
    .await
    .unwrap();
    let reply = tokio::time::timeout(Duration::from_secs(30), inbox.next())
        .await
        .expect("a reply in time")
        .expect("a reply");
    let reply: Value = serde_json::from_slice(&reply.payload).unwrap();
    assert_eq!(
        (reply["request_id"].clone(), reply["ok"].clone()),
        (json!("r3"), json!(true))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_can_never_succeed_gets_the_http_error_code_and_is_not_redelivered() {
    let nats = NatsServer::start().await;
    let server = gateway(&nats, 5, 100).await;
    server.paired_session("s").await;
    let js = nats.jetstream().await;
    command(
        &js,
        "s",
        json!({"kind": "text", "request_id": "no-to", "text": "x"}),
    )
    .await;
    command(
        &js,
        "s",
        json!({"kind": "fax", "request_id": "bad-kind", "to": "1"}),
    )
    .await;
    command(
        &js,
        "ghost",
        json!({"kind": "text", "request_id": "ghost", "to": "1", "text": "x"}),
    )
    .await;
    js.publish("switchboard.send.s", Bytes::from_static(b"{not json"))
        .await
        .unwrap()
        .await
        .unwrap();
    let mut got = results(&js, "s", 3).await;
    got.extend(results(&js, "ghost", 1).await);
    let code = |id: Option<&str>| -> String {
        got.iter()
            .find(|r| r["request_id"].as_str() == id)
            .map(|r| {
                assert_eq!(r["ok"], false, "{r}");
                r["error"]["code"].as_str().unwrap().to_owned()
            })
            .unwrap_or_else(|| panic!("a result for {id:?} in {got:?}"))
    };
    assert_eq!(code(Some("no-to")), "invalid_field");
    assert_eq!(code(Some("bad-kind")), "unknown_send_kind");
    assert_eq!(code(Some("ghost")), "session_not_found");
    assert_eq!(code(None), "malformed_json");
    // Taken off the queue at once, each delivered once.
    eventually("the send queue to be empty", || async {
        let mut stream = js.get_stream("SWITCHBOARD_SEND").await.ok()?;
        (stream.info().await.ok()?.state.messages == 0).then_some(())
    })
    .await;
    let s = status(&server).await;
    assert_eq!(s["commands"]["delivered"], 4, "{s}");
    assert_eq!(s["commands"]["redelivered"], 0, "{s}");
    assert_eq!(s["commands"]["failed"], 4, "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passing_failure_is_delivered_again_then_answered_as_failed_or_sent_once_it_can() {
    let nats = NatsServer::start().await;
    // A second between deliveries: time enough to reconnect between two.
    let server = gateway(&nats, 3, 1_000).await;
    server.paired_session("s").await;
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    let js = nats.jetstream().await;
    command(
        &js,
        "s",
        json!({"kind": "text", "request_id": "gives-up", "to": "4940000001", "text": "x"}),
    )
    .await;
    let got = results(&js, "s", 1).await;
    assert_eq!(got[0]["ok"], false, "{}", got[0]);
    let code = got[0]["error"]["code"].as_str().unwrap();
    assert!(
        ["session_not_connected", "invalid_session_state"].contains(&code),
        "{}",
        got[0]
    );
    let s = status(&server).await;
    assert_eq!(s["commands"]["delivered"], 3, "three deliveries: {s}");
    assert_eq!(s["commands"]["retried"], 2, "{s}");

    // One that finds the session back before its attempts run out is sent.
    command(
        &js,
        "s",
        json!({"kind": "text", "request_id": "recovers", "to": "4940000001", "text": "y"}),
    )
    .await;
    eventually("the command to be put back once", || async {
        (status(&server).await["commands"]["retried"] == 3).then_some(())
    })
    .await;
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    let got = results(&js, "s", 2).await;
    assert_eq!(got[1]["request_id"], "recovers");
    assert_eq!(got[1]["ok"], true, "{}", got[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_published_again_under_its_request_id_is_not_sent_twice() {
    let nats = NatsServer::start().await;
    let server = gateway(&nats, 3, 100).await;
    server.paired_session("s").await;
    let js = nats.jetstream().await;
    let body = json!({"kind": "text", "request_id": "once", "to": "4940000001", "text": "once"});
    command(&js, "s", body.clone()).await;
    let first = results(&js, "s", 1).await;
    command(&js, "s", body).await;
    eventually("the second command to be answered", || async {
        (status(&server).await["commands"]["already_sent"] == 1).then_some(())
    })
    .await;
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    let sent = outbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["message_id"] == first[0]["message_id"])
        .count();
    assert_eq!(sent, 1, "one message on the network: {outbox}");
    // The stream keeps one result per command.
    assert_eq!(results(&js, "s", 1).await.len(), 1);

    // A scheduled command published again is not scheduled twice.
    let later = json!({"kind": "text", "request_id": "later", "to": "4940000001",
                       "text": "later", "send_at": "2999-01-01T00:00:00Z"});
    command(&js, "s", later.clone()).await;
    command(&js, "s", later).await;
    eventually("the repeated scheduled command to be answered", || async {
        (status(&server).await["commands"]["already_sent"] == 2).then_some(())
    })
    .await;
    let scheduled = server.get("/api/v1/sessions/s/scheduled").await.expect(200);
    let texts: Vec<&Value> = scheduled["scheduled"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "scheduled")
        .collect();
    assert_eq!(texts.len(), 1, "{scheduled}");
}
