//! Authentication of `/api/v1` and the public health routes.

use serde_json::Value;
use switchboard_tests::{TOKEN, TestServer};

async fn get_with(server: &TestServer, auth: Option<&str>) -> switchboard_tests::Resp {
    let mut req = server
        .http()
        .get(format!("{}/api/v1/sessions", server.base()));
    if let Some(a) = auth {
        req = req.header("Authorization", a);
    }
    TestServer::read(req.send().await.unwrap()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_a_token_is_refused_with_a_bearer_challenge() {
    let server = TestServer::start().await;
    let resp = get_with(&server, None).await;
    assert_eq!(resp.headers["www-authenticate"], "Bearer");
    resp.expect_error(401, "unauthorized");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_or_scheme_is_refused() {
    let server = TestServer::start().await;
    get_with(&server, Some("Bearer not-the-token"))
        .await
        .expect_error(401, "unauthorized");
    get_with(&server, Some(&format!("Bearer {TOKEN}x")))
        .await
        .expect_error(401, "unauthorized");
    get_with(&server, Some(&format!("Basic {TOKEN}")))
        .await
        .expect_error(401, "unauthorized");
    get_with(&server, Some("Bearer"))
        .await
        .expect_error(401, "unauthorized");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_right_token_is_accepted_whatever_the_scheme_case() {
    let server = TestServer::start().await;
    let body = get_with(&server, Some(&format!("Bearer {TOKEN}")))
        .await
        .expect(200);
    assert_eq!(body["count"], 0);
    get_with(&server, Some(&format!("bearer {TOKEN}")))
        .await
        .expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_routes_answer_without_a_token() {
    let server = TestServer::start().await;
    for path in ["/livez", "/readyz"] {
        let resp = server
            .http()
            .get(format!("{}{path}", server.base()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        let body: Value = resp.json().await.unwrap();
        assert!(body["status"].is_string());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_token_is_written_owner_only_and_used() {
    let server = TestServer::start_with(|c| c.api_token = None).await;
    let path = server.data_dir().join("api-token");
    let token = std::fs::read_to_string(&path).unwrap().trim().to_owned();
    assert_eq!(token.len(), 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    get_with(&server, Some(&format!("Bearer {token}")))
        .await
        .expect(200);
    get_with(&server, Some(&format!("Bearer {TOKEN}")))
        .await
        .expect_error(401, "unauthorized");
}
