//! What the gateway does to inbound messages before anyone sees them: drops
//! duplicates (per session, keyed on chat and message id) and resolves
//! `from_phone` of `@lid` senders through the mapping it learns passively.

use serde_json::{Value, json};
use switchboard_tests::TestServer;

async fn inject(server: &TestServer, session: &str, body: Value) -> String {
    let got = server
        .post(&format!("/api/v1/sim/sessions/{session}/inbound"), body)
        .await
        .expect(200);
    got["message_id"].as_str().unwrap().to_owned()
}

fn is_message(id: &str) -> impl Fn(&Value) -> bool + '_ {
    move |e: &Value| e["event"] == "message" && e["data"]["message_id"] == id
}

fn is_text(text: &str) -> impl Fn(&Value) -> bool + '_ {
    move |e: &Value| e["event"] == "message" && e["data"]["text"] == text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_delivered_twice_is_stored_and_published_once() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s&events=message").await;
    let body = json!({ "from": "15550001111", "text": "once", "message_id": "DUP1" });
    inject(&server, "s", body.clone()).await;
    inject(&server, "s", body).await;
    inject(
        &server,
        "s",
        json!({ "from": "15550001111", "text": "twice in one call", "message_id": "DUP2", "duplicate": true }),
    )
    .await;
    inject(
        &server,
        "s",
        json!({ "from": "15550001111", "text": "marker" }),
    )
    .await;

    let seen = stream.until(is_text("marker")).await;
    let ids: Vec<&str> = seen
        .iter()
        .map(|e| e["data"]["message_id"].as_str().unwrap())
        .collect();
    assert_eq!(&ids[..2], ["DUP1", "DUP2"], "each once: {ids:?}");
    assert_eq!(ids.len(), 3);
    let stored_ids: Vec<String> = server
        .inbound_messages("s")
        .await
        .iter()
        .map(|m| m["message_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(stored_ids.len(), 3, "{stored_ids:?}");
    assert_eq!(stored_ids[1..], ["DUP2", "DUP1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_message_id_in_another_chat_or_another_session_is_not_a_duplicate() {
    let server = TestServer::start().await;
    server.paired_session("a").await;
    server.paired_session("b").await;
    let mut stream = server.open_stream("events=message").await;
    inject(
        &server,
        "a",
        json!({ "from": "15550001111", "text": "first", "message_id": "SAME" }),
    )
    .await;
    inject(
        &server,
        "a",
        json!({ "from": "15550002222", "text": "other chat", "message_id": "SAME" }),
    )
    .await;
    inject(
        &server,
        "b",
        json!({ "from": "15550001111", "text": "other session", "message_id": "SAME" }),
    )
    .await;
    // Each session's events keep their order; two sessions' events may
    // interleave.
    let mut texts = Vec::new();
    while texts.len() < 3 {
        let e = stream.next_envelope().await;
        texts.push((e["session_id"].clone(), e["data"]["text"].clone()));
    }
    texts.sort_by_key(|(session, _)| session.as_str().map(str::to_owned));
    assert_eq!(
        texts,
        [
            (json!("a"), json!("first")),
            (json!("a"), json!("other chat")),
            (json!("b"), json!("other session")),
        ]
    );
    assert_eq!(server.inbound_messages("a").await.len(), 2);
    assert_eq!(server.inbound_messages("b").await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_location_updates_share_an_id_and_all_get_through_but_a_repeated_update_does_not() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s&events=message").await;
    let update = |seq: i64| {
        json!({
            "from": "15550001111",
            "message_id": "LIVE1",
            "location": { "latitude": 52.5, "longitude": 13.4, "is_live": true, "sequence_number": seq, "caption": "on my way" },
        })
    };
    inject(&server, "s", update(1)).await;
    inject(&server, "s", update(2)).await;
    inject(&server, "s", update(2)).await;
    inject(
        &server,
        "s",
        json!({ "from": "15550001111", "text": "marker" }),
    )
    .await;
    let seen = stream.until(is_text("marker")).await;
    let seqs: Vec<i64> = seen[..seen.len() - 1]
        .iter()
        .map(|e| {
            assert_eq!(e["data"]["message_id"], "LIVE1");
            assert_eq!(e["data"]["message_type"], "location");
            assert_eq!(e["data"]["location"]["is_live"], true);
            e["data"]["location"]["sequence_number"].as_i64().unwrap()
        })
        .collect();
    assert_eq!(seqs, [1, 2]);
    assert_eq!(server.inbound_messages("s").await.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dedup_memory_is_lost_on_restart() {
    let mut server = TestServer::start().await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s&events=message").await;
    let body = json!({ "from": "15550001111", "text": "again", "message_id": "RESTART1" });
    inject(&server, "s", body.clone()).await;
    stream.find(is_message("RESTART1")).await;
    server.restart().await;
    server.wait_for_status("s", "logged_in").await;
    let mut stream = server.open_stream("session=s&events=message").await;
    inject(&server, "s", body).await;
    stream.find(is_message("RESTART1")).await;
    assert_eq!(server.inbound_messages("s").await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lid_sender_keeps_its_lid_and_its_phone_is_learned_from_a_message_that_carried_it() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s&events=message").await;

    let unknown = inject(
        &server,
        "s",
        json!({ "from": "777@lid", "text": "who am i" }),
    )
    .await;
    let env = stream.find(is_message(&unknown)).await;
    assert_eq!(env["data"]["from"], "777@lid");
    assert!(env["data"]["from_phone"].is_null(), "not learned yet");
    assert!(env["data"]["chat_phone"].is_null());

    let carried = inject(
        &server,
        "s",
        json!({ "from": "777@lid", "text": "with phone", "sender_phone": "+1 555 000 7777" }),
    )
    .await;
    let env = stream.find(is_message(&carried)).await;
    assert_eq!(env["data"]["from"], "777@lid");
    assert_eq!(env["data"]["from_phone"], "15550007777");
    assert_eq!(env["data"]["chat_phone"], "15550007777");

    let later = inject(&server, "s", json!({ "from": "777@lid", "text": "later" })).await;
    let env = stream.find(is_message(&later)).await;
    assert_eq!(env["data"]["from"], "777@lid", "never converted");
    assert_eq!(env["data"]["participant"], "777@lid");
    assert_eq!(
        env["data"]["from_phone"], "15550007777",
        "from the learned mapping"
    );
    assert_eq!(env["data"]["chat_phone"], "15550007777");

    let other = inject(
        &server,
        "s",
        json!({ "from": "888@lid", "text": "stranger" }),
    )
    .await;
    let env = stream.find(is_message(&other)).await;
    assert!(
        env["data"]["from_phone"].is_null(),
        "an unknown lid stays unresolved"
    );

    let record = server.inbound_messages("s").await;
    let later_record = record
        .iter()
        .find(|m| m["message_id"] == later.as_str())
        .unwrap();
    assert_eq!(later_record["body"]["from_phone"], "15550007777");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_user_with_that_lid_does_not_give_its_phone_away() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/users",
            json!({ "phone": "15550007777", "push_name": "Lina", "lid": "777" }),
        )
        .await
        .expect(201);
    let mut stream = server.open_stream("session=s&events=message").await;
    let id = inject(&server, "s", json!({ "from": "777@lid", "text": "hi" })).await;
    let env = stream.find(is_message(&id)).await;
    assert_eq!(env["data"]["push_name"], "Lina");
    assert!(env["data"]["from_phone"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lid_mapping_is_per_session_and_survives_a_restart() {
    let mut server = TestServer::start().await;
    server.paired_session("a").await;
    server.paired_session("b").await;
    let mut stream = server.open_stream("events=message").await;
    let taught = inject(
        &server,
        "a",
        json!({ "from": "777@lid", "text": "hi", "sender_phone": "15550007777" }),
    )
    .await;
    stream.find(is_message(&taught)).await;
    let at_b = inject(&server, "b", json!({ "from": "777@lid", "text": "hi b" })).await;
    let env = stream.find(is_message(&at_b)).await;
    assert!(env["data"]["from_phone"].is_null(), "b never learned it");

    server.restart().await;
    server.wait_for_status("a", "logged_in").await;
    let mut stream = server.open_stream("session=a&events=message").await;
    let after = inject(
        &server,
        "a",
        json!({ "from": "777@lid", "text": "after restart" }),
    )
    .await;
    let env = stream.find(is_message(&after)).await;
    assert_eq!(env["data"]["from_phone"], "15550007777");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_name_update_with_a_lid_teaches_the_mapping() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    let data = json!({ "jid": "15550007777@s.whatsapp.net", "push_name": "Lina", "old_push_name": null, "lid": "777@lid" });
    server
        .post(
            "/api/v1/sim/sessions/s/events",
            json!({ "event": "push_name_update", "data": data }),
        )
        .await
        .expect(200);
    let env = stream.find_event("s", "push_name_update").await;
    assert_eq!(env["data"], data, "delivered as given");
    let id = inject(&server, "s", json!({ "from": "777@lid", "text": "hi" })).await;
    let env = stream.find(is_message(&id)).await;
    assert_eq!(env["data"]["from_phone"], "15550007777");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sender_phone_only_goes_with_a_lid_sender_and_must_be_a_phone() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let inbound = "/api/v1/sim/sessions/s/inbound";
    let msg = server
        .post(
            inbound,
            json!({ "from": "15550001111", "text": "x", "sender_phone": "15550001111" }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(msg.contains("sender_phone"), "{msg}");
    let msg = server
        .post(
            inbound,
            json!({ "from": "777@lid", "text": "x", "sender_phone": "not a phone" }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(msg.contains("sender_phone"), "{msg}");
}
