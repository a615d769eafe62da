//! The authorization matrix, generated from the routes the router really
//! serves: every authenticated route × {no token, a wrong token, a revoked
//! token, an expired token, the admin token, a token of the route's session
//! with the route's scope, the same token on another session, a token
//! lacking the scope} → the expected answer. A route the scope table does
//! not declare fails it.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use switchboard::api::scopes::{self, Access};
use switchboard::domain::token::Scope;
use switchboard_tests::assembled::Assembled;
use switchboard_tests::{TOKEN, TestServer};

/// What one request got: its status and, when JSON, its error code.
#[derive(Debug)]
struct Got {
    status: u16,
    code: Option<String>,
    shaped: bool,
}

/// Sends one request; an event stream's answer is judged by its head alone.
async fn call(server: &TestServer, method: &str, path: &str, token: Option<&str>) -> Got {
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = server
        .http()
        .request(method.clone(), format!("{}{path}", server.base()))
        .timeout(Duration::from_secs(20));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if method == Method::POST || method == Method::PUT {
        req = req.json(&json!({}));
    }
    let resp = req.send().await.expect("the request is answered");
    let status = resp.status().as_u16();
    let json = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("application/json"));
    if !json {
        return Got {
            status,
            code: None,
            shaped: false,
        };
    }
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    let code = body["error"]["code"].as_str().map(str::to_owned);
    let shaped = body["success"] == false
        && body["error"]["code"].is_string()
        && body["error"]["message"].is_string();
    Got {
        status,
        code,
        shaped,
    }
}

/// A concrete path for a route template: `{id}` is `session`, the other
/// parameters are placeholders of their kind.
fn concrete(template: &str, session: &str) -> String {
    template
        .split('/')
        .map(|seg| match seg {
            "{id}" => session.to_owned(),
            "{kind}" => "text".into(),
            "{jid}" => "15550001111@s.whatsapp.net".into(),
            "{group}" => "120363000000000001@g.us".into(),
            "{entry_id}" => "1".into(),
            "{media_id}" => "m1".into(),
            s if s.starts_with('{') => "00000000-0000-4000-8000-000000000000".into(),
            s => s.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

async fn mint(server: &TestServer, body: Value) -> (String, String) {
    let got = server.post("/api/v1/tokens", body).await.expect(201);
    (
        got["token"]["id"].as_str().unwrap().to_owned(),
        got["secret"].as_str().unwrap().to_owned(),
    )
}

fn refused(got: &Got, status: u16, code: &str, what: &str) {
    assert_eq!(got.status, status, "{what}: {got:?}");
    assert_eq!(got.code.as_deref(), Some(code), "{what}: {got:?}");
    assert!(got.shaped, "{what}: the usual error body: {got:?}");
}

fn let_through(got: &Got, what: &str) {
    assert!(
        got.status != 401 && got.status != 403 && got.code.as_deref() != Some("session_not_found"),
        "{what}: let through, got {got:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_answers_each_kind_of_caller_as_its_declared_scope_says() {
    let routes = Assembled::new(true).await.routes();
    let authenticated: Vec<_> = routes
        .into_iter()
        .filter(|r| {
            (r.path.starts_with("/api/v1/") && r.path != "/api/v1/openapi.json")
                || r.path == "/metrics"
        })
        .collect();
    assert!(
        authenticated.len() > 100,
        "the router's authenticated routes were read: {}",
        authenticated.len()
    );
    let undeclared: Vec<String> = authenticated
        .iter()
        .filter(|r| {
            let m = reqwest::Method::from_bytes(r.method.as_bytes()).unwrap();
            scopes::access(&m, &r.path).is_none()
        })
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(
        undeclared.is_empty(),
        "routes without a declared scope (add them to host/api/src/scopes.rs): {undeclared:#?}"
    );

    let server = TestServer::start().await;
    server.create_session("other").await;
    let (revoked_id, revoked) = mint(
        &server,
        json!({ "name": "revoked", "sessions": "*", "scopes": ["admin"] }),
    )
    .await;
    server
        .delete(&format!("/api/v1/tokens/{revoked_id}"))
        .await
        .expect(200);
    let (_, expired) = mint(
        &server,
        json!({ "name": "expired", "sessions": "*", "scopes": ["admin"], "expires_in_seconds": 1 }),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(2100)).await;

    for (i, route) in authenticated.iter().enumerate() {
        let m = reqwest::Method::from_bytes(route.method.as_bytes()).unwrap();
        let access = scopes::access(&m, &route.path).unwrap();
        let session = format!("m{i}");
        server.create_session(&session).await;
        let path = concrete(&route.path, &session);
        let what = |who: &str| format!("{} {} as {who}", route.method, route.path);
        let method = route.method.as_str();

        refused(
            &call(&server, method, &path, None).await,
            401,
            "unauthorized",
            &what("no token"),
        );
        refused(
            &call(&server, method, &path, Some("sbt_0000000000000000")).await,
            401,
            "unauthorized",
            &what("a wrong token"),
        );
        refused(
            &call(&server, method, &path, Some(&revoked)).await,
            401,
            "unauthorized",
            &what("a revoked token"),
        );
        refused(
            &call(&server, method, &path, Some(&expired)).await,
            401,
            "unauthorized",
            &what("an expired token"),
        );

        let needed = match access {
            Access::Any => Scope::Read,
            Access::Needs(s) => s,
        };
        // `admin` is minted over every session only.
        let sessions = if needed == Scope::Admin {
            json!("*")
        } else {
            json!([session])
        };
        let (_, right) = mint(
            &server,
            json!({ "name": format!("right-{i}"), "sessions": sessions, "scopes": [needed.as_str()] }),
        )
        .await;
        let session_route = scopes::session_of(&route.path, &path).is_some();
        if session_route {
            let elsewhere = concrete(&route.path, "other");
            refused(
                &call(&server, method, &elsewhere, Some(&right)).await,
                404,
                "session_not_found",
                &what("a token of another session"),
            );
        }
        if let Access::Needs(scope) = access {
            let others: Vec<&str> = Scope::ALL
                .iter()
                .filter(|s| **s != scope && **s != Scope::Admin)
                .map(|s| s.as_str())
                .collect();
            let (_, lacking) = mint(
                &server,
                json!({ "name": format!("lacking-{i}"), "sessions": [session], "scopes": others }),
            )
            .await;
            refused(
                &call(&server, method, &path, Some(&lacking)).await,
                403,
                "forbidden",
                &what("a token lacking the scope"),
            );
        }
        let_through(
            &call(&server, method, &path, Some(&right)).await,
            &what("a token of the session with the scope"),
        );
        // The admin acts on a session of its own: the scoped token's call
        // may have changed or deleted the first one.
        let admins = format!("a{i}");
        server.create_session(&admins).await;
        let_through(
            &call(
                &server,
                method,
                &concrete(&route.path, &admins),
                Some(TOKEN),
            )
            .await,
            &what("the admin token"),
        );
    }
}
