//! A session's proxy through the HTTP API (on the sim, which keeps and
//! shows it; the real network's use of it is `wire_proxy.rs`): given at
//! create, shown without its credentials, changed, cleared back to the
//! gateway's default, kept sealed across a restart, and every malformed
//! proxy refused with the field and the reason.

use serde_json::json;
use switchboard_tests::TestServer;

const PASSWORD: &str = "Sup3r-secret-proxy-pw";

#[tokio::test]
async fn a_proxy_given_at_create_is_shown_without_its_credentials_and_survives_a_restart() {
    let mut s = TestServer::start_with(|c| {
        c.proxy = Some(
            switchboard::domain::proxy::Proxy::parse("http://10.0.0.9:3128", None, None).unwrap(),
        );
    })
    .await;
    let created = s
        .post(
            "/api/v1/sessions",
            json!({
                "id": "p1",
                "proxy": { "url": "socks5://proxy.example:1080", "username": "al", "password": PASSWORD },
            }),
        )
        .await
        .expect(201);
    assert_eq!(
        created["proxy"],
        json!({ "url": "socks5://proxy.example:1080", "credentials": true })
    );
    assert!(!created.to_string().contains(PASSWORD));

    let plain = s
        .post("/api/v1/sessions", json!({ "id": "p2" }))
        .await
        .expect(201);
    assert_eq!(plain["proxy"], json!(null), "{plain}");
    let default = s.get("/api/v1/sessions/p2/proxy").await.expect(200);
    assert_eq!(default["source"], "default", "{default}");
    assert_eq!(
        default["effective"],
        json!({ "url": "http://10.0.0.9:3128", "credentials": false })
    );

    s.restart().await;
    let after = s.get("/api/v1/sessions/p1/proxy").await.expect(200);
    assert_eq!(after["source"], "session", "{after}");
    assert_eq!(
        after["effective"],
        json!({ "url": "socks5://proxy.example:1080", "credentials": true }),
        "the sealed credentials open again after a restart: {after}"
    );
    let listed = s.get("/api/v1/sessions").await.expect(200);
    assert!(!listed.to_string().contains(PASSWORD), "{listed}");
}

#[tokio::test]
async fn a_proxy_is_changed_set_to_a_direct_connection_and_cleared_back_to_the_default() {
    let s = TestServer::start().await;
    s.post("/api/v1/sessions", json!({ "id": "p" }))
        .await
        .expect(201);
    let none = s.get("/api/v1/sessions/p/proxy").await.expect(200);
    assert_eq!(
        none,
        json!({ "proxy": null, "effective": null, "source": "none", "reconnected": false })
    );

    let set = s
        .put(
            "/api/v1/sessions/p/proxy",
            json!({ "url": format!("http://user:{PASSWORD}@[::1]:8080") }),
        )
        .await
        .expect(200);
    assert_eq!(
        set["effective"],
        json!({ "url": "http://[::1]:8080", "credentials": true })
    );
    assert_eq!(set["reconnected"], false, "a disconnected session is not");
    assert!(!set.to_string().contains(PASSWORD));
    let session = s.get("/api/v1/sessions/p").await.expect(200);
    assert_eq!(session["proxy"]["url"], "http://[::1]:8080", "{session}");

    let direct = s
        .put("/api/v1/sessions/p/proxy", json!({ "url": "none" }))
        .await
        .expect(200);
    assert_eq!(
        direct["proxy"],
        json!({ "url": "none", "credentials": false })
    );
    assert_eq!(direct["effective"], json!(null));
    assert_eq!(direct["source"], "session");

    let cleared = s.delete("/api/v1/sessions/p/proxy").await.expect(200);
    assert_eq!(cleared["proxy"], json!(null));
    assert_eq!(cleared["source"], "none");
}

#[tokio::test]
async fn a_connected_session_whose_proxy_changes_reconnects_at_once() {
    let s = TestServer::start().await;
    s.post(
        "/api/v1/sessions",
        json!({ "id": "c", "phone": "15550001234" }),
    )
    .await
    .expect(201);
    s.post_empty("/api/v1/sessions/c/connect").await.expect(200);
    s.post_empty("/api/v1/sim/sessions/c/scan")
        .await
        .expect(200);
    switchboard_tests::eventually("logged in", || async {
        let st = s.get("/api/v1/sessions/c/status").await.body;
        (st["status"] == "logged_in").then_some(())
    })
    .await;
    let changed = s
        .put(
            "/api/v1/sessions/c/proxy",
            json!({ "url": "socks5://127.0.0.1:1080" }),
        )
        .await
        .expect(200);
    assert_eq!(changed["reconnected"], true, "{changed}");
    switchboard_tests::eventually("logged in again", || async {
        let st = s.get("/api/v1/sessions/c/status").await.body;
        (st["status"] == "logged_in").then_some(())
    })
    .await;
}

#[tokio::test]
async fn malformed_proxies_are_refused_with_the_field_and_the_reason_and_never_echo_a_password() {
    let s = TestServer::start().await;
    s.post("/api/v1/sessions", json!({ "id": "b" }))
        .await
        .expect(201);
    let long = "u".repeat(256);
    for (body, why) in [
        (json!({ "url": "ftp://h:21" }), "socks5"),
        (json!({ "url": "https://h:443" }), "https proxy"),
        (json!({ "url": "socks5://h" }), "port"),
        (json!({ "url": "socks5://h:1080/x" }), "path"),
        (json!({ "url": "" }), "not a proxy URL"),
        (
            json!({ "url": "socks5://h:1", "username": long }),
            "longer than 255",
        ),
        (
            json!({ "url": "none", "password": PASSWORD }),
            "takes no username",
        ),
    ] {
        let message = s
            .put("/api/v1/sessions/b/proxy", body.clone())
            .await
            .expect_error(400, "invalid_field");
        assert!(message.contains("proxy.url"), "{body}: {message}");
        assert!(message.contains(why), "{body}: {message}");
        assert!(!message.contains(PASSWORD), "{message}");
    }
    s.put("/api/v1/sessions/b/proxy", json!({ "uri": "socks5://h:1" }))
        .await
        .expect_error(400, "invalid_field");
    s.put("/api/v1/sessions/b/proxy", json!({ "url": 5 }))
        .await
        .expect_error(400, "invalid_field");
    s.put("/api/v1/sessions/nope/proxy", json!({ "url": "none" }))
        .await
        .expect_error(404, "session_not_found");
    s.post(
        "/api/v1/sessions",
        json!({ "id": "x", "proxy": { "url": "gopher://h:70" } }),
    )
    .await
    .expect_error(400, "invalid_field");
    let listed = s.get("/api/v1/sessions").await.expect(200);
    assert!(
        !listed.to_string().contains("\"x\""),
        "a refused create makes no session: {listed}"
    );
}
