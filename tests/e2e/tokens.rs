//! Minted tokens: the secret shown once and kept nowhere, rotation and
//! revocation taking effect at once (open streams too), a token limited to
//! some sessions seeing only them (lists, the stream, new sessions), and the
//! per-token request rate.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::TestServer;

/// Mints a token; its answer (the token and its secret).
async fn mint(server: &TestServer, body: Value) -> Value {
    server.post("/api/v1/tokens", body).await.expect(201)
}

/// `GET path` with a token; status and JSON body.
async fn get_as(server: &TestServer, path: &str, token: &str) -> (u16, Value) {
    let resp = server
        .http()
        .get(format!("{}{path}", server.base()))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Whether the gateway ends `stream` within ten seconds (whatever it
/// sends before).
async fn ends(stream: &mut switchboard_tests::sse::EventStream) -> bool {
    tokio::time::timeout(Duration::from_secs(10), async {
        while stream.next().await.is_some() {}
    })
    .await
    .is_ok()
}

async fn post_as(server: &TestServer, path: &str, token: &str, body: Value) -> (u16, Value) {
    let resp = server
        .http()
        .post(format!("{}{path}", server.base()))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minted_secret_is_shown_once_and_stored_nowhere() {
    let server = TestServer::start().await;
    server.create_session("crm").await;
    let minted = mint(
        &server,
        json!({ "name": "crm-bridge", "sessions": ["crm"], "scopes": ["read", "send"] }),
    )
    .await;
    let secret = minted["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("sbt_"), "{secret}");
    assert_eq!(secret.len(), 4 + 64);
    let token = &minted["token"];
    assert_eq!(token["name"], "crm-bridge");
    assert_eq!(token["sessions"], json!(["crm"]));
    assert_eq!(token["scopes"], json!(["read", "send"]));
    assert_eq!(token["status"], "active");
    assert_eq!(token["prefix"], &secret[..10]);
    assert!(token.get("hash").is_none() && token.get("secret").is_none());

    let (status, me) = get_as(&server, "/api/v1/tokens/current", &secret).await;
    assert_eq!(status, 200);
    assert_eq!(me["name"], "crm-bridge");
    assert_eq!(me["admin"], false);
    let (status, _) = get_as(&server, "/api/v1/sessions/crm", &secret).await;
    assert_eq!(status, 200);

    // Nowhere after minting: answers, metrics, the data directory's files.
    let list = server.get("/api/v1/tokens").await.expect(200);
    assert!(!list.to_string().contains(&secret));
    let one = server
        .get(&format!("/api/v1/tokens/{}", token["id"].as_str().unwrap()))
        .await
        .expect(200);
    assert!(one["last_used_at"].as_i64().is_some());
    assert!(!one.to_string().contains(&secret));
    let metrics = server.get_text("/metrics").await;
    assert!(!metrics.contains(&secret));
    assert!(
        metrics.contains("token=\"crm-bridge\""),
        "requests are counted by token name"
    );
    let mut files = vec![server.data_dir().to_path_buf()];
    let mut scanned = 0;
    while let Some(p) = files.pop() {
        if p.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                files.push(e.unwrap().path());
            }
        } else if let Ok(bytes) = std::fs::read(&p) {
            scanned += 1;
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds the secret",
                p.display()
            );
        }
    }
    assert!(scanned > 0, "the store's file was scanned");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotating_and_revoking_take_effect_at_once() {
    let server = TestServer::start().await;
    server.create_session("crm").await;
    let minted = mint(
        &server,
        json!({ "name": "ops", "sessions": "*", "scopes": ["read"] }),
    )
    .await;
    let id = minted["token"]["id"].as_str().unwrap().to_owned();
    let old = minted["secret"].as_str().unwrap().to_owned();
    let rotated = server
        .post_empty(&format!("/api/v1/tokens/{id}/rotate"))
        .await
        .expect(200);
    let new = rotated["secret"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    assert_eq!(rotated["token"]["id"], id.as_str());
    assert_eq!(get_as(&server, "/api/v1/sessions", &old).await.0, 401);
    assert_eq!(get_as(&server, "/api/v1/sessions", &new).await.0, 200);

    server
        .delete(&format!("/api/v1/tokens/{id}"))
        .await
        .expect(200);
    let (status, body) = get_as(&server, "/api/v1/sessions", &new).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["message"], "this token was revoked");
    let listed = server
        .get(&format!("/api/v1/tokens/{id}"))
        .await
        .expect(200);
    assert_eq!(listed["status"], "revoked");
    server
        .post_empty(&format!("/api/v1/tokens/{id}/rotate"))
        .await
        .expect_error(409, "token_revoked");
    server
        .delete("/api/v1/tokens/00000000-0000-4000-8000-000000000000")
        .await
        .expect_error(404, "token_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_of_some_sessions_sees_only_them_in_lists_and_on_the_stream() {
    let server = TestServer::start().await;
    server.paired_session("mine").await;
    server.paired_session("theirs").await;
    let minted = mint(
        &server,
        json!({ "name": "tenant-a", "sessions": ["mine"], "scopes": ["read", "send", "manage"] }),
    )
    .await;
    let secret = minted["secret"].as_str().unwrap().to_owned();

    let (_, list) = get_as(&server, "/api/v1/sessions", &secret).await;
    let ids: Vec<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["mine"]);
    let (status, body) = get_as(&server, "/api/v1/sessions/theirs", &secret).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("session_not_found")),
        "another tenant's session is answered as unknown"
    );

    // The stream: only its session's events, whatever the filter asks.
    let resp = server
        .http()
        .get(format!("{}/api/v1/events/stream", server.base()))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut stream = switchboard_tests::sse::EventStream::from_response(resp).await;
    for session in ["theirs", "mine"] {
        server
            .post(
                &format!("/api/v1/sim/sessions/{session}/inbound"),
                json!({ "from": "15550001111", "text": format!("to {session}") }),
            )
            .await
            .expect(200);
    }
    let first = loop {
        let e = stream.next().await.expect("an event");
        if e.event == "message" {
            break e.json();
        }
    };
    assert_eq!(
        first["session_id"], "mine",
        "the other session's message never came"
    );

    // A new session it creates joins its set.
    let (status, _) = post_as(
        &server,
        "/api/v1/sessions",
        &secret,
        json!({ "id": "mine-2" }),
    )
    .await;
    assert_eq!(status, 201);
    let (_, me) = get_as(&server, "/api/v1/tokens/current", &secret).await;
    assert_eq!(me["sessions"], json!(["mine", "mine-2"]));

    // Revoking it ends its open stream.
    server
        .delete(&format!(
            "/api/v1/tokens/{}",
            minted["token"]["id"].as_str().unwrap()
        ))
        .await
        .expect(200);
    assert!(ends(&mut stream).await, "the revoked token's stream ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_over_its_rate_gets_429_with_retry_after_until_its_window_passes() {
    let window = Duration::from_millis(1500);
    let server = TestServer::start_with(|c| c.token_rate_window = window).await;
    server.create_session("s").await;
    let minted = mint(
        &server,
        json!({ "name": "busy", "sessions": ["s"], "scopes": ["read"], "rate_per_minute": 2 }),
    )
    .await;
    let secret = minted["secret"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        assert_eq!(get_as(&server, "/api/v1/sessions/s", &secret).await.0, 200);
    }
    let resp = server
        .http()
        .get(format!("{}/api/v1/sessions/s", server.base()))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 429);
    let retry: u64 = resp.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry), "{retry}");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");
    tokio::time::sleep(window).await;
    assert_eq!(
        get_as(&server, "/api/v1/sessions/s", &secret).await.0,
        200,
        "a new window admits it again"
    );
    // The admin token has no rate.
    for _ in 0..5 {
        server.get("/api/v1/sessions/s").await.expect(200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minting_refuses_bad_bodies_and_scoped_tokens_cannot_mint() {
    let server = TestServer::start().await;
    for body in [
        json!({ "name": " ", "sessions": "*", "scopes": ["read"] }),
        json!({ "name": "x", "sessions": "*", "scopes": [] }),
        json!({ "name": "x", "sessions": "all", "scopes": ["read"] }),
        json!({ "name": "x", "sessions": ["bad id!"], "scopes": ["read"] }),
        json!({ "name": "x", "sessions": "*", "scopes": ["root"] }),
        json!({ "name": "x", "sessions": "*", "scopes": ["read"], "expires_in_seconds": 0 }),
        json!({ "name": "x", "sessions": "*", "scopes": ["read"], "rate_per_minute": 0 }),
        json!({ "name": "x", "sessions": "*", "scopes": ["read"], "extra": 1 }),
    ] {
        let got = server.post("/api/v1/tokens", body.clone()).await;
        assert_eq!(got.status.as_u16(), 400, "{body}: {:?}", got.body);
    }
    let manage = mint(
        &server,
        json!({ "name": "m", "sessions": "*", "scopes": ["read", "send", "manage"] }),
    )
    .await;
    let secret = manage["secret"].as_str().unwrap();
    let (status, body) = post_as(
        &server,
        "/api/v1/tokens",
        secret,
        json!({ "name": "escalate", "sessions": "*", "scopes": ["admin"] }),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("forbidden"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minted_token_lists_webhooks_without_their_secrets() {
    let server = TestServer::start().await;
    server.create_session("s").await;
    server
        .post(
            "/api/v1/sessions/s/webhooks",
            json!({ "url": "https://hooks.example.com/in", "secret": "s3cret" }),
        )
        .await
        .expect(201);
    let minted = mint(
        &server,
        json!({ "name": "reader", "sessions": ["s"], "scopes": ["read"] }),
    )
    .await;
    let (status, list) = get_as(
        &server,
        "/api/v1/sessions/s/webhooks",
        minted["secret"].as_str().unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(list["webhooks"][0]["secret"], Value::Null);
    assert_eq!(list["webhooks"][0]["signed"], true);
    let admin = server.get("/api/v1/sessions/s/webhooks").await.expect(200);
    assert_eq!(admin["webhooks"][0]["secret"], "s3cret");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_the_gateways_log_even_at_debug_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchboard-e2e"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--network", "sim"])
        .arg("--data-dir")
        .arg(dir.path())
        .env("API_TOKEN", switchboard_tests::TOKEN)
        .env("SWITCHBOARD_LOG", "debug");
    let gateway = switchboard_tests::process::GatewayProcess::start(cmd).await;
    let http = switchboard_tests::http_client();
    let admin = |req: reqwest::RequestBuilder| req.bearer_auth(switchboard_tests::TOKEN);
    let minted: Value = admin(http.post(format!("{}/api/v1/tokens", gateway.base)))
        .json(&json!({ "name": "logged", "sessions": "*", "scopes": ["read"] }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let first = minted["secret"].as_str().unwrap().to_owned();
    let id = minted["token"]["id"].as_str().unwrap().to_owned();
    let used = http
        .get(format!("{}/api/v1/sessions", gateway.base))
        .bearer_auth(&first)
        .send()
        .await
        .unwrap();
    assert_eq!(used.status().as_u16(), 200);
    let rotated: Value = admin(http.post(format!("{}/api/v1/tokens/{id}/rotate", gateway.base)))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let second = rotated["secret"].as_str().unwrap().to_owned();
    for secret in [&first, &second] {
        let _ = http
            .get(format!("{}/api/v1/sessions", gateway.base))
            .bearer_auth(secret)
            .send()
            .await
            .unwrap();
    }
    let out = gateway.stdout.text();
    let err = gateway.stderr.text();
    assert!(out.contains("token minted"), "the log is read: {out}");
    for secret in [&first, &second] {
        assert!(!out.contains(secret.as_str()) && !err.contains(secret.as_str()));
    }
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_id_stays_with_its_tenant_and_leaves_every_token_when_deleted() {
    let server = TestServer::start().await;
    // The operator provisions tenant A's session id before the session exists.
    let a = mint(
        &server,
        json!({ "name": "a", "sessions": ["acme"], "scopes": ["read", "manage"] }),
    )
    .await;
    let b = mint(
        &server,
        json!({ "name": "b", "sessions": ["bravo"], "scopes": ["read", "manage"] }),
    )
    .await;
    let (a_secret, b_secret) = (
        a["secret"].as_str().unwrap().to_owned(),
        b["secret"].as_str().unwrap().to_owned(),
    );
    let (status, body) = post_as(
        &server,
        "/api/v1/sessions",
        &b_secret,
        json!({ "id": "acme" }),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("session_exists")),
        "another tenant cannot take a kept id"
    );
    let (status, _) = post_as(
        &server,
        "/api/v1/sessions",
        &a_secret,
        json!({ "id": "acme" }),
    )
    .await;
    assert_eq!(status, 201);

    // Deleted, the id leaves every token: a later `acme` is not A's.
    let resp = server
        .http()
        .delete(format!("{}/api/v1/sessions/acme", server.base()))
        .bearer_auth(&a_secret)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let (_, me) = get_as(&server, "/api/v1/tokens/current", &a_secret).await;
    assert_eq!(me["sessions"], json!([]));
    let (status, _) = post_as(
        &server,
        "/api/v1/sessions",
        &b_secret,
        json!({ "id": "acme" }),
    )
    .await;
    assert_eq!(status, 201, "a free id again");
    let (status, _) = get_as(&server, "/api/v1/sessions/acme", &a_secret).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_over_a_list_of_sessions_opens_nothing_beyond_them() {
    let server = TestServer::start().await;
    server.create_session("a").await;
    server.create_session("b").await;
    let limited = mint(
        &server,
        json!({ "name": "x", "sessions": ["a"], "scopes": ["admin"] }),
    )
    .await;
    let secret = limited["secret"].as_str().unwrap();
    // Its own session: everything the other scopes open.
    assert_eq!(get_as(&server, "/api/v1/sessions/a", secret).await.0, 200);
    // What no session limits: refused.
    let (status, body) = post_as(
        &server,
        "/api/v1/tokens",
        secret,
        json!({ "name": "escalate", "sessions": "*", "scopes": ["admin"] }),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("forbidden"))
    );
    assert_eq!(get_as(&server, "/api/v1/plugins", secret).await.0, 403);
    assert_eq!(get_as(&server, "/api/v1/sessions/b", secret).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotating_a_token_ends_the_streams_opened_with_its_old_secret() {
    let server = TestServer::start().await;
    server.create_session("s").await;
    let minted = mint(
        &server,
        json!({ "name": "watcher", "sessions": ["s"], "scopes": ["read"] }),
    )
    .await;
    let resp = server
        .http()
        .get(format!("{}/api/v1/events/stream", server.base()))
        .bearer_auth(minted["secret"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    let mut stream = switchboard_tests::sse::EventStream::from_response(resp).await;
    server
        .post_empty(&format!(
            "/api/v1/tokens/{}/rotate",
            minted["token"]["id"].as_str().unwrap()
        ))
        .await
        .expect(200);
    assert!(ends(&mut stream).await, "the old secret's stream ended");
}
