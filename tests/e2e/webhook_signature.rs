//! The outbound v2 signature, checked by the test's own HMAC implementation.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::json;
use switchboard_tests::TestServer;
use switchboard_tests::receiver::{
    Received, TestReceiver, add_webhook, inbound, unix_now, verify_v2,
};

#[test]
fn the_test_verifier_agrees_with_an_openssl_reference_vector() {
    // printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
    let headers: BTreeMap<String, String> = [
        ("x-webhook-timestamp", "1700000000"),
        (
            "x-webhook-signature",
            "sha256=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686",
        ),
        ("x-webhook-signature-version", "v2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let mut r = Received {
        method: "POST".into(),
        path: "/hook".into(),
        headers,
        body: br#"{"a":1}"#.to_vec(),
        at: Instant::now(),
        unanswered_before: 0,
    };
    assert!(verify_v2("secret", &r));
    assert!(!verify_v2("Secret", &r));
    r.headers
        .insert("x-webhook-signature-version".into(), "v1".into());
    assert!(!verify_v2("secret", &r), "only v2");
    r.headers.remove("x-webhook-signature-version");
    assert!(
        !verify_v2("secret", &r),
        "a missing version is the legacy scheme"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_delivery_verifies_with_an_independent_hmac_over_timestamp_dot_body() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "secret": "top-secret" }),
    )
    .await;

    let before = unix_now();
    inbound(&server, "s", "signed").await;
    let got = rx.wait_for(1).await.remove(0);
    assert_eq!(got.header("x-webhook-signature-version"), Some("v2"));
    let sig = got.header("x-webhook-signature").expect("a signature");
    let hex = sig.strip_prefix("sha256=").expect("sha256= prefix");
    assert_eq!(hex.len(), 64, "{sig}");
    assert!(
        hex.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "lowercase hex: {sig}"
    );
    let ts: i64 = got
        .header("x-webhook-timestamp")
        .expect("a timestamp")
        .parse()
        .expect("integer seconds");
    assert!(ts >= before - 1 && ts <= unix_now() + 1, "timestamp {ts}");

    assert!(verify_v2("top-secret", &got), "the signature verifies");
    assert!(!verify_v2("wrong-secret", &got), "not with another secret");
    let mut tampered = got.clone();
    tampered.body.push(b' ');
    assert!(!verify_v2("top-secret", &tampered), "not over another body");
}
