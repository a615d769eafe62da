//! Every error status of the API, each with its JSON body, and proof that a
//! refused request changed nothing.

use reqwest::Method;
use serde_json::json;
use switchboard_tests::{TOKEN, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_is_a_400_that_creates_nothing() {
    let server = TestServer::start().await;
    let resp = server
        .http()
        .post(format!("{}/api/v1/sessions", server.base()))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body("{\"id\": \"a\",")
        .send()
        .await
        .unwrap();
    TestServer::read(resp)
        .await
        .expect_error(400, "malformed_json");
    assert_eq!(server.get("/api/v1/sessions").await.expect(200)["count"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_of_the_wrong_type_is_a_400_naming_the_field() {
    let server = TestServer::start().await;
    let msg = server
        .post("/api/v1/sessions", json!({ "id": 5 }))
        .await
        .expect_error(400, "invalid_field");
    assert!(msg.contains("id"), "{msg}");
    let msg = server
        .post("/api/v1/sessions", json!({ "idd": "x" }))
        .await
        .expect_error(400, "invalid_field");
    assert!(msg.contains("idd"), "{msg}");
    let msg = server
        .post("/api/v1/sessions", json!({ "id": "a/b" }))
        .await
        .expect_error(400, "invalid_field");
    assert!(msg.contains("`id`"), "{msg}");
    let msg = server
        .post("/api/v1/sessions", json!({ "network": "carrier-pigeon" }))
        .await
        .expect_error(400, "invalid_field");
    assert!(msg.contains("carrier-pigeon"), "{msg}");
    assert_eq!(server.get("/api/v1/sessions").await.expect(200)["count"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_session_is_a_404_on_every_session_route() {
    let server = TestServer::start().await;
    for (method, path) in [
        (Method::GET, "/api/v1/sessions/ghost"),
        (Method::GET, "/api/v1/sessions/ghost/status"),
        (Method::DELETE, "/api/v1/sessions/ghost"),
        (Method::POST, "/api/v1/sessions/ghost/connect"),
        (Method::POST, "/api/v1/sessions/ghost/disconnect"),
        (Method::POST, "/api/v1/sessions/ghost/logout"),
        (Method::POST, "/api/v1/sessions/ghost/pause"),
        (Method::POST, "/api/v1/sessions/ghost/resume"),
        (Method::GET, "/api/v1/sessions/ghost/qr"),
        (Method::GET, "/api/v1/sessions/ghost/messages"),
    ] {
        let resp = server.call(method.clone(), path, None).await;
        assert_eq!(resp.status, 404, "{method} {path}: {}", resp.body);
        assert_eq!(
            resp.body["error"]["code"], "session_not_found",
            "{method} {path}"
        );
    }
    server
        .post(
            "/api/v1/sessions/ghost/messages/text",
            json!({ "to": "15550000001", "text": "hi" }),
        )
        .await
        .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_route_is_a_json_404_and_a_wrong_method_a_json_405() {
    let server = TestServer::start().await;
    server
        .get("/api/v1/nothing-here")
        .await
        .expect_error(404, "route_not_found");
    server
        .call(Method::PUT, "/api/v1/sessions", None)
        .await
        .expect_error(405, "method_not_allowed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_session_id_is_a_409_that_keeps_the_first() {
    let server = TestServer::start().await;
    server
        .post("/api/v1/sessions", json!({ "id": "dup", "name": "first" }))
        .await
        .expect(201);
    server
        .post("/api/v1/sessions", json!({ "id": "dup", "name": "second" }))
        .await
        .expect_error(409, "session_exists");
    assert_eq!(
        server.get("/api/v1/sessions/dup").await.expect(200)["name"],
        "first"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sending_on_a_paused_session_is_a_409_and_sends_nothing() {
    let server = TestServer::start().await;
    server.paired_session("p").await;
    server
        .post_empty("/api/v1/sessions/p/pause")
        .await
        .expect(200);
    server
        .post(
            "/api/v1/sessions/p/messages/text",
            json!({ "to": "15550000001", "text": "hi" }),
        )
        .await
        .expect_error(409, "session_paused");
    assert_eq!(
        server
            .get("/api/v1/sim/sessions/p/outbox")
            .await
            .expect(200)["count"],
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_is_a_413() {
    let server = TestServer::start_with(|c| c.max_body_bytes = 1024).await;
    let big = "x".repeat(4096);
    server
        .post("/api/v1/sessions", json!({ "name": big }))
        .await
        .expect_error(413, "payload_too_large");
    assert_eq!(server.get("/api/v1/sessions").await.expect(200)["count"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_without_a_json_content_type_is_a_415() {
    let server = TestServer::start().await;
    let resp = server
        .http()
        .post(format!("{}/api/v1/sessions", server.base()))
        .bearer_auth(TOKEN)
        .header("content-type", "text/plain")
        .body("{\"id\":\"a\"}")
        .send()
        .await
        .unwrap();
    TestServer::read(resp)
        .await
        .expect_error(415, "unsupported_media_type");
}
