//! A plugin blast endpoint: its key is a valid `endpoint`, each recipient is
//! expanded into concrete sends that reach the sim outbox.

use serde_json::json;
use switchboard_tests::plugins::GREETING;

use crate::blasts_support::{create, outbox, server, wait_status};
use crate::plugins_support::{bind, upload};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_greeting_endpoint_renders_one_text_per_recipient() {
    let server = server().await;
    server.paired_session("s").await;
    let body = json!({
        "endpoint": "greeting",
        "body": { "template": "Hello {name}!" },
        "recipients": ["4930000001", "4930000002"],
        "delay_ms": 0,
    });
    let m = server
        .post("/api/v1/sessions/s/blast", body.clone())
        .await
        .expect_error(400, "invalid_field");
    assert!(
        m.contains("greeting"),
        "unknown before a plugin serves it: {m}"
    );
    let p = upload(&server, GREETING).await;
    assert_eq!(p["endpoints"], json!(["greeting"]));
    bind(
        &server,
        &p,
        "blast_endpoint",
        json!({ "config": { "fallback_name": "friend" } }),
    )
    .await;
    let id = create(&server, "s", body).await;
    let job = wait_status(&server, "s", &id, "completed").await;
    assert_eq!(job["sent_count"], 2, "{job}");
    let sent = outbox(&server, "s").await;
    assert_eq!(sent.len(), 2);
    for m in &sent {
        assert_eq!(m["kind"], "text");
        assert_eq!(m["body"]["text"], "Hello friend!", "{m}");
    }
}
