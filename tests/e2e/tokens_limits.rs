//! What a token is held to: a token limited to some sessions holds at most
//! `--token-max-sessions` of them; a taken id outside its set gets one
//! answer however it is taken, so creating a session tells it nothing about
//! the sessions it cannot see; an admin token too short to be safe stops the
//! gateway at start, saying how to set a longer one; and a token's last use,
//! kept off the request path, survives a clean stop.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::TestServer;

async fn mint(server: &TestServer, body: Value) -> String {
    let minted = server.post("/api/v1/tokens", body).await.expect(201);
    minted["secret"].as_str().unwrap().to_owned()
}

async fn call_as(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = server
        .http()
        .request(method, format!("{}{path}", server.base()))
        .bearer_auth(token);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

async fn create_as(server: &TestServer, token: &str, id: &str) -> (u16, Value) {
    call_as(
        server,
        reqwest::Method::POST,
        "/api/v1/sessions",
        token,
        Some(json!({ "id": id })),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_token_cannot_create_more_sessions_than_its_limit() {
    let server = TestServer::start_with(|c| c.token_max_sessions = 2).await;
    let tenant = mint(
        &server,
        json!({ "name": "tenant", "sessions": [], "scopes": ["read", "manage"] }),
    )
    .await;
    assert_eq!(create_as(&server, &tenant, "t1").await.0, 201);
    assert_eq!(create_as(&server, &tenant, "t2").await.0, 201);
    let (status, body) = create_as(&server, &tenant, "t3").await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "session_limit_reached", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("2 sessions") && message.contains("--token-max-sessions"),
        "the answer names the limit: {message}"
    );
    // Nothing was created, and a generated id is held to it too.
    server.get("/api/v1/sessions/t3").await.expect(404);
    let (status, body) = call_as(
        &server,
        reqwest::Method::POST,
        "/api/v1/sessions",
        &tenant,
        None,
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("session_limit_reached"))
    );
    // Deleting one gives its place back.
    let (status, _) = call_as(
        &server,
        reqwest::Method::DELETE,
        "/api/v1/sessions/t1",
        &tenant,
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(create_as(&server, &tenant, "t3").await.0, 201);
    // The admin token, and a token over every session, have no such limit.
    server.create_session("a1").await;
    server.create_session("a2").await;
    server.create_session("a3").await;
    let star = mint(
        &server,
        json!({ "name": "star", "sessions": "*", "scopes": ["manage"] }),
    )
    .await;
    assert_eq!(create_as(&server, &star, "s1").await.0, 201);
    // Minting over the limit is refused, naming it.
    let msg = server
        .post(
            "/api/v1/tokens",
            json!({ "name": "big", "sessions": ["x", "y", "z"], "scopes": ["read"] }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(msg.contains("at most 2"), "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creating_a_taken_id_outside_its_set_tells_a_token_nothing_about_other_sessions() {
    let server = TestServer::start().await;
    // One id held by a session the tenant cannot see, one kept for another
    // tenant's token before it exists, and one free.
    server.create_session("hidden").await;
    mint(
        &server,
        json!({ "name": "other", "sessions": ["kept"], "scopes": ["manage"] }),
    )
    .await;
    let tenant = mint(
        &server,
        json!({ "name": "tenant", "sessions": [], "scopes": ["read", "manage"] }),
    )
    .await;
    let (existing_status, existing) = create_as(&server, &tenant, "hidden").await;
    let (kept_status, kept) = create_as(&server, &tenant, "kept").await;
    assert_eq!((existing_status, kept_status), (409, 409));
    assert_eq!(existing["error"]["code"], "session_exists");
    // Word for word the same answer, but for the id it names.
    let same = |v: &Value, id: &str| v.to_string().replace(id, "<id>");
    assert_eq!(same(&existing, "hidden"), same(&kept, "kept"));
    // Neither joined its set; the hidden session is still hidden.
    let (_, me) = call_as(
        &server,
        reqwest::Method::GET,
        "/api/v1/tokens/current",
        &tenant,
        None,
    )
    .await;
    assert_eq!(me["sessions"], json!([]));
    let (status, _) = call_as(
        &server,
        reqwest::Method::GET,
        "/api/v1/sessions/hidden",
        &tenant,
        None,
    )
    .await;
    assert_eq!(status, 404);
    // Its own session, once created, answers as taken in the plain words.
    assert_eq!(create_as(&server, &tenant, "mine").await.0, 201);
    let (status, again) = create_as(&server, &tenant, "mine").await;
    assert_eq!(status, 409);
    assert_eq!(again["error"]["code"], "session_exists");
}

/// Runs `serve` with `env` and waits for it to exit; its status and stderr.
async fn serve_exits(dir: &std::path::Path, env: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchboard-e2e"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--network", "sim"])
        .arg("--data-dir")
        .arg(dir)
        .env_remove("API_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("the gateway starts");
    // A gateway that accepts the token serves until killed: the guard turns
    // that into a failure instead of a hung test.
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the gateway exited instead of serving")
        .expect("its output");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_token_shorter_than_sixteen_characters_stops_the_gateway_saying_how_to_set_a_longer_one()
 {
    let dir = tempfile::tempdir().unwrap();
    let (ok, err) = serve_exits(dir.path(), &[("API_TOKEN", "short-token")]).await;
    assert!(!ok, "{err}");
    assert!(
        err.contains("API_TOKEN") && err.contains("at least 16") && err.contains("11 characters"),
        "{err}"
    );
    // Nothing was opened: no store was written.
    assert!(!dir.path().join("switchboard.redb").exists());

    // A token file holding a short token is refused the same way, naming
    // the file.
    std::fs::write(dir.path().join("api-token"), "tiny\n").unwrap();
    let (ok, err) = serve_exits(dir.path(), &[]).await;
    assert!(!ok, "{err}");
    assert!(
        err.contains("api-token") && err.contains("at least 16"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokens_last_use_is_kept_across_a_clean_stop() {
    let mut server = TestServer::start().await;
    let minted = server
        .post(
            "/api/v1/tokens",
            json!({ "name": "used", "sessions": "*", "scopes": ["read"] }),
        )
        .await
        .expect(201);
    let id = minted["token"]["id"].as_str().unwrap().to_owned();
    let secret = minted["secret"].as_str().unwrap().to_owned();
    let (status, _) = call_as(
        &server,
        reqwest::Method::GET,
        "/api/v1/sessions",
        &secret,
        None,
    )
    .await;
    assert_eq!(status, 200);
    let seen = server
        .get(&format!("/api/v1/tokens/{id}"))
        .await
        .expect(200);
    assert!(seen["last_used_at"].as_i64().is_some(), "{seen}");
    server.restart().await;
    let after = server
        .get(&format!("/api/v1/tokens/{id}"))
        .await
        .expect(200);
    assert_eq!(after["last_used_at"], seen["last_used_at"], "{after}");
}
