//! A deleted session's writes never reach its successor: whatever is
//! written for a session carries its incarnation and is refused, in the
//! store's transaction, once that session is deleted, even when a session
//! of the same id exists again.

use serde_json::json;
use switchboard::domain::event::{Envelope, EventName};
use switchboard::domain::message::{Direction, MessageRecord};
use switchboard_tests::TestServer;
use switchboard_tests::receiver::{inbound, message_hook, wait_until_idle};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_deleted_sessions_intake_writes_is_refused_and_its_successor_never_reads_it() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let old = server
        .services()
        .store
        .get_session("s")
        .unwrap()
        .unwrap()
        .incarnation;
    server.delete("/api/v1/sessions/s").await.expect(200);
    // Someone else's session under the same id, with its own webhook.
    server.paired_session("s").await;
    let fresh = server
        .services()
        .store
        .get_session("s")
        .unwrap()
        .unwrap()
        .incarnation;
    assert_ne!(fresh, old, "a new session of an id is a new incarnation");
    let rx = message_hook(&server, "s").await;
    let mut stream = server.open_stream("session=s&events=message").await;

    // The old session's intake, had it outlived the delete, writes an
    // inbound message, a lid mapping and a contact for its incarnation.
    let state = server.services();
    let stale = MessageRecord {
        message_id: "STALE-1".into(),
        session_id: "s".into(),
        direction: Direction::Inbound,
        chat: "15550009999@s.whatsapp.net".into(),
        sender: Some("15550009999@s.whatsapp.net".into()),
        kind: "text".into(),
        body: json!({ "text": "for the old tenant" }),
        timestamp: 1,
    };
    let envelope = Envelope::now(
        "s",
        EventName::Message,
        json!({ "message_id": "STALE-1", "text": "for the old tenant" }),
    );
    state
        .events
        .publish_message_for(envelope, stale, old)
        .await
        .expect("answered")
        .expect("refused quietly, not failed");
    assert!(
        !state
            .store
            .learn_lid("s", "777", "15550009999", Some(old))
            .unwrap()
    );
    assert_eq!(state.store.lid_phone("s", "777").unwrap(), None);

    // The new session's own message is the first and only one anywhere.
    let marker = inbound(&server, "s", "the new tenant's").await;
    let seen = stream
        .until(|e| e["data"]["message_id"] == marker.as_str())
        .await;
    assert!(
        seen.iter().all(|e| e["data"]["message_id"] != "STALE-1"),
        "{seen:?}"
    );
    let stored: Vec<String> = server
        .inbound_messages("s")
        .await
        .iter()
        .map(|m| m["message_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(stored, std::slice::from_ref(&marker));
    rx.wait_for_match("the marker", |r| {
        r.json()["data"]["message_id"] == marker.as_str()
    })
    .await;
    wait_until_idle(&server, "s", &rx.url()).await;
    assert_eq!(rx.count(), 1, "the stale message owed no delivery");
}
