//! App-state resync on the real network, through the wire server: each
//! collection asked for is fetched from the server by the crate, answered
//! `synced` once its fetch was applied and persisted, and `retryable` while
//! the server refuses it (the crate keeps retrying in the background).

use serde_json::{Value, json};
use switchboard_tests::wire::{GATEWAY_PHONE, Wired};
use switchboard_wire::Seen;

async fn resync(w: &Wired, body: Value) -> switchboard_tests::Resp {
    w.server
        .post("/api/v1/sessions/wa/appstate/resync", body)
        .await
}

/// How many times the gateway's account asked the server for `collection`.
fn asked(w: &Wired, collection: &str) -> usize {
    w.wire.count(|s| {
        matches!(s, Seen::AppStateAsked { phone, collection: c, .. }
            if phone == GATEWAY_PHONE && c == collection)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resync_fetches_each_collection_from_the_server_and_answers_synced() {
    let w = Wired::start().await;
    w.linked("wa").await;
    let before = (asked(&w, "regular"), asked(&w, "critical_block"));
    let body = resync(
        &w,
        json!({ "collections": ["regular", "critical_block"], "mode": "snapshot" }),
    )
    .await
    .expect(200);
    assert_eq!(
        body,
        json!({
            "synced": ["regular", "critical_block"],
            "fatal": [], "retryable": [], "skipped": [],
            "all_synced": true,
        })
    );
    assert!(asked(&w, "regular") > before.0, "regular was fetched");
    assert!(
        asked(&w, "critical_block") > before.1,
        "critical_block was fetched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collection_the_server_refuses_is_retryable_and_syncs_once_it_answers_again() {
    let w = Wired::start().await;
    w.linked("wa").await;
    // A first resync waits for the sync the login started (the crate lets
    // one sync of a collection run at a time), so what follows is ours.
    resync(&w, json!({ "collections": ["regular_low"] }))
        .await
        .expect(200);
    w.wire.refuse_app_state(GATEWAY_PHONE, Some(500));
    let body = resync(&w, json!({ "collections": ["regular_low"] }))
        .await
        .expect(200);
    assert_eq!(body["retryable"], json!(["regular_low"]), "{body}");
    assert_eq!(body["all_synced"], false, "{body}");

    w.wire.refuse_app_state(GATEWAY_PHONE, None);
    let body = resync(&w, json!({ "collections": ["regular_low"] }))
        .await
        .expect(200);
    assert_eq!(body["synced"], json!(["regular_low"]), "{body}");
    assert_eq!(body["all_synced"], true, "{body}");
}
