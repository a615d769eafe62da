//! App-state resync (`POST /sessions/{id}/appstate/resync`): validation, the
//! 503 without a live client, every outcome (synced, fatal, retryable,
//! skipped) produced by sim faults, and a snapshot that rebuilds the address
//! book before the answer.

use serde_json::{Value, json};
use switchboard_tests::{Resp, TestServer};

const ALL: [&str; 5] = [
    "critical_block",
    "critical_unblock_low",
    "regular_low",
    "regular_high",
    "regular",
];

async fn resync(server: &TestServer, id: &str, body: Value) -> Resp {
    server
        .post(&format!("/api/v1/sessions/{id}/appstate/resync"), body)
        .await
}

async fn faults(server: &TestServer, id: &str, faults: Value) {
    server
        .post(&format!("/api/v1/sim/sessions/{id}/faults"), faults)
        .await
        .expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_collection_syncs_on_a_healthy_session() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    for mode in [json!(null), json!("incremental"), json!("snapshot")] {
        let mut body = json!({ "collections": ALL });
        if !mode.is_null() {
            body["mode"] = mode;
        }
        assert_eq!(
            resync(&server, "s", body).await.expect(200),
            json!({ "synced": ALL, "fatal": [], "retryable": [], "skipped": [], "all_synced": true })
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_make_collections_fatal_or_retryable() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    faults(
        &server,
        "s",
        json!({ "appstate": { "regular": "fatal", "regular_low": "retryable" } }),
    )
    .await;
    let body = resync(
        &server,
        "s",
        json!({ "collections": ["regular", "regular_low", "regular_high", "regular"] }),
    )
    .await
    .expect(200);
    assert_eq!(
        body,
        json!({ "synced": ["regular_high"], "fatal": ["regular"], "retryable": ["regular_low"], "skipped": [], "all_synced": false })
    );
    server
        .delete("/api/v1/sim/sessions/s/faults")
        .await
        .expect(200);
    let body = resync(
        &server,
        "s",
        json!({ "collections": ["regular", "regular_low"] }),
    )
    .await
    .expect(200);
    assert_eq!(body["all_synced"], true, "a later attempt succeeds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collection_another_resync_is_fetching_is_skipped() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    faults(&server, "s", json!({ "appstate_latency_ms": 800 })).await;
    let first = resync(
        &server,
        "s",
        json!({ "collections": ["regular", "regular_high"] }),
    );
    // Both ask at once; the network's configured 800 ms latency keeps the
    // first fetch of `regular` open while the other asks for it too.
    let second = resync(
        &server,
        "s",
        json!({ "collections": ["regular", "critical_block"] }),
    );
    let (first, second) = tokio::join!(first, second);
    let (first, second) = (first.expect(200), second.expect(200));
    // Whichever claimed `regular` first fetched it; the other left it.
    let (winner, loser) = if first["synced"][0] == "regular" {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(winner["synced"][0], "regular", "{winner}");
    assert_eq!(winner["skipped"], json!([]));
    assert_eq!(winner["all_synced"], true);
    assert_eq!(loser["skipped"], json!(["regular"]), "{loser}");
    assert_eq!(loser["synced"].as_array().unwrap().len(), 1);
    assert_eq!(loser["all_synced"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_rebuilds_the_address_book_before_answering() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/sessions/s/address-book",
            json!({ "phone": "15550001111", "full_name": "Ann" }),
        )
        .await
        .expect(201);
    switchboard_tests::eventually("the mutation", || async {
        let body = server.get("/api/v1/sessions/s/contacts").await.body;
        (body["contacts"][0]["source"] == "appstate").then_some(())
    })
    .await;
    let incremental = resync(
        &server,
        "s",
        json!({ "collections": ["critical_unblock_low"] }),
    )
    .await
    .expect(200);
    assert_eq!(incremental["all_synced"], true);
    let body = server.get("/api/v1/sessions/s/contacts").await.expect(200);
    assert_eq!(
        body["contacts"][0]["source"], "appstate",
        "nothing new to patch"
    );
    let snapshot = resync(
        &server,
        "s",
        json!({ "collections": ["critical_unblock_low"], "mode": "snapshot" }),
    )
    .await
    .expect(200);
    assert_eq!(snapshot["synced"], json!(["critical_unblock_low"]));
    // Synced means applied and persisted: the directory shows it already.
    let body = server.get("/api/v1/sessions/s/contacts").await.expect(200);
    assert_eq!(body["contacts"][0]["source"], "appstate_sync");
    assert_eq!(body["contacts"][0]["full_name"], "Ann");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_400s_naming_the_field() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    for (body, field) in [
        (json!({ "collections": [] }), "collections"),
        (
            json!({ "collections": ["regular", "contacts"] }),
            "collections[1]",
        ),
        (json!({ "collections": ["Regular"] }), "collections[0]"),
        (
            json!({ "collections": ["regular"], "mode": "full" }),
            "mode",
        ),
        (json!({ "collections": "regular" }), "collections"),
        (json!({}), "collections"),
        (
            json!({ "collections": ["regular"], "force": true }),
            "force",
        ),
    ] {
        let msg = resync(&server, "s", body)
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains(&format!("`{field}`")), "{msg}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_without_a_live_client_is_a_503_and_an_unknown_one_a_404() {
    let server = TestServer::start().await;
    let body = json!({ "collections": ["regular"] });
    server.create_session("never").await;
    resync(&server, "never", body.clone())
        .await
        .expect_error(503, "no_live_client");
    server.paired_session("off").await;
    server
        .post_empty("/api/v1/sessions/off/disconnect")
        .await
        .expect(200);
    resync(&server, "off", body.clone())
        .await
        .expect_error(503, "no_live_client");
    server.paired_session("paused").await;
    server
        .post_empty("/api/v1/sessions/paused/pause")
        .await
        .expect(200);
    resync(&server, "paused", body.clone())
        .await
        .expect_error(503, "no_live_client");
    resync(&server, "ghost", body)
        .await
        .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_collections_in_faults_are_refused() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/sessions/s/faults",
            json!({ "appstate": { "contacts": "fatal" } }),
        )
        .await
        .expect_error(400, "invalid_field");
    server
        .post(
            "/api/v1/sim/sessions/s/faults",
            json!({ "appstate": { "regular": "broken" } }),
        )
        .await
        .expect_error(400, "invalid_field");
}
