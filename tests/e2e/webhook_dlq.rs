//! The webhook dead-letter queue: durability, capacity, and replay.

use serde_json::{Value, json};
use switchboard_tests::receiver::{
    Respond, TestReceiver, add_webhook, dlq, inbound, message_hook, ms, verify_v2, wait_for_dlq,
};
use switchboard_tests::{TestServer, eventually};

fn replay_path(id: &Value) -> String {
    format!(
        "/api/v1/sessions/s/webhooks/dlq/{}/replay",
        id.as_str().expect("an entry id")
    )
}

fn text_of(entry: &Value) -> String {
    let payload = entry["payload"].as_str().expect("a payload string");
    let envelope: Value = serde_json::from_str(payload).expect("the payload is the envelope JSON");
    envelope["data"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dead_letter_queue_and_its_secret_survive_a_restart() {
    let mut server = TestServer::start_with(|c| c.webhooks.max_attempts = 1).await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    rx.set(Respond::Status(500));
    // Messages only: the reconnect after the restart must not add entries.
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"], "secret": "kept-secret" }),
    )
    .await;
    inbound(&server, "s", "survivor").await;
    let before = wait_for_dlq(&server, "s", 1).await;
    let first = rx.requests().remove(0);

    server.restart().await;
    server.wait_for_status("s", "logged_in").await;
    let after = dlq(&server, "s").await;
    assert_eq!(
        after, before,
        "the entry is listed unchanged after a restart"
    );
    let hooks = server.get("/api/v1/sessions/s/webhooks").await.expect(200);
    assert_eq!(hooks["count"], 1, "webhooks survive a restart too: {hooks}");

    rx.set(Respond::Ok);
    server
        .post_empty(&replay_path(&after[0]["id"]))
        .await
        .expect(200);
    let got = rx.wait_for(2).await;
    let replayed = &got[1];
    assert!(
        verify_v2("kept-secret", replayed),
        "the replay is signed with the secret captured at failure time"
    );
    assert_eq!(replayed.delivery_id(), first.delivery_id());
    assert_eq!(replayed.body, first.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dead_letter_queue_keeps_only_the_newest_entries_up_to_its_capacity() {
    let server = TestServer::start_with(|c| {
        c.webhooks.max_attempts = 1;
        c.webhooks.dlq_capacity = 2;
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    rx.set(Respond::Status(500));

    for (i, text) in ["m1", "m2", "m3"].into_iter().enumerate() {
        inbound(&server, "s", text).await;
        // Wait for each failure so the order of the entries is known.
        eventually(&format!("{text} dead-lettered"), || async {
            let entries = dlq(&server, "s").await;
            entries
                .first()
                .is_some_and(|e| text_of(e) == text)
                .then_some(())
        })
        .await;
        assert_eq!(rx.count(), i + 1);
    }
    let entries = dlq(&server, "s").await;
    let texts: Vec<String> = entries.iter().map(text_of).collect();
    assert_eq!(texts, ["m3", "m2"], "newest first; the oldest was evicted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_entry_is_removed_and_redelivered_with_the_same_delivery_id_and_a_fresh_signature()
 {
    let server = TestServer::start_with(|c| c.webhooks.max_attempts = 1).await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    rx.set(Respond::Status(500));
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"], "secret": "replay-secret" }),
    )
    .await;
    inbound(&server, "s", "again please").await;
    let entries = wait_for_dlq(&server, "s", 1).await;
    let entry = &entries[0];
    let listing = serde_json::to_string(&entries).unwrap();
    assert!(
        !listing.contains("replay-secret"),
        "the secret is never listed: {listing}"
    );
    assert!(entry.get("secret").is_none(), "{entry}");
    let first = rx.requests().remove(0);
    assert!(verify_v2("replay-secret", &first));

    // Timestamps are in seconds: wait for the next one so a fresh one can be
    // told apart.
    let first_ts: i64 = first
        .header("x-webhook-timestamp")
        .unwrap()
        .parse()
        .unwrap();
    eventually("the clock to reach the next second", || async {
        (switchboard_tests::receiver::unix_now() > first_ts).then_some(())
    })
    .await;
    rx.set(Respond::Ok);
    let answer = server
        .post_empty(&replay_path(&entry["id"]))
        .await
        .expect(200);
    assert_eq!(answer["success"], true, "{answer}");
    assert!(
        !answer["message"].as_str().unwrap_or_default().is_empty(),
        "{answer}"
    );
    assert!(
        dlq(&server, "s").await.is_empty(),
        "the entry is removed as the replay is scheduled"
    );

    let replayed = rx.wait_for(2).await.remove(1);
    assert_eq!(replayed.event(), "message");
    assert_eq!(
        replayed.delivery_id(),
        first.delivery_id(),
        "same event, same delivery id"
    );
    assert_eq!(
        replayed.body,
        entry["payload"].as_str().unwrap().as_bytes(),
        "the stored payload, verbatim"
    );
    assert!(
        verify_v2("replay-secret", &replayed),
        "signed like a fresh event"
    );
    let ts = |r: &switchboard_tests::receiver::Received| -> i64 {
        r.header("x-webhook-timestamp").unwrap().parse().unwrap()
    };
    assert!(ts(&replayed) > ts(&first), "a fresh timestamp");
    assert_ne!(
        replayed.header("x-webhook-signature"),
        first.header("x-webhook-signature")
    );
    server
        .post_empty(&replay_path(&entry["id"]))
        .await
        .expect_error(404, "dlq_entry_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_that_fails_again_is_queued_as_a_new_entry() {
    let server = TestServer::start_with(|c| {
        c.webhooks.max_attempts = 2;
        c.webhooks.retry_delays = vec![ms(50)];
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    rx.set(Respond::Status(503));
    inbound(&server, "s", "hopeless").await;
    let old = wait_for_dlq(&server, "s", 1).await.remove(0);
    assert_eq!(rx.count(), 2);

    server
        .post_empty(&replay_path(&old["id"]))
        .await
        .expect(200);
    let new = eventually("the failed replay dead-lettered anew", || async {
        dlq(&server, "s")
            .await
            .into_iter()
            .find(|e| e["id"] != old["id"])
    })
    .await;
    assert_ne!(new["id"], old["id"], "a new entry with a new id");
    assert_eq!(new["payload"], old["payload"]);
    assert_eq!(new["webhook_url"], old["webhook_url"]);
    assert_eq!(new["event"], "message");
    assert_eq!(new["attempts"], 2, "the replay went through the retry path");
    assert!(
        new["last_error"]
            .as_str()
            .unwrap_or_default()
            .contains("503")
    );
    let got = rx.requests();
    assert_eq!(got.len(), 4);
    assert!(
        got.iter().all(|r| r.delivery_id() == got[0].delivery_id()),
        "one event, one delivery id"
    );
    assert_eq!(dlq(&server, "s").await.len(), 1, "the old entry stays gone");
}
