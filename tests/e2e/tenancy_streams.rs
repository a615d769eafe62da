//! Streams kept to their tenant: a stream opened by a token limited to some
//! sessions ends when one of them is deleted (so a session recreated under
//! that id, perhaps by someone else, never reaches it), and event ids are
//! never given twice, even across a restart with the event log off.

use serde_json::{Value, json};
use switchboard_tests::TestServer;
use switchboard_tests::sse::EventStream;

/// Mints a token over `sessions` with `scopes`; its secret.
async fn mint(server: &TestServer, name: &str, sessions: Value, scopes: Value) -> String {
    let minted = server
        .post(
            "/api/v1/tokens",
            json!({ "name": name, "sessions": sessions, "scopes": scopes }),
        )
        .await
        .expect(201);
    minted["secret"].as_str().unwrap().to_owned()
}

async fn as_token(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    secret: &str,
    body: Option<Value>,
) -> u16 {
    let mut req = server
        .http()
        .request(method, format!("{}{path}", server.base()))
        .bearer_auth(secret);
    if let Some(b) = body {
        req = req.json(&b);
    }
    req.send().await.unwrap().status().as_u16()
}

async fn stream_as(server: &TestServer, secret: &str) -> EventStream {
    let resp = server
        .http()
        .get(format!("{}/api/v1/events/stream", server.base()))
        .bearer_auth(secret)
        .send()
        .await
        .unwrap();
    EventStream::from_response(resp).await
}

async fn inject(server: &TestServer, session: &str, text: &str) -> String {
    let got = server
        .post(
            &format!("/api/v1/sim/sessions/{session}/inbound"),
            json!({ "from": "15550001111", "text": text }),
        )
        .await
        .expect(200);
    got["message_id"].as_str().unwrap().to_owned()
}

async fn connect(server: &TestServer, session: &str) {
    server
        .post_empty(&format!("/api/v1/sessions/{session}/connect"))
        .await
        .expect(200);
    server.wait_for_status(session, "logged_in").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_stream_ends_when_its_session_is_deleted_and_never_shows_the_successor() {
    let server = TestServer::start().await;
    let scopes = json!(["read", "manage"]);
    let a = mint(&server, "a", json!(["acme"]), scopes.clone()).await;
    let b = mint(&server, "b", json!([]), scopes).await;
    let create = Some(json!({ "id": "acme" }));
    let post = reqwest::Method::POST;
    assert_eq!(
        as_token(
            &server,
            post.clone(),
            "/api/v1/sessions",
            &a,
            create.clone()
        )
        .await,
        201
    );
    connect(&server, "acme").await;
    let mut a_stream = stream_as(&server, &a).await;
    let mine = inject(&server, "acme", "for a").await;
    a_stream
        .find(|e| e["event"] == "message" && e["data"]["message_id"] == mine)
        .await;

    let delete = reqwest::Method::DELETE;
    assert_eq!(
        as_token(&server, delete, "/api/v1/sessions/acme", &a, None).await,
        200
    );
    // Tenant B takes the free id; its session's events are B's alone.
    assert_eq!(
        as_token(&server, post, "/api/v1/sessions", &b, create).await,
        201
    );
    connect(&server, "acme").await;
    let theirs = inject(&server, "acme", "for b").await;
    let mut b_stream = stream_as(&server, &b).await;
    let again = inject(&server, "acme", "for b again").await;
    b_stream
        .find(|e| e["event"] == "message" && e["data"]["message_id"] == again)
        .await;

    // A's stream ended at the delete: read to its end (a stream that went on
    // would stall this read and fail it), none of what followed is in it.
    let mut after = Vec::new();
    while let Some(e) = a_stream.next().await {
        after.push(e.json());
    }
    for id in [&theirs, &again] {
        assert!(
            !after.iter().any(|e| e["data"]["message_id"] == **id),
            "tenant B's message reached tenant A's stream: {after:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_stream_ends_when_its_token_creates_a_session() {
    let server = TestServer::start().await;
    let a = mint(&server, "a", json!([]), json!(["read", "manage"])).await;
    let mut stream = stream_as(&server, &a).await;
    let post = reqwest::Method::POST;
    assert_eq!(
        as_token(
            &server,
            post,
            "/api/v1/sessions",
            &a,
            Some(json!({ "id": "new-one" }))
        )
        .await,
        201
    );
    // The stream held the empty set it opened with: it ends, and a new one
    // sees the new session.
    while stream.next().await.is_some() {}
    let mut stream = stream_as(&server, &a).await;
    connect(&server, "new-one").await;
    let id = inject(&server, "new-one", "hello").await;
    stream
        .find(|e| e["event"] == "message" && e["data"]["message_id"] == id)
        .await;
}

/// The id of the message event `message_id` on `stream`.
async fn event_id(stream: &mut EventStream, message_id: &str) -> u64 {
    loop {
        let e = stream.next().await.expect("an event");
        if e.event == "message" && e.json()["data"]["message_id"] == message_id {
            return e.id.expect("an id").parse().unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_ids_never_repeat_across_a_restart_with_the_event_log_off() {
    let mut server = TestServer::start_with(|c| c.event_log.max_count = 0).await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    let first = inject(&server, "s", "before").await;
    let before = event_id(&mut stream, &first).await;
    drop(stream);

    server.restart().await;
    server.wait_for_status("s", "logged_in").await;
    let mut stream = server.open_stream("session=s").await;
    let second = inject(&server, "s", "after").await;
    let after = event_id(&mut stream, &second).await;
    assert!(
        after > before,
        "the id {after} after the restart is not above {before}, given before it"
    );
}
